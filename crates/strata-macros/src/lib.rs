//! `#[kernel]`: GPU kernels for [strata](https://docs.rs/strata) written as plain Rust
//! functions. Use it through `strata::kernel` (also in `strata::prelude`).
//!
//! The attribute rewrites the function into calls of strata's tracing builder (the same calls a
//! kernel written with `Kernel::build` makes, so both styles give identical IR), and generates a
//! typed launch API next to it:
//!
//! ```ignore
//! use strata::prelude::*;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_id(0);
//!     if i < x.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! let k = saxpy::build()?;                         // -> SaxpyKernel
//! k.launch(&queue, NdRange::new(n), 2.0, &x, &y)?; // a: f32, x: &Buffer<f32>, y: &Buffer<f32>
//! ```
//!
//! # What is generated
//!
//! For `#[kernel] fn name<G..>(params..)` without a return value:
//!
//! - the function itself, with device parameter types (`a: f32` becomes `Expr<f32>`, `&[T]` and
//!   `&mut [T]` become `BufferParam<T>`), callable from other `#[kernel]` functions (it is
//!   inlined into them);
//! - `struct name<G..> {}` (a type, so `name::build(..)` and `name::<f64>::build(..)` resolve to
//!   it while `name(..)` still calls the function) with `name::NAME` and
//!   `name::build(stage and callable params..) -> strata::Result<NameKernel<G..>>`;
//! - `struct NameKernel<G..>` with `launch(&queue, range, launch params..) -> Result<Run>`,
//!   `enqueue(&queue, range, launch params.., wait)` and `kernel() -> &Kernel` (the order of
//!   the untyped `Kernel::launch(&queue, range, args)` and `Kernel::enqueue(&queue, range,
//!   args, wait)`). A launch
//!   parameter is `T` for a scalar `a: T`, `&Buffer<T>` for `&[T]` and `&mut [T]`, and
//!   `LocalMem<T>` for `#[local] &mut [T]`; a wrong type or count is a compile error.
//! - with named gathers (`let total = gather_add::<u32>(v);` or `let total:
//!   GatherHandle<u32> = gather_add(v);`, also `gather_min`, `gather_max`, `gather_with`, at
//!   the top level of the body): `launch` and `enqueue` return `NameRun<G..>` instead of `Run`,
//!   with `pub run: Run` and one `pub total: Gathered<u32>` per name (derefs to the `Run`, so
//!   `run.gather::<T>(index)` still reads any gather by position). The function then returns
//!   the gathers' `GatherHandle`s. A named gather without its type, inside an `if`, a loop or
//!   a block, or named twice is a compile error.
//!
//! Parameters: `x: T` (a scalar passed at launch), `x: &[T]` (read-only buffer), `x: &mut [T]`
//! (read-write buffer), `#[write] x: &mut [T]` (write-only buffer), `#[local] x: &mut [T]`
//! (local memory sized at launch), `#[stage] n: T` (a host value given to `build`: a
//! compile-time constant; each distinct value is a distinct kernel, compiled once per device),
//! and `f: impl Fn(T) -> U` or `f: F` with `F: Fn(T) -> U` (a callable given to `build` and
//! inlined: a closure over `Expr`s or another `#[kernel]` function).
//! 2-D and 3-D buffers: `img: &Buffer2<T>` / `&Buffer3<T>` (read-only), `&mut` (read-write,
//! `#[write]` for write-only), `BufferParam2<T>` / `BufferParam3<T>` in the body, indexed by
//! coordinates row first (`img[(y, x)]`, `vol[(z, y, x)]`); the launch parameter is
//! `&Buffer2<T>` / `&Buffer3<T>`.
//!
//! A function with a return value (`fn sq(x: f32) -> f32`) is a device function only: it has no
//! launch API and is inlined where it is called. `#[kernel(device)]` makes any function a device
//! function only; `#[kernel(name = "other")]` sets the kernel's name in the IR.
//!
//! # Host and device values
//!
//! The body runs once, at build time. A value is a **host** (staged) value when it is a
//! literal, a constant, a `#[stage]` parameter, the counter of a host loop, or a `let` whose
//! initializer uses only host values; it stays ordinary Rust and is a constant of the kernel.
//! Every other value is a **device** value: parameters, built-ins (`global_id(0)`), buffer and
//! array reads, results of device functions and callables, and anything computed from them.
//!
//! - `if c` / `while c` on a device `c` record a device `if_` / `while_`; on a host `c` they are
//!   ordinary Rust (the branch not taken is not in the kernel).
//! - `for i in a..b` and `for i in (a..b).step_by(s)` record a device loop when a bound or step
//!   is a device value, and are ordinary (unrolled) Rust loops otherwise. `loop` is always a
//!   device loop.
//! - `let mut x = init` is a host variable when `init` is a host value and every assignment to
//!   `x` assigns host values outside of device control flow; otherwise it is a device (private)
//!   variable. `#[device] let mut` and `#[host] let mut` force either. A device variable is
//!   named after its binding in the IR; `let mut x = var(init);` declares one named `v`, like
//!   the builder's `var(init)`.
//!
//! So where a loop runs follows from its bounds or condition, decided for the whole body
//! (the translation is repeated until no more `let mut` variables become device variables):
//!
//! | loop | runs on the host (unrolled at build) | runs on the device (`for'`/`loop'` in the IR) |
//! |---|---|---|
//! | `for k in a..b` | `a`, `b` (and the step) are host values | a bound or the step is a device value |
//! | `while c` | `c` uses host values only, e.g. a `let mut` that only host values are assigned to outside device control flow | `c` uses a device value, e.g. a `let mut` assigned a device value or assigned inside a device `if` or loop |
//! | `loop` | never | always |
//!
//! `#[host]` or `#[device]` on a `for`, `while` or `loop` states where it runs; a loop that
//! runs elsewhere is a compile error naming the bound or condition that decides. (A device
//! `for` with literal bounds can still be unrolled later by the IR optimizer.)
//!
//! A *typed* host value (a constant or other item from outside the kernel, `u32::MAX`, a
//! suffixed literal, a `#[stage]` parameter, a cast, a `let` with a type or initialized from
//! those) used beside a device value in an operator (`i * W`), a comparison (`i < W`, either
//! side), a device `for` bound (`for k in i..W`) or an assignment to a device variable or a
//! memory element (`acc += W`, `y[i] = W`) converts to the device value's type when
//! its value fits: integers to any integer type whose range holds the value and to floats
//! that hold it exactly, `f32` to `f64` (`strata::__macro_support::Staged`). A value that
//! does not fit fails `build` with an error naming it, both types and the line; types that
//! never convert (`f64` beside `f32`) are a compile error saying to write `as`. Untyped host
//! values (`2`, `let k = 4;`) take the device value's type by Rust's inference, as before.
//! - `let mut a = [v; N]` is a private array; `let t = local_array::<f32>(N)` local memory;
//!   `let p = private_array::<f32>(N)` a private array left uninitialized.
//! - `if` as a value becomes `select` when both arms are pure expressions (no memory access), and
//!   a private variable assigned by each arm otherwise.
//! - Comparisons and `&&` / `||` on device values become `lt`, `eq`, `and`, ... (both sides of
//!   `&&` are evaluated); `x as T` becomes `x.cast::<T>()`; `x[i]` becomes `x.at(i)`, `x[i] = v`
//!   `x.set(i, v)`.
//! - `break` and `continue` (with labels) leave device loops with `break_()` / `continue_()`;
//!   leaving a host loop from inside device control flow is a compile error. `return;` ends the
//!   work-item.
//!
//! Built-ins keep their builder names: `global_id(d)`, `local_id(d)`, `group_id(d)`,
//! `global_size(d)`, `local_size(d)`, `num_groups(d)`, `local_linear_id()`,
//! `group_linear_id()`, `barrier()`, `barrier_local()`, `barrier_global()`, `mem_fence()`,
//! `fence(order, scope)`,
//! `group_reduce_add(v)` and the other collectives, the sub-group ids (`sub_group_size()`,
//! `max_sub_group_size()`, `num_sub_groups()`, `sub_group_id()`, `sub_group_local_id()`) and
//! collectives (`sub_group_reduce_add(v)`, `sub_group_shuffle_xor(v, m)`,
//! `sub_group_ballot(p)`, ...), `select(c, a, b)`, `vec2..vec4`, `splat`,
//! `gather_add(v)` / `gather_min` / `gather_max`, and methods on values and buffers
//! (`x.sqrt()`, `x.min(y)`, `buf.len()`, `buf.atomic_add(i, v)`, ...).
//!
//! Rust that cannot run on a device is rejected with an error at its span that says what to
//! write instead: `match`, `if let`, trait objects, heap allocation, recursion, references,
//! panics (`panic!`, `unwrap`, `assert!`), string formatting, `?`, `unsafe`, `async`, nested
//! functions and struct expressions.

