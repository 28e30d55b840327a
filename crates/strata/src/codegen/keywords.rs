//! Names in the generated C: the words reserved in C, OpenCL C and CUDA C++ (one list for
//! both dialects, so that a kernel's names are the same in each), how the writer turns the
//! IR's names (kernels, parameters, arrays, values, struct fields) into identifiers that
//! clash with none of them nor with the names the writer generates itself, and [`Names`],
//! which gives out every identifier of one kernel once.

use crate::ir;
use std::collections::HashSet;

/// Words no generated identifier may be: C's keywords, OpenCL C's types and qualifiers, C++'s
/// keywords, the CUDA preamble's type names and CUDA's built-in variables.
const RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "half",
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "read_only",
    "write_only",
    "barrier",
    "class",
    "template",
    "new",
    "delete",
    "this",
    "true",
    "false",
    "namespace",
    "using",
    "operator",
    "public",
    "protected",
    "virtual",
    "friend",
    "typename",
    "explicit",
    "mutable",
    "asm",
    "nullptr",
    "constexpr",
    "decltype",
    "noexcept",
    "and",
    "or",
    "not",
    "xor",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

/// The identifiers declared in one kernel, each given out once, so that no two are the same
/// by construction: the writer claims here the name of every parameter (with its `_len`),
/// array, struct, value and temporary (with their components `_0`, `_1`, ...) before it
/// writes the kernel. A claim gets the name asked for where it and its derived names are
/// free (a kernel whose names do not clash keeps them), else the first free of `name_1`,
/// `name_2`, ... (Names of the writer's own, `strata_...`, are outside the space that
/// [`ident`] gives out, and not claimed.)
#[derive(Default)]
pub(super) struct Names {
    taken: HashSet<String>,
}

impl Names {
    /// Claims `base`, or the first of `base_1`, `base_2`, ... that is free together with the
    /// names `derived` makes of it; claims those too and returns the name.
    pub(super) fn claim(&mut self, base: String, derived: impl Fn(&str) -> Vec<String>) -> String {
        let mut name = base.clone();
        let mut k = 1;
        loop {
            let more = derived(&name);
            if !self.taken.contains(&name) && more.iter().all(|d| !self.taken.contains(d)) {
                self.taken.insert(name.clone());
                self.taken.extend(more);
                return name;
            }
            name = format!("{base}_{k}");
            k += 1;
        }
    }
}

/// The names of the components of a value of `width` components named `name`: `name_0`,
/// `name_1`, ... for a vector, none for a scalar (which is `name` itself).
pub(super) fn components(width: u8) -> impl Fn(&str) -> Vec<String> {
    move |name| match width {
        1 => Vec::new(),
        w => (0..w).map(|c| format!("{name}_{c}")).collect(),
    }
}

/// A struct field's name in C: the Rust name unless it is reserved in C or in the dialects
/// (then with a trailing `_`). Field names live in their struct's scope, so no other name can
/// clash with them.
pub(super) fn field_ident(name: &str) -> String {
    if RESERVED.contains(&name) || name.starts_with("__") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// An identifier for the IR name `name`: its characters outside `[A-Za-z0-9_]` replaced by
/// `_`, with a trailing `_` where it is reserved, starts like a built-in or a name of strata's
/// own (`get_`, `strata_`, `__`), or has the shape of a name the writer generates.
pub(super) fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    // Names the writer generates itself: temporaries `eN`, values `vN` and `name_N`, buffer
    // lengths `name_len`. A user name of that shape gets a trailing `_`.
    let generated_shape = {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        (s.starts_with('e') || s.starts_with('v')) && digits(&s[1..])
            || s.rsplit_once('_').is_some_and(|(_, t)| digits(t))
            || s.ends_with("_len")
    };
    if generated_shape
        || RESERVED.contains(&s.as_str())
        || s.starts_with("get_")
        || s.starts_with("strata_")
        || s.starts_with("__")
    {
        s.push('_');
    }
    s
}

/// The entry-point name for a kernel: its name, unless that is a built-in function or a
/// reserved word of the target, in which case `_kernel` is appended.
pub(super) fn entry_name(name: &str) -> String {
    const BUILTINS: &[&str] = &[
        "select",
        "bitselect",
        "fabs",
        "fmin",
        "fmax",
        "fdim",
        "fract",
        "modf",
        "frexp",
        "ldexp",
        "ilogb",
        "logb",
        "nan",
        "nextafter",
        "remainder",
        "remquo",
        "rint",
        "rootn",
        "sincos",
        "tgamma",
        "lgamma",
        "erf",
        "erfc",
        "maxmag",
        "minmag",
        "step",
        "smoothstep",
        "any",
        "all",
        "abs",
        "abs_diff",
        "min",
        "max",
        "clamp",
        "dot",
        "cross",
        "length",
        "mad",
        "mad24",
        "mul24",
        "mad_hi",
        "mad_sat",
        "upsample",
        "ctz",
        "printf",
        "shuffle",
        "shuffle2",
        "prefetch",
        "mem_fence",
        "read_mem_fence",
        "write_mem_fence",
        "wait_group_events",
        "async_work_group_copy",
        "async_work_group_strided_copy",
        "isequal",
        "isnotequal",
        "isgreater",
        "isgreaterequal",
        "isless",
        "islessequal",
        "islessgreater",
        "isnormal",
        "isordered",
        "isunordered",
        "main",
    ];
    const PREFIXES: &[&str] = &[
        "atomic_",
        "atom_",
        "convert_",
        "as_",
        "native_",
        "half_",
        "vload",
        "vstore",
        "work_group_",
        "sub_group_",
        "fast_",
        "__",
    ];
    let builtin = ir::MathFn::ALL.iter().any(|m| m.name() == name)
        || BUILTINS.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p));
    if builtin || RESERVED.contains(&name) {
        format!("{name}_kernel")
    } else {
        ident(name)
    }
}
