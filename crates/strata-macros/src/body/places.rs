//! Writes to memory and variables: `x = v`, `y[i] = v`, `ps[i].f = v` and the compound
//! assignments (`y[i] += v`), and the places they write: a memory handle in place position and
//! one field of an element of a buffer of structs (`ps[i].vel.x`).

use super::{err, Cx, Kind};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{BinOp, Expr};

impl Cx {
    pub(super) fn assign(&mut self, a: &syn::ExprAssign) -> TokenStream {
        if let Some(place) = self.field_place(&a.left) {
            let v = self.expr(&a.right);
            return quote_spanned!(a.span()=> ::strata::__macro_support::store_field(&#place, #v));
        }
        match &*a.left {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let id = p.path.get_ident().expect("ident");
                let name = id.to_string();
                match self.lookup(&name) {
                    Some((Kind::Var, _)) => {
                        let v = self.expr(&a.right);
                        if self.is_host(&a.right) && self.is_typed_host(&a.right) {
                            // A typed host value converts to the variable's type when it fits.
                            quote_spanned!(a.span()=> #id.set(::strata::__macro_support::staged_for(&#id, ::strata::__macro_support::Staged(#v))))
                        } else {
                            quote_spanned!(a.span()=> #id.set(::strata::__macro_support::dev(#v)))
                        }
                    }
                    Some((Kind::HostMut, depth)) => {
                        if !self.is_host(&a.right) || self.depth > depth {
                            self.found.insert(name);
                        }
                        let v = self.expr(&a.right);
                        quote!(#id = #v)
                    }
                    _ => {
                        let v = self.expr(&a.right);
                        quote!(#id = #v)
                    }
                }
            }
            Expr::Index(ix) => {
                let kind = self.kind_of_path(&ix.expr);
                let base = self.expr_place(&ix.expr);
                let i = self.expr(&ix.index);
                let v = self.expr(&a.right);
                match kind {
                    Some(Kind::Host | Kind::HostMut | Kind::DevArr) => quote!(#base[#i] = #v),
                    _ if matches!(&*ix.expr, Expr::Path(_))
                        && self.is_host(&a.right)
                        && self.is_typed_host(&a.right) =>
                    {
                        // A typed host value converts to the element type when it fits.
                        quote_spanned!(a.span()=> #base.set(#i, ::strata::__macro_support::staged_elem(&#base, ::strata::__macro_support::Staged(#v))))
                    }
                    _ => quote_spanned!(a.span()=> #base.set(#i, #v)),
                }
            }
            Expr::Paren(p) => {
                let inner = syn::ExprAssign {
                    attrs: a.attrs.clone(),
                    left: p.expr.clone(),
                    eq_token: a.eq_token,
                    right: a.right.clone(),
                };
                self.assign(&inner)
            }
            other => self.error(err(
                other,
                "kernels can assign to variables (`x = ..`) and to elements of buffers and arrays (`y[i] = ..`); vector components are set by building a new vector (`vec4(..)`)",
            )),
        }
    }

    pub(super) fn compound(&mut self, b: &syn::ExprBinary) -> TokenStream {
        let op = compound_to_binary(&b.op);
        if let Some(place) = self.field_place(&b.left) {
            let v = self.expr(&b.right);
            return quote_spanned!(b.span()=> {
                let __strata_p = #place;
                ::strata::__macro_support::store_field(&__strata_p, ::strata::builder::FieldAccess::load(&__strata_p) #op (#v))
            });
        }
        match &*b.left {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let id = p.path.get_ident().expect("ident");
                let name = id.to_string();
                let v = self.expr(&b.right);
                let opt = &b.op;
                match self.lookup(&name) {
                    Some((Kind::Var, _)) => {
                        let v = if self.is_host(&b.right) && self.is_typed_host(&b.right) {
                            // A typed host value converts to the variable's type when it fits.
                            quote_spanned!(b.span()=> ::strata::__macro_support::staged_for(&#id, ::strata::__macro_support::Staged(#v)))
                        } else {
                            v
                        };
                        quote_spanned!(b.span()=> { let mut __strata_v = #id; __strata_v #opt #v; })
                    }
                    Some((Kind::HostMut, depth)) => {
                        if !self.is_host(&b.right) || self.depth > depth {
                            self.found.insert(name);
                        }
                        quote!(#id #opt #v)
                    }
                    _ => quote!(#id #opt #v),
                }
            }
            Expr::Index(ix) => {
                let kind = self.kind_of_path(&ix.expr);
                let base = self.expr_place(&ix.expr);
                let i = self.expr(&ix.index);
                let v = self.expr(&b.right);
                match kind {
                    Some(Kind::Host | Kind::HostMut | Kind::DevArr) => {
                        let opt = &b.op;
                        quote!(#base[#i] #opt #v)
                    }
                    _ if self.is_host(&b.right) && self.is_typed_host(&b.right) => {
                        // A typed host value converts to the element type when it fits.
                        let v = self.staged_operand(&b.right, v);
                        quote_spanned!(b.span()=> {
                            let __strata_i = #i;
                            #base.set(__strata_i, #base.at(__strata_i) #op #v)
                        })
                    }
                    _ => quote_spanned!(b.span()=> {
                        let __strata_i = #i;
                        #base.set(__strata_i, #base.at(__strata_i) #op (#v))
                    }),
                }
            }
            Expr::Paren(p) => {
                let inner = syn::ExprBinary {
                    attrs: b.attrs.clone(),
                    left: p.expr.clone(),
                    op: b.op,
                    right: b.right.clone(),
                };
                self.compound(&inner)
            }
            other => self.error(err(
                other,
                "compound assignment works on variables and on elements of buffers and arrays",
            )),
        }
    }

    /// A memory handle or array in place position (never `.get()`).
    pub(super) fn expr_place(&mut self, e: &Expr) -> TokenStream {
        match e {
            Expr::Path(p) if p.path.get_ident().is_some() => quote!(#p),
            _ => self.expr(e),
        }
    }

    /// `buf[i].a.b[2]` where `buf` is a buffer: the place of that field of element `i`
    /// (`buf.item(i).a.b[2]`), read or written alone. `None` for any other expression.
    pub(super) fn field_place(&mut self, e: &Expr) -> Option<TokenStream> {
        let mut steps = Vec::new();
        let mut at = e;
        loop {
            match at {
                Expr::Field(f) if matches!(f.member, syn::Member::Named(_)) => {
                    let m = &f.member;
                    steps.push(quote!(.#m));
                    at = &f.base;
                }
                // A constant index into an array field: `ps[i].hist[1].a`.
                Expr::Index(ix) if matches!(&*ix.expr, Expr::Field(_)) => {
                    let k = self.expr(&ix.index);
                    steps.push(quote!([#k]));
                    at = &ix.expr;
                }
                Expr::Paren(p) => at = &p.expr,
                _ => break,
            }
        }
        let Expr::Index(ix) = at else { return None };
        if steps.is_empty()
            || !matches!(self.kind_of_path(&ix.expr), Some(Kind::Dev))
            || !matches!(&*ix.expr, Expr::Path(_))
        {
            return None;
        }
        let base = self.expr_place(&ix.expr);
        let i = self.expr(&ix.index);
        steps.reverse();
        Some(quote_spanned!(ix.bracket_token.span.join()=> #base.item(#i) #(#steps)*))
    }
}

pub(super) fn is_compound(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

fn compound_to_binary(op: &BinOp) -> TokenStream {
    let sp = op.span();
    match op {
        BinOp::AddAssign(_) => quote_spanned!(sp=> +),
        BinOp::SubAssign(_) => quote_spanned!(sp=> -),
        BinOp::MulAssign(_) => quote_spanned!(sp=> *),
        BinOp::DivAssign(_) => quote_spanned!(sp=> /),
        BinOp::RemAssign(_) => quote_spanned!(sp=> %),
        BinOp::BitXorAssign(_) => quote_spanned!(sp=> ^),
        BinOp::BitAndAssign(_) => quote_spanned!(sp=> &),
        BinOp::BitOrAssign(_) => quote_spanned!(sp=> |),
        BinOp::ShlAssign(_) => quote_spanned!(sp=> <<),
        BinOp::ShrAssign(_) => quote_spanned!(sp=> >>),
        _ => quote!(+),
    }
}
