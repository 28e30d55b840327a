//! The signature of a `#[kernel]` function: its parameters, their device types, and the typed
//! launch API generated for it.
//!
//! Each parameter is classified ([`ParamKind`]: scalar, buffer of each access (a `Buffer2`
//! or `Buffer3` type makes it 2-D or 3-D), local memory, `#[stage]` value, callable) and its
//! type rewritten to the device type
//! the body sees (`Expr<T>`, `BufferParam<T>`, ...). From the classification come the unit
//! struct `name` with `build`, the `NameKernel` with its typed `launch` and `enqueue` (launch
//! parameters only, in the order of the untyped `Kernel::launch`), and, when the body names
//! gathers, the `NameRun` whose fields are the `Gathered<T>` results ([`gather_run`]).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{
    Error, FnArg, GenericParam, Ident, PathArguments, ReturnType, Signature, Type, TypeParamBound,
};

/// How a parameter is passed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamKind {
    /// A scalar passed at launch: `a: f32` (an `Expr<f32>` in the body).
    Scalar,
    /// `x: &[T]`: a read-only buffer.
    Read,
    /// `#[constant] w: &[T]`: a read-only buffer in the constant address space.
    Constant,
    /// `y: &mut [T]`: a read-write buffer.
    ReadWrite,
    /// `#[write] y: &mut [T]`: a write-only buffer.
    Write,
    /// `#[local] tile: &mut [T]`: local memory sized at launch with `LocalMem<T>`.
    Local,
    /// `#[stage] n: u32`: a host value given to `build`, a compile-time constant.
    Stage,
    /// `f: impl Fn(f32) -> f32` or `f: F` with `F: Fn..`: a callable given to `build`, inlined.
    Callable,
}

/// One parameter of the kernel function.
pub struct Param {
    pub ident: Ident,
    pub mutable: bool,
    pub kind: ParamKind,
    /// The type as written (attributes removed).
    pub ty: Type,
    /// The element type of a buffer or local-memory parameter, or the scalar type.
    pub elem: Option<Type>,
    /// 2 or 3 for a 2-D or 3-D buffer (`&Buffer2<T>`, `&mut Buffer3<T>`), else 0.
    pub dims: u8,
}

/// `Buffer2<T>` or `Buffer3<T>` (any path ending so): the dimensions and `T`.
pub fn pitched_elem(ty: &Type) -> Option<(u8, Type)> {
    let Type::Path(tp) = ty else { return None };
    let seg = tp.path.segments.last()?;
    let dims = match seg.ident.to_string().as_str() {
        "Buffer2" => 2,
        "Buffer3" => 3,
        _ => return None,
    };
    let PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    match a.args.first() {
        Some(syn::GenericArgument::Type(t)) if a.args.len() == 1 => Some((dims, t.clone())),
        _ => None,
    }
}

pub fn is_fn_trait(b: &TypeParamBound) -> bool {
    if let TypeParamBound::Trait(t) = b {
        if let Some(seg) = t.path.segments.last() {
            return seg.ident == "Fn" || seg.ident == "FnMut" || seg.ident == "FnOnce";
        }
    }
    false
}

/// The generic type parameters bounded by `Fn`, `FnMut` or `FnOnce` (in place or in the where
/// clause).
pub fn callable_generics(sig: &Signature) -> Vec<Ident> {
    let mut out = Vec::new();
    for p in &sig.generics.params {
        if let GenericParam::Type(t) = p {
            if t.bounds.iter().any(is_fn_trait) {
                out.push(t.ident.clone());
            }
        }
    }
    if let Some(w) = &sig.generics.where_clause {
        for pred in &w.predicates {
            if let syn::WherePredicate::Type(pt) = pred {
                if pt.bounds.iter().any(is_fn_trait) {
                    if let Type::Path(tp) = &pt.bounded_ty {
                        if let Some(id) = tp.path.get_ident() {
                            out.push(id.clone());
                        }
                    }
                }
            }
        }
    }
    out
}

fn strata() -> TokenStream {
    quote!(::strata)
}

