//! Expressions in value position: literals, names, operators (comparisons of device values are
//! method calls), casts, method calls, calls of built-ins and device functions, indexing, and
//! the expressions kernels reject, each with its message.

use super::names::{
    BUILTINS, FORMAT_MSG, HEAP_MSG, HEAP_TYPES, NAMED_BUILTINS, PANIC_MSG, SUPPORT_BUILTINS,
};
use super::places::is_compound;
use super::{bind_pat, err, Cx, Kind};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, UnOp};

impl Cx {
    pub fn expr(&mut self, e: &Expr) -> TokenStream {
        match e {
            Expr::Lit(l) => quote!(#l),
            Expr::Path(p) => match p.path.get_ident() {
                Some(id) if self.lookup(&id.to_string()).is_some_and(|(k, _)| k == Kind::Var) => {
                    quote_spanned!(id.span()=> #id.get())
                }
                _ => quote!(#p),
            },
            Expr::Paren(p) => {
                let inner = self.expr(&p.expr);
                quote!((#inner))
            }
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Binary(b) => self.binary(b),
            Expr::Unary(u) => match u.op {
                UnOp::Deref(t) => self.error(err(
                    t,
                    "dereferencing is not available in kernels: values and buffers are passed by value; remove the `*`",
                )),
                _ => {
                    let op = &u.op;
                    let inner = self.expr(&u.expr);
                    quote!((#op #inner))
                }
            },
            Expr::Cast(c) => {
                let inner = self.expr(&c.expr);
                let ty = &c.ty;
                if self.is_host(&c.expr) {
                    quote!((#inner as #ty))
                } else {
                    quote_spanned!(c.span()=> (#inner).cast::<#ty>())
                }
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if ["unwrap", "expect", "unwrap_unchecked", "expect_err", "unwrap_err"].contains(&name.as_str()) {
                    return self.error(err(&m.method, PANIC_MSG));
                }
                if ["to_string", "to_owned"].contains(&name.as_str()) {
                    return self.error(err(&m.method, FORMAT_MSG));
                }
                // `a.set_xz(w)` on a device variable: a swizzle write into the variable
                // itself (the `Var`), not into a copy of its value.
                let var_write = name.starts_with("set_")
                    && matches!(&*m.receiver, Expr::Path(p) if p.path.get_ident().is_some_and(|id| self.lookup(&id.to_string()).is_some_and(|(k, _)| k == Kind::Var)));
                let recv = if var_write {
                    self.expr_place(&m.receiver)
                } else {
                    self.expr_method_receiver(&m.receiver)
                };
                let args: Vec<TokenStream> = m.args.iter().map(|a| self.expr(a)).collect();
                let method = &m.method;
                let tf = &m.turbofish;
                quote_spanned!(m.method.span()=> #recv.#method #tf (#(#args),*))
            }
            Expr::Call(c) => self.call(c),
            Expr::Index(ix) => {
                let kind = self.kind_of_path(&ix.expr);
                let base = self.expr_place(&ix.expr);
                let i = self.expr(&ix.index);
                match kind {
                    Some(Kind::Host | Kind::HostMut) => quote!(#base[#i]),
                    Some(Kind::DevArr) => {
                        if !self.is_host(&ix.index) {
                            return self.error(err(
                                &ix.index,
                                "a Rust array of device values is indexed with host (staged) indices only; for a run-time index use a private array (`let mut a = [0.0f32; N];`)",
                            ));
                        }
                        quote!(#base[#i])
                    }
                    _ => quote_spanned!(ix.bracket_token.span.join()=> ::strata::__macro_support::Load::load(&#base, #i)),
                }
            }
            Expr::If(i) => self.value_if(i, "v"),
            Expr::Block(b) => {
                if b.label.is_some() {
                    return self.error(err(&b.label, "labelled blocks are not supported in kernels"));
                }
                self.block(&b.block, true)
            }
            Expr::Tuple(t) => {
                let elems: Vec<TokenStream> = t.elems.iter().map(|x| self.expr(x)).collect();
                quote!((#(#elems,)*))
            }
            Expr::Array(a) => {
                let elems: Vec<TokenStream> = a.elems.iter().map(|x| self.expr(x)).collect();
                quote!([#(#elems),*])
            }
            Expr::Repeat(r) => {
                if !self.is_host(&r.expr) {
                    return self.error(err(
                        r,
                        "an array of a device value is a private array: bind it with `let mut a = [v; N];`",
                    ));
                }
                quote!(#r)
            }
            Expr::Closure(c) => self.closure(c),
            Expr::Macro(m) => self.mac(&m.mac),
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Assign(_) => {
                let t = self.expr_stmt(e);
                quote!({ #t; })
            }
            Expr::Break(b) => {
                if let Some(v) = &b.expr {
                    return self.error(err(v, "`break` with a value is not supported in kernels; assign to a `let mut` variable before the `break`"));
                }
                self.jump(b, &b.label, true)
            }
            Expr::Continue(c) => self.jump(c, &c.label, false),
            Expr::Return(r) => {
                if let Some(v) = &r.expr {
                    return self.error(err(
                        v,
                        "early `return` with a value is not supported (device functions are inlined); assign the result to a `let mut` variable and make it the last expression",
                    ));
                }
                quote_spanned!(r.span()=> ::strata::builder::return_())
            }
            Expr::Field(f) => {
                // `ps[i].vel.x`: one field of an element of a buffer of structs, read alone.
                if let Some(place) = self.field_place(e) {
                    return quote_spanned!(f.span()=> ::strata::builder::FieldAccess::load(&#place));
                }
                // A field of a struct value (`p.vel` after `let p = ps[i];`), or a tuple field.
                let base = self.expr(&f.base);
                let m = &f.member;
                quote!(#base.#m)
            }
            Expr::Match(m) => self.error(err(
                m.match_token,
                "`match` is not supported in kernels; write an `if` / `else if` chain",
            )),
            Expr::Reference(r) => self.error(err(
                r.and_token,
                "references are not available in kernels: device values, buffers and arrays are handles that are copied; remove the `&`",
            )),
            Expr::Try(t) => self.error(err(
                t.question_token,
                "`?` is not available in kernels: there are no `Result`s on the device",
            )),
            Expr::Async(a) => self.error(err(a, "`async` is not available in kernels")),
            Expr::Await(a) => self.error(err(a, "`.await` is not available in kernels")),
            Expr::Unsafe(u) => self.error(err(u.unsafe_token, "`unsafe` is not available in kernels (and not needed: every access is checked or defined)")),
            Expr::Struct(st) => self.error(err(st, "struct literals are not available in kernels; read a `#[derive(Element)]` struct from a buffer (`let p = ps[i];`), then write it whole (`out[i] = p;`) or field by field (`ps[i].vel = v;`)")),
            Expr::Range(r) => self.error(err(r, "ranges are only available as the iterator of a `for` loop")),
            Expr::Let(l) => self.error(err(l, "`let` expressions are not supported in kernels")),
            other => self.error(err(other, "this expression is not supported in kernels")),
        }
    }

    fn expr_method_receiver(&mut self, e: &Expr) -> TokenStream {
        let t = self.expr(e);
        match e {
            Expr::Path(_)
            | Expr::Paren(_)
            | Expr::MethodCall(_)
            | Expr::Call(_)
            | Expr::Index(_)
            | Expr::Field(_) => t,
            Expr::Lit(_) => quote!(#t),
            _ => quote!((#t)),
        }
    }

    fn closure(&mut self, c: &syn::ExprClosure) -> TokenStream {
        if c.asyncness.is_some() {
            return self.error(err(c, "`async` closures are not available in kernels"));
        }
        let saved_loops = std::mem::take(&mut self.loops);
        self.scopes.push(Vec::new());
        for p in &c.inputs {
            bind_pat(self, p, Kind::Dev);
        }
        let body = self.expr(&c.body);
        self.scopes.pop();
        self.loops = saved_loops;
        let inputs = &c.inputs;
        let output = &c.output;
        let capture = &c.capture;
        quote!(#capture |#inputs| #output { #body })
    }

    fn call(&mut self, c: &syn::ExprCall) -> TokenStream {
        let args: Vec<TokenStream> = c.args.iter().map(|a| self.expr(a)).collect();
        if let Expr::Path(p) = &*c.func {
            if let Some(first) = p.path.segments.first() {
                let f = first.ident.to_string();
                if p.path.segments.len() > 1 && HEAP_TYPES.contains(&f.as_str()) {
                    return self.error(err(p, HEAP_MSG));
                }
            }
            if p.path.segments.len() == 1 && p.qself.is_none() {
                let seg = &p.path.segments[0];
                let f = seg.ident.to_string();
                let tf = &seg.arguments;
                let id = &seg.ident;
                if f == self.fn_name {
                    return self.error(err(
                        p,
                        "recursion is not supported: device functions are inlined into the kernel at build time; write the recursion as a loop",
                    ));
                }
                if self.lookup(&f).is_none() {
                    if BUILTINS.contains(&f.as_str()) {
                        return quote_spanned!(c.span()=> ::strata::builder::#id #tf (#(#args),*));
                    }
                    if SUPPORT_BUILTINS.contains(&f.as_str()) {
                        return quote_spanned!(c.span()=> ::strata::__macro_support::#id #tf (#(#args),*));
                    }
                    if f == "var" {
                        return self.error(err(
                            c,
                            "`var(init)` declares a device variable and is only available as the initializer of a `let mut` (`let mut x = var(init);`)",
                        ));
                    }
                    if NAMED_BUILTINS.contains(&f.as_str()) {
                        let name = format!("{f}{}", self.tmp);
                        self.tmp += 1;
                        return self.named_builtin(c, &name);
                    }
                }
            }
        }
        let func = match &*c.func {
            Expr::Path(p) => quote!(#p),
            other => {
                let f = self.expr(other);
                quote!((#f))
            }
        };
        quote_spanned!(c.span()=> #func(#(#args),*))
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> TokenStream {
        if is_compound(&b.op) {
            let t = self.compound(b);
            return quote!({ #t; });
        }
        let lh = self.is_host(&b.left);
        let rh = self.is_host(&b.right);
        let l = self.expr(&b.left);
        let r = self.expr(&b.right);
        let op = &b.op;
        if lh && rh {
            return quote!((#l #op #r));
        }
        let typed = (lh && self.is_typed_host(&b.left)) || (rh && self.is_typed_host(&b.right));
        let (l, r) = if lh {
            (self.staged_operand(&b.left, l), r)
        } else if rh {
            (l, self.staged_operand(&b.right, r))
        } else {
            (l, r)
        };
        let sp = b.op.span();
        let method = |name: &str| Ident::new(name, sp);
        let (m, swapped) = match b.op {
            BinOp::Lt(_) => ("lt", "gt"),
            BinOp::Le(_) => ("le", "ge"),
            BinOp::Gt(_) => ("gt", "lt"),
            BinOp::Ge(_) => ("ge", "le"),
            BinOp::Eq(_) => ("eq", "eq"),
            BinOp::Ne(_) => ("ne", "ne"),
            BinOp::And(_) => ("and", "and"),
            BinOp::Or(_) => ("or", "or"),
            _ => return quote_spanned!(sp=> (#l #op #r)),
        };
        // A host value on the left of a device comparison: `0 < x` is `x > 0`.
        let (m, d, h) = if lh {
            (method(swapped), r, l)
        } else {
            (method(m), l, r)
        };
        if typed {
            // The typed host value converts to the device value's type first (at this line).
            quote_spanned!(sp=> {
                let (__strata_d, __strata_h) = ::strata::__macro_support::staged_pair(#d, #h);
                __strata_d.#m(__strata_h)
            })
        } else {
            quote_spanned!(sp=> (#d).#m(#h))
        }
    }
}
