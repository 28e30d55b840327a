//! Names a kernel body uses without binding them: the built-ins (called by their builder names
//! or through `strata::__macro_support`), and the macros, heap types and items kernels reject,
//! with the messages that say what to write instead.

use super::{err, Cx};
use proc_macro2::TokenStream;
use quote::ToTokens;

/// Built-in functions, called by their builder names.
pub(super) const BUILTINS: &[&str] = &[
    "global_id",
    "global_id2",
    "global_id3",
    "in_bounds",
    "local_id",
    "group_id",
    "global_size",
    "local_size",
    "num_groups",
    "local_linear_id",
    "group_linear_id",
    "barrier",
    "barrier_local",
    "barrier_global",
    "mem_fence",
    "fence",
    "group_reduce_add",
    "group_reduce_min",
    "group_reduce_max",
    "group_reduce_with",
    "group_scan_inclusive_add",
    "group_scan_exclusive_add",
    "group_scan_inclusive_min",
    "group_scan_inclusive_max",
    "group_scan_exclusive_min",
    "group_scan_exclusive_max",
    "group_broadcast",
    "group_any",
    "group_all",
    "sub_group_size",
    "max_sub_group_size",
    "num_sub_groups",
    "sub_group_id",
    "sub_group_local_id",
    "sub_group_reduce_add",
    "sub_group_reduce_min",
    "sub_group_reduce_max",
    "sub_group_scan_inclusive_add",
    "sub_group_scan_inclusive_min",
    "sub_group_scan_inclusive_max",
    "sub_group_scan_exclusive_add",
    "sub_group_scan_exclusive_min",
    "sub_group_scan_exclusive_max",
    "sub_group_broadcast",
    "sub_group_shuffle",
    "sub_group_shuffle_xor",
    "sub_group_shuffle_up",
    "sub_group_shuffle_down",
    "sub_group_ballot",
    "sub_group_any",
    "sub_group_all",
    "splat",
    "vec2",
    "vec3",
    "vec4",
    "lit",
];

/// Built-ins that take the name of the `let` they are bound to.
pub(super) const NAMED_BUILTINS: &[&str] = &["local_array", "private_array"];
/// Built-ins implemented in `strata::__macro_support`.
pub(super) const SUPPORT_BUILTINS: &[&str] = &[
    "select",
    "gather_add",
    "gather_min",
    "gather_max",
    "gather_with",
];

const PANIC_MACROS: &[&str] = &[
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
];
const FORMAT_MACROS: &[&str] = &[
    "format",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "dbg",
    "format_args",
];
pub(super) const HEAP_TYPES: &[&str] = &[
    "Box", "Vec", "String", "Rc", "Arc", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "VecDeque",
];

pub(super) const PANIC_MSG: &str = "kernels cannot panic: there is no unwinding on a device. Check the condition with `if` and write an error code to a buffer instead (out-of-bounds accesses are already reported by the CPU backend)";
pub(super) const FORMAT_MSG: &str = "string formatting is not available on a device; write the values to a buffer and format them on the host";
pub(super) const HEAP_MSG: &str = "heap allocation is not available in kernels; use a private array (`let mut a = [0.0f32; 8];`), local memory (`let tile = local_array::<f32>(256);`) or a buffer parameter";

impl Cx {
    pub(super) fn item(&mut self, item: &syn::Item) -> TokenStream {
        match item {
            syn::Item::Const(_) | syn::Item::Use(_) => item.to_token_stream(),
            syn::Item::Fn(f) => self.error(err(
                &f.sig,
                "nested functions are not supported in kernels; mark the function `#[kernel]` outside this one and call it (it is inlined)",
            )),
            other => self.error(err(
                other,
                "items inside kernels are limited to `const` and `use`; move this item out of the kernel",
            )),
        }
    }

    pub(super) fn mac(&mut self, m: &syn::Macro) -> TokenStream {
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let msg = if PANIC_MACROS.contains(&name.as_str()) {
            PANIC_MSG
        } else if FORMAT_MACROS.contains(&name.as_str()) {
            FORMAT_MSG
        } else if name == "vec" {
            HEAP_MSG
        } else {
            "macros are not expanded inside `#[kernel]` functions; write the code they would produce, or compute the value on the host and pass it as a `#[stage]` parameter"
        };
        self.error(err(m, msg))
    }
}
