//! `#[derive(Element)]`: a `#[repr(C)]` struct of scalars, vectors, fixed arrays and other such
//! structs as a buffer element.
//!
//! The derive checks that the struct is `#[repr(C)]`, not packed, not generic and holds no
//! references, and asserts in a `const` that it has no padding bytes, so every bit pattern is
//! a value: it then implements `bytemuck::Pod` and `Zeroable` and strata's `Element`, whose
//! layout (size, alignment, each field's offset) is computed by `size_of` and `offset_of!`, so
//! it is Rust's own. A field `[S; 2]`, `[S; 3]` or `[S; 4]` of a scalar `S` is a vector; any
//! other `[E; N]` is a fixed array. It also generates `NameDev`, the struct of device values
//! that a whole-element load gives, and `NamePlace`, the struct of field places of one element
//! of a buffer (`ps[i].vel.x` in a `#[kernel]` body).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, Type};

/// The scalar types a vector field `[S; 2|3|4]` may have.
const SCALARS: &[&str] = &[
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64",
];

/// How a field is declared.
enum FieldKind<'a> {
    /// A scalar, a vector `[S; 2|3|4]` or a struct: one element.
    One(&'a Type),
    /// A fixed array `[E; N]` of elements.
    Array(&'a Type, &'a syn::Expr),
}

fn kind(ty: &Type) -> FieldKind<'_> {
    if let Type::Array(a) = ty {
        let scalar_elem = matches!(&*a.elem, Type::Path(p) if p.qself.is_none()
            && p.path.get_ident().is_some_and(|id| SCALARS.contains(&id.to_string().as_str())));
        let vector_len = matches!(&a.len, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })
            if matches!(n.base10_digits(), "2" | "3" | "4"));
        if !(scalar_elem && vector_len) {
            return FieldKind::Array(&a.elem, &a.len);
        }
    }
    FieldKind::One(ty)
}

