//! Blocks and statements: `{ .. }` with its scope, `let` in all its forms (host values, device
//! values, device variables, private and local arrays, named gathers), the kernel's own body,
//! and the dispatch of an expression in statement position.

use super::names::{NAMED_BUILTINS, SUPPORT_BUILTINS};
use super::places::is_compound;
use super::{as_var_call, err, l_span, Cx, Kind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, Expr, Ident, Pat, Stmt};

impl Cx {
    /// `{ stmts }`; when `value`, the block's tail expression is its value.
    pub fn block(&mut self, b: &Block, value: bool) -> TokenStream {
        self.scopes.push(Vec::new());
        let body = self.stmts(&b.stmts, value, TokenStream::new());
        self.scopes.pop();
        quote_spanned!(b.brace_token.span.join()=> { #body })
    }

    /// A block with `prefix` statements first (a loop label).
    pub(super) fn block_with(&mut self, b: &Block, prefix: TokenStream) -> TokenStream {
        self.scopes.push(Vec::new());
        let body = self.stmts(&b.stmts, false, prefix);
        self.scopes.pop();
        quote_spanned!(b.brace_token.span.join()=> { #body })
    }

    fn stmts(&mut self, stmts: &[Stmt], value: bool, prefix: TokenStream) -> TokenStream {
        let mut out = prefix;
        let n = stmts.len();
        for (i, st) in stmts.iter().enumerate() {
            let last = i + 1 == n;
            match st {
                Stmt::Local(l) => out.extend(self.local(l)),
                Stmt::Item(item) => out.extend(self.item(item)),
                Stmt::Expr(e, semi) => {
                    if last && value && semi.is_none() {
                        out.extend(self.expr(e));
                    } else {
                        let t = self.expr_stmt(e);
                        out.extend(quote!(#t;));
                    }
                }
                Stmt::Macro(m) => {
                    let t = self.mac(&m.mac);
                    out.extend(quote!(#t;));
                }
            }
        }
        out
    }

    fn local(&mut self, l: &syn::Local) -> TokenStream {
        let init = match &l.init {
            Some(init) => {
                if let Some((else_tok, _)) = &init.diverge {
                    return self.error(err(
                        else_tok,
                        "`let ... else` is not supported in kernels; use `if` / `else`",
                    ));
                }
                &init.expr
            }
            None => {
                return self.error(err(
                    l,
                    "a kernel `let` needs an initial value (`let mut acc = 0.0f32;`)",
                ))
            }
        };
        let force_host = l.attrs.iter().any(|a| a.path().is_ident("host"));
        let force_dev = l.attrs.iter().any(|a| a.path().is_ident("device"));
        let other_attrs: Vec<_> = l
            .attrs
            .iter()
            .filter(|a| !a.path().is_ident("host") && !a.path().is_ident("device"))
            .collect();
        let (pat, ty) = match &l.pat {
            Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        match pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                let t = self.let_ident(
                    &pi.ident,
                    pi.mutability.is_some(),
                    ty,
                    init,
                    force_host,
                    force_dev,
                );
                quote!(#(#other_attrs)* #t)
            }
            Pat::Wild(w) => {
                let e = self.expr(init);
                quote_spanned!(w.span()=> let _ = #e;)
            }
            Pat::Tuple(pt) if ty.is_none() => {
                if let Expr::Tuple(te) = &**init {
                    if te.elems.len() == pt.elems.len() {
                        // `let (a, b) = (x, y);` is two lets.
                        let mut out = TokenStream::new();
                        let mut tmps = Vec::new();
                        for e in &te.elems {
                            let host = self.is_host(e);
                            let v = self.expr(e);
                            let t = self.fresh("t");
                            out.extend(quote!(let #t = #v;));
                            tmps.push((t, host, e.span()));
                        }
                        for (p, (t, host, at)) in pt.elems.iter().zip(tmps) {
                            match p {
                                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                                    let id = &pi.ident;
                                    if pi.mutability.is_some() {
                                        let name = id.to_string();
                                        if host && !self.demoted.contains(&name) {
                                            out.extend(quote!(let mut #id = #t;));
                                            self.bind(&name, Kind::HostMut);
                                        } else {
                                            out.extend(quote_spanned!(at=> let #id = ::strata::__macro_support::var(#name, #t);));
                                            self.bind(&name, Kind::Var);
                                        }
                                    } else {
                                        out.extend(quote!(let #id = #t;));
                                        self.bind(
                                            &id.to_string(),
                                            if host { Kind::Host } else { Kind::Dev },
                                        );
                                    }
                                }
                                Pat::Wild(_) => {}
                                other => {
                                    return self.error(err(
                                        other,
                                        "only names and `_` can be bound in a kernel `let`",
                                    ));
                                }
                            }
                        }
                        return out;
                    }
                }
                // A tuple returned by a device function.
                let host = self.is_host(init);
                let e = self.expr(init);
                for p in &pt.elems {
                    match p {
                        Pat::Ident(pi) if pi.mutability.is_none() && pi.by_ref.is_none() => {
                            self.bind(&pi.ident.to_string(), if host { Kind::Host } else { Kind::Dev })
                        }
                        Pat::Wild(_) => {}
                        other => {
                            return self.error(err(
                                other,
                                "bind the parts of a tuple to plain names (`let (a, b) = f(x);`); make them mutable with a second `let mut`",
                            ))
                        }
                    }
                }
                quote!(let #pt = #e;)
            }
            other => self.error(err(
                other,
                "only names, `_` and tuples of names can be bound in a kernel `let`",
            )),
        }
    }

    fn let_ident(
        &mut self,
        id: &Ident,
        mutable: bool,
        ty: Option<&syn::Type>,
        init: &Expr,
        force_host: bool,
        force_dev: bool,
    ) -> TokenStream {
        let name = id.to_string();
        if !mutable {
            if let Some(t) = self.named_gather(id, ty, init) {
                return t;
            }
        }
        // Handles: local and private arrays.
        if let Expr::Call(c) = init {
            if let Expr::Path(p) = &*c.func {
                if let Some(seg) = p.path.segments.last() {
                    let f = seg.ident.to_string();
                    if p.path.segments.len() == 1
                        && NAMED_BUILTINS.contains(&f.as_str())
                        && self.lookup(&f).is_none()
                    {
                        let call = self.named_builtin(c, &name);
                        self.bind(&name, Kind::Dev);
                        return quote!(let #id = #call;);
                    }
                }
            }
        }
        // `let mut x = var(init);`: a device variable with the builder's default name (`v`).
        if let Some(c) = as_var_call(init, self) {
            if !mutable {
                return self.error(err(
                    l_span(id, init),
                    "`var(init)` declares a device variable, which is assigned later: write `let mut x = var(init);`",
                ));
            }
            let Expr::Path(p) = &*c.func else {
                unreachable!()
            };
            let tf = &p.path.segments[0].arguments;
            let v = self.expr(&c.args[0]);
            self.bind(&name, Kind::Var);
            return quote_spanned!(init.span()=> let #id = ::strata::__macro_support::var #tf ("v", #v););
        }
        if mutable {
            if let Expr::Repeat(r) = init {
                if !force_host {
                    // `let mut a = [v; N];`: a private array.
                    let v = self.expr(&r.expr);
                    let len = &r.len;
                    let elem = ty.and_then(|t| match t {
                        syn::Type::Array(a) => Some(&*a.elem),
                        _ => None,
                    });
                    let tf = elem.map(|e| quote!(::<#e>));
                    self.bind(&name, Kind::Dev);
                    return quote_spanned!(init.span()=> let #id = ::strata::__macro_support::private_array_init #tf (#name, (#len) as u32, #v););
                }
            }
            let host =
                !force_dev && (force_host || (self.is_host(init) && !self.demoted.contains(&name)));
            let e = self.expr(init);
            if host {
                if self.is_host(init) && (ty.is_some() || self.is_typed_host(init)) {
                    self.bind_typed(&name, Kind::HostMut);
                } else {
                    self.bind(&name, Kind::HostMut);
                }
                let ty = ty.map(|t| quote!(: #t));
                quote!(#[allow(unused_mut)] let mut #id #ty = #e;)
            } else {
                self.bind(&name, Kind::Var);
                let tf = ty.map(|t| quote!(::<#t>));
                quote_spanned!(init.span()=> let #id = ::strata::__macro_support::var #tf (#name, #e);)
            }
        } else {
            let host = !force_dev && (force_host || self.is_host(init));
            let is_arr = matches!(init, Expr::Array(_));
            let e = match init {
                Expr::If(i) => self.value_if(i, &name),
                _ => self.expr(init),
            };
            if host {
                if self.is_host(init) && (ty.is_some() || self.is_typed_host(init)) {
                    self.bind_typed(&name, Kind::Host);
                } else {
                    self.bind(&name, Kind::Host);
                }
                let ty = ty.map(|t| quote!(: #t));
                quote!(let #id #ty = #e;)
            } else if is_arr {
                self.bind(&name, Kind::DevArr);
                quote!(let #id = #e;)
            } else {
                self.bind(&name, Kind::Dev);
                match ty {
                    Some(t) => {
                        quote_spanned!(init.span()=> let #id = ::strata::__macro_support::dev::<#t>(#e);)
                    }
                    None => quote!(let #id = #e;),
                }
            }
        }
    }

    /// `let total = gather_add::<u32>(v);` (or `let total: GatherHandle<u32> = gather_add(v);`,
    /// and `gather_min`, `gather_max`, `gather_with`): a named gather, whose typed result the
    /// launch API returns in a field `total`. `None` when `init` is not a gather.
    fn named_gather(
        &mut self,
        id: &Ident,
        ty: Option<&syn::Type>,
        init: &Expr,
    ) -> Option<TokenStream> {
        let Expr::Call(c) = init else { return None };
        let Expr::Path(p) = &*c.func else { return None };
        let seg = p.path.segments.last()?;
        let f = seg.ident.to_string();
        if p.qself.is_some()
            || p.path.segments.len() != 1
            || !f.starts_with("gather_")
            || !SUPPORT_BUILTINS.contains(&f.as_str())
            || self.lookup(&f).is_some()
        {
            return None;
        }
        let first_type = |args: &syn::PathArguments| match args {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t.clone()),
                _ => None,
            }),
            _ => None,
        };
        let annotated = ty.and_then(|t| match t {
            syn::Type::Path(tp) => tp
                .path
                .segments
                .last()
                .filter(|s| s.ident == "GatherHandle")
                .and_then(|s| first_type(&s.arguments)),
            _ => None,
        });
        let Some(elem) = annotated.or_else(|| first_type(&seg.arguments)) else {
            return Some(self.error(err(
                l_span(id, init),
                &format!("a named gather states its element type, which the launch returns: `let {id} = {f}::<u32>(..);` (or leave it unnamed, `{f}(..);`, and read it with `run.gather::<T>(index)`)"),
            )));
        };
        if self.scopes.len() != 2 || self.depth != 0 || !self.loops.is_empty() {
            return Some(self.error(err(
                l_span(id, init),
                "a named gather is declared at the top level of the kernel body, outside `if`s, loops and blocks, so that every launch has it exactly once; move it there, or leave it unnamed (`gather_add(..);`) and read it with `run.gather::<T>(index)`",
            )));
        }
        if self.gathers.iter().any(|(g, _)| g == id) {
            return Some(self.error(err(
                id,
                &format!("two gathers are named `{id}`; the launch returns each gather in a field of its name"),
            )));
        }
        let call = self.expr(init);
        self.bind(&id.to_string(), Kind::Host);
        self.gathers.push((id.clone(), elem.clone()));
        let keep = format_ident!("__strata_gather_{}", id);
        Some(quote! {
            let #id: ::strata::builder::GatherHandle<#elem> = #call;
            let #keep = #id;
        })
    }

    /// The kernel function's body: like [`Cx::block`] without a value, ending with the tuple
    /// of the named gathers' handles when there are any (the function returns them to the
    /// generated `build`).
    pub fn kernel_block(&mut self, b: &Block) -> TokenStream {
        self.scopes.push(Vec::new());
        let mut body = self.stmts(&b.stmts, false, TokenStream::new());
        if !self.gathers.is_empty() {
            let keep = self
                .gathers
                .iter()
                .map(|(id, _)| format_ident!("__strata_gather_{}", id));
            body.extend(quote!((#(#keep,)*)));
        }
        self.scopes.pop();
        quote_spanned!(b.brace_token.span.join()=> { #body })
    }

    pub(super) fn named_builtin(&mut self, c: &syn::ExprCall, name: &str) -> TokenStream {
        let Expr::Path(p) = &*c.func else {
            unreachable!()
        };
        let seg = p.path.segments.last().expect("segment");
        let f = &seg.ident;
        let args_tf = &seg.arguments;
        let args: Vec<TokenStream> = c.args.iter().map(|a| self.expr(a)).collect();
        quote_spanned!(c.span()=> ::strata::__macro_support::#f #args_tf (#name, #((#args) as u32),*))
    }

    pub(super) fn expr_stmt(&mut self, e: &Expr) -> TokenStream {
        match e {
            Expr::If(i) => self.if_stmt(i),
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::While(w) => self.while_loop(w),
            Expr::Loop(l) => self.loop_loop(l),
            Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
                self.block(&b.block, false)
            }
            Expr::Assign(a) => self.assign(a),
            Expr::Binary(b) if is_compound(&b.op) => self.compound(b),
            _ => self.expr(e),
        }
    }
}