/// Whether a type path may name a `#[derive(Element)]` struct: not a primitive scalar and not
/// a one-letter name (a generic parameter, kept as `Expr<T>` so that its bounds apply).
fn may_be_struct(p: &syn::TypePath) -> bool {
    const PRIMITIVES: &[&str] = &[
        "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "usize",
        "isize", "f16",
    ];
    if p.qself.is_some() {
        return false;
    }
    match p.path.get_ident() {
        Some(id) => {
            let n = id.to_string();
            !PRIMITIVES.contains(&n.as_str()) && n.len() > 1
        }
        None => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.arguments.is_empty() && s.ident != "Expr" && s.ident != "f16"),
    }
}

/// The type a value of host type `ty` has inside the kernel body: scalars and vectors become
/// `Expr<..>`, slices become buffer handles, `Fn` bounds get device argument and result types.
pub fn dev_ty(ty: &Type) -> Result<Type, Error> {
    let s = strata();
    if is_expr_type(ty) {
        return Ok(ty.clone());
    }
    Ok(match ty {
        // A struct passed by value (`p: Particle`): its device form, through the trait that
        // scalars implement too (`Expr<T>`), so a type alias of a scalar also works.
        Type::Path(p) if may_be_struct(p) => {
            syn::parse_quote_spanned!(ty.span()=> <#ty as #s::builder::ByValue>::Dev)
        }
        Type::Path(_) | Type::Array(_) => {
            syn::parse_quote_spanned!(ty.span()=> #s::builder::Expr<#ty>)
        }
        Type::Paren(p) => dev_ty(&p.elem)?,
        Type::Group(g) => dev_ty(&g.elem)?,
        Type::Tuple(t) => {
            let elems = t.elems.iter().map(dev_ty).collect::<Result<Vec<_>, _>>()?;
            if elems.is_empty() {
                ty.clone()
            } else {
                syn::parse_quote_spanned!(ty.span()=> (#(#elems,)*))
            }
        }
        Type::Reference(r) => match &*r.elem {
            Type::Slice(sl) => {
                let e = &sl.elem;
                syn::parse_quote_spanned!(ty.span()=> #s::builder::BufferParam<#e>)
            }
            other => match pitched_elem(other) {
                Some((2, e)) => syn::parse_quote_spanned!(ty.span()=> #s::builder::BufferParam2<#e>),
                Some((_, e)) => syn::parse_quote_spanned!(ty.span()=> #s::builder::BufferParam3<#e>),
                None => return Err(host_reference(ty)),
            },
        },
        Type::ImplTrait(it) => {
            let mut it = it.clone();
            for b in it.bounds.iter_mut() {
                rewrite_fn_bound(b)?;
            }
            Type::ImplTrait(it)
        }
        Type::TraitObject(_) => return Err(trait_object(ty)),
        Type::Ptr(_) => {
            return Err(Error::new_spanned(
                ty,
                "raw pointers are not available in kernels; take a buffer as `&[T]` or `&mut [T]`",
            ))
        }
        _ => {
            return Err(Error::new_spanned(
                ty,
                "this type cannot be used in a kernel; kernel values are scalars (`f32`, `u32`, a generic `T`, ...), vectors (`[f32; 4]`), buffers (`&[T]`, `&mut [T]`) and callables (`impl Fn(f32) -> f32`)",
            ))
        }
    })
}

/// `Expr<..>` written by the user (or an array of them) is already a device type.
pub fn is_expr_type(ty: &Type) -> bool {
    match ty {
        Type::Path(tp) => tp.path.segments.last().is_some_and(|s| s.ident == "Expr"),
        Type::Array(a) => is_expr_type(&a.elem),
        _ => false,
    }
}

pub fn trait_object(ty: &impl ToTokens) -> Error {
    Error::new_spanned(
        ty,
        "trait objects (`dyn Trait`) cannot run on a device: kernels are inlined at build time; take `impl Fn(..) -> ..` or a generic parameter `F: Fn(..) -> ..` instead",
    )
}

pub fn host_reference(ty: &impl ToTokens) -> Error {
    Error::new_spanned(
        ty,
        "references to host data are not available in kernels; pass a scalar by value (`a: f32`), a buffer as `&[T]` (read-only) or `&mut [T]` (read-write), or a build-time value with `#[stage]`",
    )
}

/// Rewrites `Fn(f32) -> f32` into `Fn(Expr<f32>) -> Expr<f32>`.
pub fn rewrite_fn_bound(b: &mut TypeParamBound) -> Result<(), Error> {
    if let TypeParamBound::Trait(t) = b {
        if let Some(seg) = t.path.segments.last_mut() {
            if let PathArguments::Parenthesized(p) = &mut seg.arguments {
                for input in p.inputs.iter_mut() {
                    input.ty = dev_ty(&input.ty)?;
                }
                if let ReturnType::Type(_, out) = &mut p.output {
                    **out = dev_ty(out)?;
                }
            }
        }
    }
    Ok(())
}

fn take_attr(attrs: &mut Vec<syn::Attribute>, name: &str) -> Option<syn::Attribute> {
    let i = attrs.iter().position(|a| a.path().is_ident(name))?;
    Some(attrs.remove(i))
}

/// Classifies the parameters of `sig` (removing the attributes strata understands).
pub fn params(sig: &mut Signature, callables: &[Ident]) -> Result<Vec<Param>, Error> {
    let mut out = Vec::new();
    let mut errors: Option<Error> = None;
    let mut push_err = |e: Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    for arg in sig.inputs.iter_mut() {
        let pt = match arg {
            FnArg::Receiver(r) => {
                push_err(Error::new_spanned(
                    r,
                    "`self` is not available in kernels; kernels are free functions",
                ));
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let stage = take_attr(&mut pt.attrs, "stage").is_some();
        let write = take_attr(&mut pt.attrs, "write");
        let local = take_attr(&mut pt.attrs, "local");
        let constant = take_attr(&mut pt.attrs, "constant");
        if let Some(a) = pt.attrs.first() {
            push_err(Error::new_spanned(
                a,
                "unknown parameter attribute; kernel parameters take `#[stage]`, `#[write]`, `#[local]` or `#[constant]`",
            ));
        }
        let (ident, mutable) = match &*pt.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                (pi.ident.clone(), pi.mutability.is_some())
            }
            other => {
                push_err(Error::new_spanned(
                    other,
                    "kernel parameters must be plain names (`x: f32`); destructure inside the body",
                ));
                continue;
            }
        };
        let ty = (*pt.ty).clone();
        let is_callable = match &ty {
            Type::ImplTrait(it) => it.bounds.iter().any(is_fn_trait),
            Type::Path(tp) => tp.path.get_ident().is_some_and(|i| callables.contains(i)),
            _ => false,
        };
        let mut dims = 0u8;
        let (kind, elem) = if stage {
            if let Some(w) = write.as_ref().or(local.as_ref()) {
                push_err(Error::new_spanned(
                    w,
                    "a `#[stage]` parameter is a host value; it cannot also be a buffer",
                ));
            }
            (ParamKind::Stage, None)
        } else if is_callable {
            (ParamKind::Callable, None)
        } else {
            match &ty {
                Type::Reference(r) => match &*r.elem {
                    Type::Slice(sl) => {
                        let elem = Some((*sl.elem).clone());
                        if r.mutability.is_none() {
                            if let Some(w) = write.as_ref().or(local.as_ref()) {
                                push_err(Error::new_spanned(
                                    w,
                                    "`#[write]` and `#[local]` go on `&mut [T]` parameters",
                                ));
                            }
                            if constant.is_some() {
                                (ParamKind::Constant, elem)
                            } else {
                                (ParamKind::Read, elem)
                            }
                        } else if let Some(c) = constant.as_ref() {
                            push_err(Error::new_spanned(
                                c,
                                "`#[constant]` goes on `&[T]` parameters: constant buffers are read-only",
                            ));
                            (ParamKind::Read, elem)
                        } else if local.is_some() {
                            (ParamKind::Local, elem)
                        } else if write.is_some() {
                            (ParamKind::Write, elem)
                        } else {
                            (ParamKind::ReadWrite, elem)
                        }
                    }
                    Type::TraitObject(_) => {
                        push_err(trait_object(&ty));
                        continue;
                    }
                    other => match pitched_elem(other) {
                        Some((d, e)) => {
                            dims = d;
                            if let Some(a) = local.as_ref().or(constant.as_ref()) {
                                push_err(Error::new_spanned(
                                    a,
                                    "`#[local]` and `#[constant]` go on `&[T]`/`&mut [T]` parameters, not on 2-D or 3-D buffers",
                                ));
                            }
                            if r.mutability.is_none() {
                                if let Some(w) = write.as_ref() {
                                    push_err(Error::new_spanned(
                                        w,
                                        "`#[write]` goes on `&mut Buffer2<T>`/`&mut Buffer3<T>` parameters",
                                    ));
                                }
                                (ParamKind::Read, Some(e))
                            } else if write.is_some() {
                                (ParamKind::Write, Some(e))
                            } else {
                                (ParamKind::ReadWrite, Some(e))
                            }
                        }
                        None => {
                            push_err(host_reference(&ty));
                            continue;
                        }
                    },
                },
                Type::TraitObject(_) => {
                    push_err(trait_object(&ty));
                    continue;
                }
                _ => {
                    if let Some(w) = write.as_ref().or(local.as_ref()) {
                        push_err(Error::new_spanned(
                            w,
                            "`#[write]` and `#[local]` go on `&mut [T]` parameters",
                        ));
                    }
                    (ParamKind::Scalar, Some(ty.clone()))
                }
            }
        };
        // The device type of the parameter inside the generated function.
        let new_ty = match kind {
            ParamKind::Stage => ty.clone(),
            ParamKind::Callable => match dev_ty(&ty) {
                Ok(t) => t,
                Err(e) => {
                    push_err(e);
                    continue;
                }
            },
            ParamKind::Local => {
                let e = elem.clone().expect("local element type");
                syn::parse_quote_spanned!(ty.span()=> ::strata::builder::LocalArray<#e>)
            }
            _ => match dev_ty(&ty) {
                Ok(t) => t,
                Err(e) => {
                    push_err(e);
                    continue;
                }
            },
        };
        *pt.ty = new_ty;
        if mutable {
            // `mut x: f32` becomes a device variable initialised from the parameter.
            if let syn::Pat::Ident(pi) = &mut *pt.pat {
                pi.mutability = None;
            }
        }
        out.push(Param {
            ident,
            mutable,
            kind,
            ty,
            elem,
            dims,
        });
    }
    // Fn bounds on generic parameters take device types too.
    for p in sig.generics.params.iter_mut() {
        if let GenericParam::Type(t) = p {
            for b in t.bounds.iter_mut() {
                if is_fn_trait(b) {
                    if let Err(e) = rewrite_fn_bound(b) {
                        push_err(e);
                    }
                }
            }
        }
    }
    if let Some(w) = &mut sig.generics.where_clause {
        for pred in w.predicates.iter_mut() {
            if let syn::WherePredicate::Type(pt) = pred {
                for b in pt.bounds.iter_mut() {
                    if is_fn_trait(b) {
                        if let Err(e) = rewrite_fn_bound(b) {
                            push_err(e);
                        }
                    }
                }
            }
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// `matmul_tiled` -> `MatmulTiledKernel`.
pub fn kernel_type_name(f: &Ident) -> Ident {
    let mut s = String::new();
    for part in f.to_string().trim_start_matches("r#").split('_') {
        let mut c = part.chars();
        if let Some(first) = c.next() {
            s.extend(first.to_uppercase());
            s.push_str(c.as_str());
        }
    }
    format_ident!("{}Kernel", s, span = f.span())
}

/// The launch API: `struct name<..> {}` with `build`, and `NameKernel<..>` with `launch`.
pub fn launch_api(
    vis: &syn::Visibility,
    sig: &Signature,
    params: &[Param],
    kernel_name: &str,
    gathers: &[(Ident, syn::Type)],
) -> TokenStream {
    let s = strata();
    let f = &sig.ident;
    let kty = kernel_type_name(f);
    let run_items = gather_run(vis, sig, &kty, kernel_name, gathers);
    // The generated function's generics, for the call inside `build` (the Fn bounds of which
    // take device types).
    let type_params: Vec<&Ident> = sig
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            _ => None,
        })
        .collect();
    let marker = quote!(::core::marker::PhantomData<fn() -> (#(#type_params,)*)>);
    let (new_impl_g, new_ty_g, new_where) = sig.generics.split_for_impl();
    let turbofish = new_ty_g.as_turbofish();

    let mut declare = Vec::new();
    let mut call_args = Vec::new();
    let mut build_params = Vec::new();
    let mut call_build = Vec::new();
    let mut launch_params = Vec::new();
    let mut launch_args = Vec::new();
    let mut doc_launch = Vec::new();
    for p in params {
        let id = &p.ident;
        let name = id.to_string();
        let decl_id = format_ident!("__strata_p_{}", id);
        let sp = id.span();
        match p.kind {
            ParamKind::Stage | ParamKind::Callable => {
                let ty = match p.kind {
                    ParamKind::Callable => dev_ty(&p.ty).unwrap_or_else(|_| p.ty.clone()),
                    _ => p.ty.clone(),
                };
                build_params.push(quote_spanned!(sp=> #id: #ty));
                call_build.push(quote!(#id));
                call_args.push(quote!(#id));
                continue;
            }
            _ => {}
        }
        let elem = p.elem.as_ref().expect("element type");
        let pitched = match (p.dims, p.kind) {
            (2 | 3, ParamKind::Read | ParamKind::Write | ParamKind::ReadWrite) => {
                let method = format_ident!(
                    "{}{}",
                    match p.kind {
                        ParamKind::Read => "read",
                        ParamKind::Write => "write",
                        _ => "read_write",
                    },
                    p.dims
                );
                let bty = format_ident!("Buffer{}", p.dims);
                Some((
                    quote_spanned!(elem.span()=> __strata_k.#method::<#elem>(#name)),
                    quote!(&#s::#bty<#elem>),
                ))
            }
            _ => None,
        };
        let (decl, lty) = match p.kind {
            _ if pitched.is_some() => pitched.expect("pitched"),
            ParamKind::Scalar => (
                quote_spanned!(elem.span()=> <#elem as #s::builder::ByValue>::declare(#name)),
                quote!(#elem),
            ),
            ParamKind::Read => (
                quote_spanned!(elem.span()=> __strata_k.read::<#elem>(#name)),
                quote!(&#s::Buffer<#elem>),
            ),
            ParamKind::Constant => (
                quote_spanned!(elem.span()=> __strata_k.constant::<#elem>(#name)),
                quote!(&#s::Buffer<#elem>),
            ),
            ParamKind::ReadWrite => (
                quote_spanned!(elem.span()=> __strata_k.read_write::<#elem>(#name)),
                quote!(&#s::Buffer<#elem>),
            ),
            ParamKind::Write => (
                quote_spanned!(elem.span()=> __strata_k.write::<#elem>(#name)),
                quote!(&#s::Buffer<#elem>),
            ),
            ParamKind::Local => (
                quote_spanned!(elem.span()=> __strata_k.local_array_dyn::<#elem>(#name)),
                quote!(#s::LocalMem<#elem>),
            ),
            ParamKind::Stage | ParamKind::Callable => unreachable!(),
        };
        declare.push(quote!(let #decl_id = #decl;));
        call_args.push(quote!(#decl_id));
        launch_params.push(quote_spanned!(sp=> #id: #lty));
        launch_args.push(quote!(#s::KernelArg::from(#id)));
        doc_launch.push(format!("`{name}: {}`", lty.to_string().replace(" ", "")));
    }
    let build_doc = format!(
        "Records the kernel `{kernel_name}` (running the body of `{f}` once), validates and optimizes it. Values of the build parameters are compile-time constants: building with the same values gives the same IR, which a device compiles only once. Building compiles for no device: the first launch on a device compiles the kernel for it, unless `compile_on` did before."
    );
    let launch_doc = format!(
        "Launches `{kernel_name}` over `range` with its arguments ({}) and waits for it. The types of the arguments are checked by the Rust compiler; sizes, devices and aliasing at launch.",
        if doc_launch.is_empty() { "none".to_string() } else { doc_launch.join(", ") }
    );
    let struct_doc = format!(
        "The kernel `{kernel_name}` generated by `#[kernel]` from the function `{f}`: [`{f}::build`]({f}::build) records it and returns a [`{kty}`]."
    );
    let kty_doc = format!("The built kernel `{kernel_name}`, with a launch method typed after the parameters of `{f}`.");
    let phantom_init = quote!(::core::marker::PhantomData);
    let GatherRun {
        field: gathers_field,
        clone: gathers_clone,
        run_ty,
        make_run,
        run_struct,
    } = run_items;
    let build_body = if gathers_field.is_empty() {
        quote! {
            let kernel = #s::Kernel::build(name, |__strata_k| {
                #(#declare)*
                let _ = #f #turbofish (#(#call_args),*);
            })?;
            ::core::result::Result::Ok(#kty { kernel, _marker: #phantom_init })
        }
    } else {
        // The kernel function returns its named gathers' handles; `Kernel::build` runs it
        // exactly once when it succeeds.
        quote! {
            let mut __strata_g = ::core::option::Option::None;
            let kernel = #s::Kernel::build(name, |__strata_k| {
                #(#declare)*
                __strata_g = ::core::option::Option::Some(#f #turbofish (#(#call_args),*));
            })?;
            match __strata_g {
                ::core::option::Option::Some(gathers) => ::core::result::Result::Ok(#kty { kernel, gathers, _marker: #phantom_init }),
                ::core::option::Option::None => ::core::result::Result::Err(#s::Error::InvalidKernel(::std::format!("kernel `{}`: its body did not run", name))),
            }
        }
    };
    quote! {
        #[doc = #struct_doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #f #new_impl_g #new_where {
            _marker: #marker,
        }

        #[allow(dead_code)]
        impl #new_impl_g #f #new_ty_g #new_where {
            /// The kernel's name in the IR and in generated code.
            pub const NAME: &'static str = #kernel_name;

            #[doc = #build_doc]
            #[allow(clippy::too_many_arguments)]
            pub fn build(#(#build_params),*) -> #s::Result<#kty #new_ty_g> {
                Self::build_named(#kernel_name, #(#call_build),*)
            }

            /// Like `build`, with another kernel name (a C identifier).
            #[allow(clippy::too_many_arguments)]
            pub fn build_named(name: &str, #(#build_params),*) -> #s::Result<#kty #new_ty_g> {
                #build_body
            }
        }

        #[doc = #kty_doc]
        #[allow(dead_code)]
        #vis struct #kty #new_impl_g #new_where {
            kernel: #s::Kernel,
            #gathers_field
            _marker: #marker,
        }

        #[allow(dead_code)]
        impl #new_impl_g #kty #new_ty_g #new_where {
            #[doc = #launch_doc]
            #[allow(clippy::too_many_arguments)]
            pub fn launch(&self, queue: &#s::Queue, range: #s::NdRange, #(#launch_params),*) -> #s::Result<#run_ty> {
                let run = self.kernel.launch(queue, range, &[#(#launch_args),*])?;
                #make_run
            }

            /// Like `launch`, without waiting: the launch starts after the events of `wait`
            /// (the last argument, as in `Kernel::enqueue` and the queue's `enqueue_` methods).
            #[allow(clippy::too_many_arguments)]
            pub fn enqueue(&self, queue: &#s::Queue, range: #s::NdRange, #(#launch_params,)* wait: &[&#s::Event]) -> #s::Result<#run_ty> {
                let run = self.kernel.enqueue(queue, range, &[#(#launch_args),*], wait)?;
                #make_run
            }

            /// The untyped kernel (its IR, name and signature).
            pub fn kernel(&self) -> &#s::Kernel {
                &self.kernel
            }

            /// Compiles the kernel for `device` (a `Device` or a `Queue`) now rather than in
            /// its first launch there (`Kernel::compile_on`).
            pub fn compile_on(&self, device: impl ::core::convert::AsRef<#s::Device>) -> #s::Result<()> {
                self.kernel.compile_on(device)
            }
        }

        impl #new_impl_g ::core::clone::Clone for #kty #new_ty_g #new_where {
            fn clone(&self) -> Self {
                #kty { kernel: self.kernel.clone(), #gathers_clone _marker: #phantom_init }
            }
        }

        #run_struct
    }
}

/// What the named gathers of a kernel add to its launch API.
struct GatherRun {
    /// The kernel struct's field holding the handles.
    field: TokenStream,
    /// Its clone.
    clone: TokenStream,
    /// The launch's return type.
    run_ty: TokenStream,
    /// The launch's result from `run` (a `Run`).
    make_run: TokenStream,
    /// The run struct, if any.
    run_struct: TokenStream,
}

/// A kernel with named gathers (`let total = gather_add::<u32>(v);`) launches into
/// `NameRun { run, total: Gathered<u32>, .. }`, which derefs to the `Run`; others return the
/// `Run` itself.
fn gather_run(
    vis: &syn::Visibility,
    sig: &Signature,
    kty: &Ident,
    kernel_name: &str,
    gathers: &[(Ident, syn::Type)],
) -> GatherRun {
    let s = strata();
    if gathers.is_empty() {
        return GatherRun {
            field: quote!(),
            clone: quote!(),
            run_ty: quote!(#s::Run),
            make_run: quote!(::core::result::Result::Ok(run)),
            run_struct: quote!(),
        };
    }
    let base = kty.to_string();
    let rty = format_ident!("{}Run", base.trim_end_matches("Kernel"), span = kty.span());
    let type_params: Vec<&Ident> = sig
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            _ => None,
        })
        .collect();
    let marker = quote!(::core::marker::PhantomData<fn() -> (#(#type_params,)*)>);
    let (impl_g, ty_g, where_c) = sig.generics.split_for_impl();
    let names: Vec<&Ident> = gathers.iter().map(|(n, _)| n).collect();
    let tys: Vec<&syn::Type> = gathers.iter().map(|(_, t)| t).collect();
    let idx = (0..gathers.len()).map(syn::Index::from);
    let docs = gathers.iter().map(|(n, t)| {
        format!(
            "The result of the gather `{n}` of this launch (`let {n} = gather_..::<{}>(..);` in the kernel); `get()` waits for the launch and combines it.",
            t.to_token_stream().to_string().replace(' ', "")
        )
    });
    let struct_doc = format!(
        "A launch of `{kernel_name}` (what `{kty}::launch` returns): the `Run` (also through `Deref`) and one typed field per named gather."
    );
    GatherRun {
        field: quote!(gathers: (#(::strata::builder::GatherHandle<#tys>,)*),),
        clone: quote!(gathers: self.gathers,),
        run_ty: quote!(#rty #ty_g),
        make_run: quote! {
            ::core::result::Result::Ok(#rty {
                #(#names: run.gathered(self.gathers.#idx)?,)*
                run,
                _marker: ::core::marker::PhantomData,
            })
        },
        run_struct: quote! {
            #[doc = #struct_doc]
            #[allow(dead_code)]
            #vis struct #rty #impl_g #where_c {
                /// The launch: its event, waiting, cancelling, and its gathers by position.
                pub run: #s::Run,
                #(
                    #[doc = #docs]
                    pub #names: #s::Gathered<#tys>,
                )*
                _marker: #marker,
            }

            impl #impl_g ::core::ops::Deref for #rty #ty_g #where_c {
                type Target = #s::Run;
                fn deref(&self) -> &#s::Run {
                    &self.run
                }
            }
        },
    }
}