#![warn(missing_docs)]

mod body;
mod element;
mod sig;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use std::collections::HashSet;
use syn::{Error, ItemFn, ReturnType};

/// Makes a `#[repr(C)]` struct of scalars, vectors (`[f32; 3]`), fixed arrays and other such
/// structs a buffer element (`Buffer<Particle>`, `&[Particle]` in a kernel); see
/// `strata::builder::Element`. It implements `Element`, `bytemuck::Pod` and
/// `bytemuck::Zeroable` (do not derive those too), and generates `{Name}Dev` (the struct inside
/// a kernel: its fields as device values) and `{Name}Place` (an element of a buffer of the
/// struct: its fields as places to load and store). Compile errors explain what is not
/// allowed: generic, packed or non-`repr(C)` structs, references, padding bytes.
#[proc_macro_derive(Element)]
pub fn derive_element(item: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(item).and_then(element::expand) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turns a plain Rust function into a strata kernel (and device function); see the crate
/// documentation for the rules and for what is generated.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut name: Option<String> = None;
    let mut device_only = false;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            let lit: syn::LitStr = meta.value()?.parse()?;
            name = Some(lit.value());
            Ok(())
        } else if meta.path.is_ident("device") {
            device_only = true;
            Ok(())
        } else {
            Err(meta.error("`#[kernel]` takes `name = \"..\"` and `device`"))
        }
    });
    if let Err(e) = syn::parse::Parser::parse(parser, attr) {
        return e.to_compile_error().into();
    }
    let f = match syn::parse::<ItemFn>(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error().into(),
    };
    match expand(f, name, device_only) {
        Ok(t) => t.into(),
        Err(errors) => {
            let mut out = TokenStream2::new();
            for e in errors {
                out.extend(e.to_compile_error());
            }
            out.into()
        }
    }
}