pub fn expand(input: DeriveInput) -> Result<TokenStream, Error> {
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(Error::new_spanned(
            &input.generics,
            "`#[derive(Element)]` structs cannot be generic: each is one C struct on the device",
        ));
    }
    let mut repr_c = false;
    for a in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        a.parse_nested_meta(|m| {
            if m.path.is_ident("C") {
                repr_c = true;
            } else if m.path.is_ident("packed") {
                return Err(m.error("`#[derive(Element)]` structs cannot be packed: GPU compilers lay structs out with natural alignment; add explicit padding fields instead"));
            } else if m.path.is_ident("align") {
                let content;
                syn::parenthesized!(content in m.input);
                let _: syn::LitInt = content.parse()?;
            }
            Ok(())
        })?;
    }
    if !repr_c {
        return Err(Error::new_spanned(
            name,
            "`#[derive(Element)]` needs `#[repr(C)]` on the struct: kernels lay it out as C does, and Rust's default layout may reorder fields",
        ));
    }
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => &f.named,
            _ => {
                return Err(Error::new_spanned(
                    name,
                    "`#[derive(Element)]` needs a struct with named fields",
                ))
            }
        },
        _ => {
            return Err(Error::new_spanned(
                name,
                "`#[derive(Element)]` works on structs only (not enums or unions)",
            ))
        }
    };
    if fields.is_empty() {
        return Err(Error::new_spanned(
            name,
            "`#[derive(Element)]` needs at least one field",
        ));
    }
    let vis = &input.vis;
    let dev = format_ident!("{}Dev", name);
    let place = format_ident!("{}Place", name);
    let st = quote!(::strata::builder);
    let mut layouts = Vec::new();
    let mut dev_fields = Vec::new();
    let mut place_fields = Vec::new();
    let mut place_init = Vec::new();
    let mut loads = Vec::new();
    let mut stores = Vec::new();
    let mut checks = Vec::new();
    let mut declares = Vec::new();
    let mut sizes = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let id = f.ident.as_ref().expect("named field");
        let fname = id.to_string();
        let ty = &f.ty;
        let i = i as u32;
        if let Type::Reference(r) = ty {
            return Err(Error::new_spanned(
                r,
                "`#[derive(Element)]` fields cannot be references: a buffer element is plain data the device can copy",
            ));
        }
        let fvis = &f.vis;
        let fdoc = format!("The field `{fname}`.");
        let fvis = quote!(#[doc = #fdoc] #fvis);
        sizes.push(quote!(::core::mem::size_of::<#ty>()));
        match kind(ty) {
            FieldKind::One(e) => {
                checks.push(quote_spanned!(e.span()=> __strata_is_element::<#e>();));
                layouts.push(quote! {
                    #st::FieldLayout {
                        name: #fname,
                        offset: ::core::mem::offset_of!(#name, #id),
                        ty: <#e as #st::Element>::LAYOUT,
                        len: ::core::option::Option::None,
                    }
                });
                dev_fields.push(quote!(#fvis #id: <#e as #st::Element>::Dev));
                place_fields.push(quote!(#fvis #id: <#e as #st::Element>::Place));
                place_init.push(quote!(#id: <#e as #st::Element>::place(at.field(#i))));
                declares.push(quote!(#id: <#e as #st::Element>::declare_value(&::std::format!("{}_{}", name, #fname))));
            }
            FieldKind::Array(e, n) => {
                checks.push(quote_spanned!(e.span()=> __strata_is_element::<#e>();));
                layouts.push(quote! {
                    #st::FieldLayout {
                        name: #fname,
                        offset: ::core::mem::offset_of!(#name, #id),
                        ty: <#e as #st::Element>::LAYOUT,
                        len: ::core::option::Option::Some(#n),
                    }
                });
                dev_fields.push(quote!(#fvis #id: [<#e as #st::Element>::Dev; #n]));
                place_fields.push(quote!(#fvis #id: [<#e as #st::Element>::Place; #n]));
                place_init.push(quote!(#id: #st::array_places::<#e, { #n }>(&at.field(#i))));
                declares.push(quote!(#id: ::core::array::from_fn(|k| <#e as #st::Element>::declare_value(&::std::format!("{}_{}_{}", name, #fname, k)))));
            }
        }
        loads.push(quote!(#id: #st::FieldAccess::load(&self.#id)));
        stores.push(quote!(#st::FieldAccess::store(&self.#id, v.#id);));
    }
    let sname = name.to_string();
    let dev_doc = format!("`{sname}` inside a kernel: its fields as device values (generated by `#[derive(Element)]`).");
    let place_doc = format!("An element of a buffer of `{sname}` inside a kernel: its fields as places, read with `load` and written with `store` (generated by `#[derive(Element)]`).");
    let padding_msg = format!(
        "`{sname}` has padding bytes between or after its fields; `#[derive(Element)]` needs every byte to be a field: add explicit padding fields (e.g. `_pad: [u32; 1]`) or reorder the fields from largest to smallest alignment"
    );
    Ok(quote! {
        const _: () = {
            #[allow(dead_code)]
            fn __strata_is_element<T: #st::Element>() {}
            #[allow(dead_code)]
            fn __strata_fields_are_elements() {
                #(#checks)*
            }
            ::core::assert!(
                ::core::mem::size_of::<#name>() == 0 #(+ #sizes)*,
                #padding_msg
            );
        };

        // SAFETY: every field is an `Element` (plain data: `Pod`), the struct is `#[repr(C)]`
        // and has no padding (checked above), so every bit pattern is a valid value.
        unsafe impl ::strata::bytemuck::Zeroable for #name {}
        // SAFETY: as above; `Copy` and `'static` are required by the trait.
        unsafe impl ::strata::bytemuck::Pod for #name {}

        // SAFETY: the layout is computed by the compiler (`size_of`, `align_of`, `offset_of!`)
        // from the `#[repr(C)]` struct itself.
        unsafe impl #st::Element for #name {
            const LAYOUT: #st::ElementLayout = #st::ElementLayout::Struct(&#st::StructLayout {
                name: #sname,
                size: ::core::mem::size_of::<#name>(),
                align: ::core::mem::align_of::<#name>(),
                fields: &[#(#layouts),*],
            });
            type Dev = #dev;
            type Place = #place;
            fn place(at: #st::FieldPlace) -> #place {
                #place { #(#place_init),* }
            }
            fn declare_value(name: &str) -> #dev {
                #dev { #(#declares),* }
            }
        }

        impl #st::ByValue for #name {
            type Dev = #dev;
            #[track_caller]
            fn declare(name: &str) -> #dev {
                <#name as #st::Element>::declare_value(name)
            }
        }

        impl<'a> ::core::convert::From<#name> for ::strata::KernelArg<'a> {
            fn from(v: #name) -> Self {
                ::strata::KernelArg::fields(&v)
            }
        }

        #[doc = #dev_doc]
        #[derive(Clone, Copy, Debug)]
        #vis struct #dev {
            #(#dev_fields),*
        }

        #[doc = #place_doc]
        #[derive(Clone, Debug)]
        #vis struct #place {
            #(#place_fields),*
        }

        impl #st::FieldAccess for #place {
            type Value = #dev;
            #[track_caller]
            fn load(&self) -> #dev {
                #dev { #(#loads),* }
            }
            #[track_caller]
            fn store(&self, v: #dev) {
                #(#stores)*
            }
        }
    })
}
