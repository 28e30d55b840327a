//! The library's layers point down: every `crate::` path in a top-level module's sources
//! names only the modules that module may use (the table below, the arrows of
//! docs/ARCHITECTURE.md). A new arrow is a design decision: add it to the table on purpose, and
//! to the map; a cycle is refused outright.
//!
//! The check reads the sources: `crate::name` and `crate::{a, b::c, ..}` paths (outside line
//! comments), where a name the crate root re-exports (`crate::Buffer`) counts as the module it
//! comes from. A file's unit tests (`#[cfg(test)] mod tests`, the file's last item) are not
//! counted: they are not part of the library, and may build kernels with the builder to test a
//! lower layer (`ir::ranges`'s tests do).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("ir", &[]),
    ("settings", &[]),
    ("disk_cache", &[]),
    ("error", &["ir"]),
    ("builder", &["ir"]),
    ("__macro_support", &["builder", "ir"]),
    ("codegen", &["error", "ir", "settings"]),
    ("runtime", &["builder", "error", "ir", "settings"]),
    ("cpu", &["error", "ir", "runtime", "settings"]),
    (
        "opencl",
        &["builder", "codegen", "error", "ir", "runtime", "settings"],
    ),
    (
        "cuda",
        &[
            "codegen",
            "disk_cache",
            "error",
            "ir",
            "runtime",
            "settings",
        ],
    ),
    (
        "vulkan",
        &[
            "codegen",
            "disk_cache",
            "error",
            "ir",
            "runtime",
            "settings",
        ],
    ),
    (
        "registry",
        &["cpu", "cuda", "error", "opencl", "runtime", "vulkan"],
    ),
    (
        "patterns",
        &["builder", "error", "ir", "runtime", "settings"],
    ),
    ("blas", &["builder", "error", "ir", "runtime"]),
    ("random", &["builder"]),
    ("fields", &["builder", "error", "ir", "patterns", "runtime"]),
    ("host_interop", &["builder", "error", "fields", "runtime"]),
    (
        "multi",
        &["builder", "error", "ir", "patterns", "registry", "runtime"],
    ),
];

/// The modules `crate::prelude` re-exports from.
const PRELUDE: &[&str] = &["builder", "ir", "runtime"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files under `path` (or `path.rs` itself).
fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The source without line comments (doc comments name modules in links, which are not uses)
/// and without its unit tests (`#[cfg(test)]` followed by `mod tests`, the file's last item).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of every `crate::` path in `text`.
fn crate_paths(text: &str) -> BTreeSet<String> {
    segments_after(text, "crate::")
}

/// The first segment after every `prefix` (a path ending in `::`) in `text`, where `prefix`
/// is not the tail of a longer identifier; in a group `prefix{a, b::c}`, each item's first.
fn segments_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        // `$crate::` in macros and `strata_crate::` are not paths of this crate's root.
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if matches!(before, Some(c) if c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // A group: the first segment of each top-level item.
            let mut depth = 1;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if item_start && depth == 1 && (c.is_alphanumeric() || c == '_') => {
                        out.insert(ident_at(&group[j..]).to_string());
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident_at(rest).to_string());
        }
    }
    out
}

/// Names the crate root re-exports from one of `modules` (`pub use runtime::{Buffer, ..};`):
/// name -> module.
fn root_exports(lib: &str, modules: &BTreeSet<&str>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = lib;
    while let Some(i) = rest.find("pub use ") {
        rest = &rest[i + "pub use ".len()..];
        let module = ident_at(rest).to_string();
        let end = rest.find(';').unwrap_or(rest.len());
        let body = &rest[module.len()..end];
        if !modules.contains(module.as_str()) {
            continue;
        }
        for name in body
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|n| !n.is_empty())
        {
            out.insert(name.to_string(), module.clone());
        }
    }
    out
}