fn expand(f: ItemFn, name: Option<String>, device_only: bool) -> Result<TokenStream2, Vec<Error>> {
    let mut errors = Vec::new();
    let sig = &f.sig;
    if let Some(a) = &sig.asyncness {
        errors.push(Error::new_spanned(a, "kernels cannot be `async`"));
    }
    if let Some(c) = &sig.constness {
        errors.push(Error::new_spanned(c, "kernels cannot be `const`"));
    }
    if let Some(a) = &sig.abi {
        errors.push(Error::new_spanned(a, "kernels cannot have an ABI"));
    }
    if let Some(v) = &sig.variadic {
        errors.push(Error::new_spanned(v, "kernels cannot be variadic"));
    }
    let callables = sig::callable_generics(sig);
    let mut new_sig = sig.clone();
    let params = match sig::params(&mut new_sig, &callables) {
        Ok(p) => p,
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    };
    let returns_value = match &sig.output {
        ReturnType::Default => false,
        ReturnType::Type(_, t) => !matches!(&**t, syn::Type::Tuple(tt) if tt.elems.is_empty()),
    };
    let mut ret_elem = None;
    if let ReturnType::Type(arrow, t) = &sig.output {
        if returns_value {
            match sig::dev_ty(t) {
                Ok(dt) => {
                    if matches!(&**t, syn::Type::Path(_) | syn::Type::Array(_))
                        && !sig::is_expr_type(t)
                    {
                        ret_elem = Some((**t).clone());
                    }
                    new_sig.output = ReturnType::Type(*arrow, Box::new(dt));
                }
                Err(e) => errors.push(e),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Translate the body, demoting `let mut` variables to device variables until stable.
    let fn_name = sig.ident.to_string();
    let mut demoted = HashSet::new();
    let launches = !returns_value && !device_only;
    let (body, cx_errors, gathers) = loop {
        let mut cx = body::Cx::new(fn_name.clone(), demoted.clone());
        let mut prologue = TokenStream2::new();
        for p in &params {
            let id = &p.ident;
            let kind = match p.kind {
                sig::ParamKind::Stage if p.mutable => body::Kind::HostMut,
                sig::ParamKind::Stage => body::Kind::Host,
                sig::ParamKind::Callable => body::Kind::Callable,
                sig::ParamKind::Scalar if p.mutable => {
                    let name = id.to_string();
                    prologue.extend(quote!(let #id = ::strata::__macro_support::var(#name, #id);));
                    body::Kind::Var
                }
                _ => body::Kind::Dev,
            };
            if matches!(kind, body::Kind::Host | body::Kind::HostMut) {
                // A `#[stage]` parameter's type is written in the signature.
                cx.bind_typed(&id.to_string(), kind);
            } else {
                cx.bind(&id.to_string(), kind);
            }
        }
        let b = if launches {
            cx.kernel_block(&f.block)
        } else {
            cx.block(&f.block, returns_value)
        };
        if cx.found.is_subset(&cx.demoted) || cx.demoted.len() > 64 {
            break (quote!({ #prologue #b }), cx.errors, cx.gathers);
        }
        demoted.extend(cx.found);
    };
    if !cx_errors.is_empty() {
        return Err(cx_errors);
    }
    let body = match ret_elem {
        Some(t) => {
            quote!({ let __strata_r = #body; ::strata::__macro_support::dev::<#t>(__strata_r) })
        }
        None => body,
    };

    if launches && !gathers.is_empty() {
        // The kernel function returns its named gathers' handles (to `build`).
        let tys = gathers.iter().map(|(_, t)| t);
        new_sig.output = syn::parse_quote!(-> (#(::strata::builder::GatherHandle<#tys>,)*));
    }
    let attrs = &f.attrs;
    let vis = &f.vis;
    let launch = if returns_value || device_only {
        quote!()
    } else {
        let kernel_name = name.unwrap_or_else(|| fn_name.trim_start_matches("r#").to_string());
        sig::launch_api(vis, &new_sig, &params, &kernel_name, &gathers)
    };
    Ok(quote! {
        #(#attrs)*
        #[allow(unused_parens, unused_braces, unused_mut, unused_variables, clippy::all)]
        #vis #new_sig #body

        #launch
    })
}
