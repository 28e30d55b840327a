//! `#[kernel]` and `#[derive(Element)]`: the procedural macros of
//! [strata](https://docs.rs/strata), used through `strata::kernel` and `strata::Element`
//! (both in `strata::prelude`). Their rules, with examples, are documented there: the page of
//! `strata::kernel` (whose examples run as strata's doc tests) and of `strata::Element`.
//!
//! `#[kernel]` rewrites a function into calls of strata's tracing builder (the same calls a
//! kernel written with `Kernel::build` makes, so both styles give identical IR), and generates
//! a typed launch API next to it; how the body is translated is described in the `body`
//! module, the generated launch API in the `sig` module.

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

/// (The attribute is defined in the `strata-macros` crate, which strata re-exports.)
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
