//! The SPIR-V part of the golden files: the disassembly (`spirv-dis`) of every kernel's
//! SPIR-V module for the Vulkan 1.2 baseline target, compared with
//! `tests/golden/spirv/*.spvasm`, and every module validated by `spirv-val` for that target's
//! environment (a validation failure fails the test). Kernels the writer cannot express for
//! the baseline are listed with their reason in `tests/golden/spirv/unsupported.txt`, so
//! that the count is visible in review and cannot grow silently. The checked variants of
//! the planted-bug and matmul kernels are in `tests/golden/spirv-checked/`. `STRATA_BLESS=1` rewrites
//! the files like the C dialects'.
//!
//! The SPIRV-Tools (`spirv-val`, `spirv-dis`, Debian's `spirv-tools`) missing is a failure
//! when `STRATA_REQUIRE` names `vulkan`, and skips the test otherwise.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use strata::codegen::spirv::{self, SpirvTarget};
use strata::ir::ValidFunction;

fn tool(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `tool` on the module's bytes (through a file: the tools read a path), returning
/// its standard output or its complaint.
fn run_tool(
    tool: &str,
    args: &[&str],
    bytes: &[u8],
    dir: &Path,
    name: &str,
) -> Result<String, String> {
    let path = dir.join(format!("{name}.spv"));
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(tool)
        .args(args)
        .arg(&path)
        .output()
        .map_err(|e| format!("{tool}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn tools_present() -> bool {
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "vulkan"));
    if !(tool("spirv-val") && tool("spirv-dis")) {
        assert!(
            !required,
            "STRATA_REQUIRE names vulkan, but spirv-val or spirv-dis (spirv-tools) is missing"
        );
        eprintln!("skipped: spirv-val or spirv-dis (spirv-tools) is missing");
        return false;
    }
    true
}

#[test]
fn spirv_golden_files() {
    if !tools_present() {
        return;
    }
    let kernels = super::all_kernels();
    assert!(
        kernels.len() > 100,
        "expected the conformance suite's kernels"
    );
    let functions: BTreeMap<String, Arc<ValidFunction>> = kernels
        .iter()
        .map(|(n, k)| (n.clone(), Arc::new(k.valid_function().clone())))
        .collect();
    spirv_golden(&functions, "spirv");
}

/// The checked variants of `checked_kernels` (planted bugs and tiled matrix products), as
/// for the C dialects, in `tests/golden/spirv-checked/`.
#[test]
fn spirv_checked_golden_files() {
    if !tools_present() {
        return;
    }
    let functions: BTreeMap<String, Arc<ValidFunction>> = super::checked_kernels()
        .iter()
        .map(|(n, k)| (n.clone(), k.checked_function().expect("checked variant")))
        .collect();
    assert!(functions.len() >= 12, "expected the planted bugs");
    spirv_golden(&functions, "spirv-checked");
}

/// The targets the runtime builds for particular drivers (lavapipe's float fixes and relaxed
/// atomics; NVIDIA's `f32` cores in `f64` and the denormal-preserving mode) write every
/// conformance kernel as SPIR-V that `spirv-val` accepts. Their output is not kept as golden
/// files (the baseline's are); the runs on those drivers check the results.
#[test]
fn spirv_driver_targets_validate() {
    if !tools_present() {
        return;
    }
    let base = SpirvTarget::vulkan_1_2_baseline();
    let lavapipe = SpirvTarget {
        llvmpipe_float_fixes: true,
        relaxed_atomic_semantics: true,
        ..base.clone()
    };
    let nvidia = SpirvTarget {
        f32_core_in_f64: true,
        denorm_preserve: [true; 3],
        subgroup_size: 32,
        ..base.clone()
    };
    let tmp = std::env::temp_dir().join(format!("strata-spirv-drivers-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut invalid = Vec::new();
    let mut written = 0;
    let mut nvidia_farith = (0, 0, false);
    for (name, k) in super::all_kernels() {
        let f = k.valid_function();
        for (driver, target) in [("lavapipe", &lavapipe), ("nvidia", &nvidia)] {
            match spirv::write(f, target) {
                Ok(m) => {
                    written += 1;
                    let env = target.target_env();
                    let file = format!("{driver}-{name}").replace('/', "_");
                    if let Err(e) =
                        run_tool("spirv-val", &["--target-env", env], &m.bytes(), &tmp, &file)
                    {
                        invalid.push(format!("{driver} {name}: {e}"));
                    }
                    if driver == "nvidia" && name == "farith_f32" {
                        // The f32 quotients are f64 ones there, and subnormals are kept.
                        let text = run_tool("spirv-dis", &["--no-header"], &m.bytes(), &tmp, &file)
                            .unwrap_or_default();
                        nvidia_farith = (
                            text.matches("OpFDiv %double").count(),
                            text.matches("OpFDiv %float").count(),
                            text.contains("OpExecutionMode %main DenormPreserve 32"),
                        );
                    }
                }
                Err(strata::Error::Unsupported { .. }) => {}
                Err(e) => panic!("{driver} {name}: {e}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        written > 200,
        "expected the conformance suite's kernels, wrote {written}"
    );
    assert_eq!(
        nvidia_farith,
        (2, 0, true),
        "farith_f32 for NVIDIA: (f64 divisions, f32 divisions, DenormPreserve 32)"
    );
    assert!(
        invalid.is_empty(),
        "{} driver-specific SPIR-V module(s) failed spirv-val:\n{}",
        invalid.len(),
        invalid.join("\n\n")
    );
}

/// Writes, validates and compares (or blesses) the SPIR-V of `functions` in
/// `tests/golden/<dir_name>/`.
fn spirv_golden(functions: &BTreeMap<String, Arc<ValidFunction>>, dir_name: &str) {
    let target = SpirvTarget::vulkan_1_2_baseline();
    let env = target.target_env();
    let dir = super::golden_dir(dir_name);
    let tmp = std::env::temp_dir().join(format!("strata-spirv-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let bless = std::env::var("STRATA_BLESS").is_ok_and(|v| v == "1");
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut unsupported = String::new();
    let mut invalid = Vec::new();
    for (name, f) in functions {
        match spirv::write(f, &target) {
            Ok(m) => {
                if let Err(e) =
                    run_tool("spirv-val", &["--target-env", env], &m.bytes(), &tmp, name)
                {
                    invalid.push(format!("{name}: {e}"));
                }
                match run_tool("spirv-dis", &["--no-header"], &m.bytes(), &tmp, name) {
                    Ok(text) => {
                        // Vulkan's SPIR-V environment leaves these undefined for negative
                        // operands (NVIDIA's driver answered with other signs): never emitted.
                        for undefined in ["OpSRem", "OpSMod"] {
                            if text.contains(undefined) {
                                invalid.push(format!("{name}: uses {undefined}"));
                            }
                        }
                        texts.insert(format!("{name}.spvasm"), text);
                    }
                    Err(e) => invalid.push(format!("{name}: spirv-dis: {e}")),
                }
            }
            Err(strata::Error::Unsupported { reason, .. }) => {
                unsupported.push_str(&format!("{name}: {reason}\n"));
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    texts.insert("unsupported.txt".into(), unsupported);
    let mut mismatches = Vec::new();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()) {
            if !texts.contains_key(&*e.file_name().to_string_lossy()) {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
        for (file, text) in &texts {
            std::fs::write(dir.join(file), text).unwrap();
        }
    } else {
        for (file, text) in &texts {
            match std::fs::read_to_string(dir.join(file)) {
                Ok(old) if &old == text => {}
                Ok(old) => {
                    let line = old
                        .lines()
                        .zip(text.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(old.lines().count().min(text.lines().count()));
                    mismatches.push(format!(
                        "{file} differs from line {}:\n  golden:    {}\n  generated: {}",
                        line + 1,
                        old.lines().nth(line).unwrap_or("<end>"),
                        text.lines().nth(line).unwrap_or("<end>")
                    ));
                }
                Err(_) => mismatches.push(format!("{file} is missing")),
            }
        }
        for e in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
        {
            let n = e.file_name().to_string_lossy().into_owned();
            if !texts.contains_key(&n) {
                mismatches.push(format!("{n} has no kernel any more"));
            }
        }
    }
    assert!(
        invalid.is_empty(),
        "{} SPIR-V module(s) failed spirv-val --target-env {env}:\n{}",
        invalid.len(),
        invalid.join("\n\n")
    );
    assert!(
        mismatches.is_empty(),
        "{} SPIR-V golden file(s) out of date; if the change is intended, run `STRATA_BLESS=1 cargo test --test golden` and review the diff of tests/golden/{}:\n{}",
        mismatches.len(),
        dir_name,
        mismatches.join("\n")
    );
}