#[test]
fn dependencies_between_top_level_modules_point_down() {
    let root = src();
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(m, uses)| (*m, uses.iter().copied().collect()))
        .collect();
    let exports = root_exports(&code(&lib), &allowed.keys().copied().collect());
    let mut found_modules = BTreeSet::new();
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" {
            continue;
        }
        // `macro_support.rs` is mounted as `__macro_support`.
        let module = if name == "macro_support" {
            "__macro_support".to_string()
        } else {
            name
        };
        found_modules.insert(module.clone());
        let Some(uses) = allowed.get(module.as_str()) else {
            wrong.push(format!(
                "module `{module}` is not in this test's table: add it with the modules it may use"
            ));
            continue;
        };
        let mut sources = Vec::new();
        files(&path, &mut sources);
        for file in sources {
            let text = code(&std::fs::read_to_string(&file).unwrap());
            for first in crate_paths(&text) {
                let targets: Vec<String> = if allowed.contains_key(first.as_str()) {
                    vec![first.clone()]
                } else if let Some(m) = exports.get(&first) {
                    vec![m.clone()]
                } else if first == "prelude" {
                    // The prelude re-exports the builder, the runtime and `ir::Access`.
                    PRELUDE.iter().map(|m| m.to_string()).collect()
                } else {
                    // A macro exported at the root (`crate::args!`), or an item of lib.rs.
                    continue;
                };
                for target in targets {
                    if target != module && !uses.contains(target.as_str()) {
                        wrong.push(format!(
                            "{} uses `crate::{first}` (module `{target}`), which `{module}` may not use",
                            file.strip_prefix(&root).unwrap().display()
                        ));
                    }
                }
            }
        }
    }
    for m in allowed.keys() {
        if !found_modules.contains(*m) {
            wrong.push(format!(
                "the table names `{m}`, which is not a module any more"
            ));
        }
    }
    assert!(wrong.is_empty(), "layering:\n  {}", wrong.join("\n  "));
}

/// The builder's crate-private items (`pub(crate) use`/`pub(crate) mod` in builder/mod.rs):
/// the trace and the recording hooks.
fn builder_internals(builder_mod: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in builder_mod.lines().map(str::trim) {
        if let Some(m) = line.strip_prefix("pub(crate) mod ") {
            out.insert(m.trim_end_matches(';').to_string());
        } else if let Some(u) = line.strip_prefix("pub(crate) use ") {
            // `module::{a, b};` or `module::a;`: the names after the module.
            let items = u.split_once("::").map_or(u, |(_, items)| items);
            for name in items
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|n| !n.is_empty() && *n != "self")
            {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// Uses of the builder's crate-private items outside it, each a decision: (file, item).
/// The fields layer reuses a load it recorded only where the IR allows it, which needs the
/// open control-flow blocks (`block_path`); see fields/point.rs.
const BUILDER_INTERNALS_USED: &[(&str, &str)] = &[("fields/point.rs", "block_path")];

/// The runtime, the backends and the layers above use the builder through its public API
/// (the element traits, `Expr`, recording) and the few crate-private items listed above; its
/// trace and hooks are for its own rooms and for the macro's support module.
#[test]
fn only_the_macro_support_names_the_builders_internals() {
    let root = src();
    let internals =
        builder_internals(&std::fs::read_to_string(root.join("builder/mod.rs")).unwrap());
    assert!(
        internals.contains("expr_of") && internals.contains("staged"),
        "the scan of builder/mod.rs found {internals:?}"
    );
    let mut sources = Vec::new();
    files(&root, &mut sources);
    let mut wrong = Vec::new();
    for file in sources {
        let rel = file.strip_prefix(&root).unwrap();
        if rel.starts_with("builder") || rel == Path::new("macro_support.rs") {
            continue;
        }
        let text = code(&std::fs::read_to_string(&file).unwrap());
        for name in segments_after(&text, "builder::") {
            let listed = BUILDER_INTERNALS_USED
                .iter()
                .any(|&(f, item)| Path::new(f) == rel && item == name);
            if internals.contains(&name) && !listed {
                wrong.push(format!("{} uses `builder::{name}`", rel.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "builder internals used outside it:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn the_table_has_no_cycle() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    // Depth-first search from every module; a module met again on the current path is a cycle.
    fn visit<'a>(
        m: &'a str,
        allowed: &BTreeMap<&'a str, &'a [&'a str]>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(m) {
            return;
        }
        assert!(!path.contains(&m), "cycle: {} -> {m}", path.join(" -> "));
        path.push(m);
        for &u in allowed.get(m).copied().unwrap_or(&[]) {
            visit(u, allowed, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in allowed.keys() {
        visit(m, &allowed, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_scanner_finds_paths_and_groups() {
    let text = "use crate::runtime::Device;\nuse crate::{error::Result, ir::{self, Type}};\nlet x = $crate::args!();\n// crate::fields in a comment\n";
    let found = crate_paths(&code(text));
    let want: BTreeSet<String> = ["runtime", "error", "ir"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
    let inner = segments_after(
        "use crate::builder::{self, expr_of};\nbuilder::node(x)",
        "builder::",
    );
    assert!(
        inner.contains("expr_of") && inner.contains("node"),
        "{inner:?}"
    );
}
