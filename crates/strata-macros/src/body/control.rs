//! Control flow: `if` as a statement and as a value, `for`, `while` and `loop` (host loops are
//! unrolled when the kernel is built, device loops are recorded), their `#[host]` / `#[device]`
//! statements, and `break` / `continue` to a loop of either kind.

use super::{bind_pat, block_tail, err, strip_parens, Cx, Kind, Loop};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Expr, Pat};

impl Cx {
    pub(super) fn if_stmt(&mut self, i: &syn::ExprIf) -> TokenStream {
        if let Expr::Let(l) = &*i.cond {
            return self.error(err(
                l,
                "`if let` is not supported in kernels (there are no enums on the device); compare values with `if a == b`",
            ));
        }
        if self.is_host(&i.cond) {
            let c = self.expr(&i.cond);
            let then = self.block(&i.then_branch, false);
            let els = match &i.else_branch {
                None => quote!(),
                Some((_, e)) => {
                    let e = match &**e {
                        Expr::If(ei) => self.if_stmt(ei),
                        Expr::Block(b) => self.block(&b.block, false),
                        other => self.expr_stmt(other),
                    };
                    quote!(else { #e; })
                }
            };
            return quote_spanned!(i.if_token.span=> if #c #then #els);
        }
        let c = self.expr(&i.cond);
        self.depth += 1;
        let then = self.block(&i.then_branch, false);
        let els = match &i.else_branch {
            None => quote!(),
            Some((else_token, e)) => {
                let e = match &**e {
                    Expr::If(ei) => self.if_stmt(ei),
                    Expr::Block(b) => self.block(&b.block, false),
                    other => self.expr_stmt(other),
                };
                quote_spanned!(else_token.span=> .else_(|| { #e; }))
            }
        };
        self.depth -= 1;
        quote_spanned!(i.if_token.span=> { ::strata::builder::if_(#c, || #then) #els; })
    }

    /// An `if` whose value is used.
    pub(super) fn value_if(&mut self, i: &syn::ExprIf, name: &str) -> TokenStream {
        if let Expr::Let(l) = &*i.cond {
            return self.error(err(
                l,
                "`if let` is not supported in kernels; compare values with `if a == b`",
            ));
        }
        let Some((_, els)) = &i.else_branch else {
            return self.error(err(
                i.if_token,
                "an `if` used as a value needs an `else` branch",
            ));
        };
        if self.is_host(&i.cond) {
            let c = self.expr(&i.cond);
            let then = self.block(&i.then_branch, true);
            let e = self.value_arm(els, name);
            return quote!(if #c #then else { #e });
        }
        let pure = i.then_branch.stmts.len() == 1
            && block_tail(&i.then_branch).is_some_and(|t| self.is_pure(t))
            && self.is_pure(els);
        let c = self.expr(&i.cond);
        if pure {
            let a = self.expr(block_tail(&i.then_branch).expect("tail"));
            let b = self.value_arm(els, name);
            return quote_spanned!(i.if_token.span=> ::strata::__macro_support::select(#c, #a, #b));
        }
        let slot = self.fresh("slot");
        self.depth += 1;
        let then = self.block(&i.then_branch, true);
        let e = self.value_arm(els, name);
        self.depth -= 1;
        quote_spanned!(i.if_token.span=> {
            let #slot = ::strata::__macro_support::Slot::new(#name);
            ::strata::builder::if_(#c, || #slot.put(#then)).else_(|| #slot.put({ #e }));
            #slot.get()
        })
    }

    fn value_arm(&mut self, e: &Expr, name: &str) -> TokenStream {
        match e {
            Expr::If(ei) => self.value_if(ei, name),
            Expr::Block(b) => {
                if b.block.stmts.len() == 1 {
                    if let Some(t) = block_tail(&b.block) {
                        return self.expr(t);
                    }
                }
                self.block(&b.block, true)
            }
            other => self.expr(other),
        }
    }

    fn label_prefix(&mut self, label: &Option<syn::Label>) -> (Option<String>, TokenStream) {
        match label {
            Some(l) => {
                let name = l.name.ident.to_string();
                let id = format_ident!("__strata_loop_{}", name);
                (
                    Some(name),
                    quote_spanned!(l.span()=> #[allow(unused_variables)] let #id = ::strata::builder::current_loop();),
                )
            }
            None => (None, quote!()),
        }
    }

    /// `#[host]` / `#[device]` on a loop states where it runs; a loop that runs elsewhere is a
    /// compile error saying why (`device`: whether it does run on the device; `on`: the
    /// bound or condition that decides). `None` when the statement holds or is not made.
    fn check_loop_attr(
        &mut self,
        attrs: &[syn::Attribute],
        device: bool,
        what: &str,
        on: &dyn ToTokens,
    ) -> Option<TokenStream> {
        let host_attr = attrs.iter().find(|a| a.path().is_ident("host"));
        let dev_attr = attrs.iter().find(|a| a.path().is_ident("device"));
        let msg = match (host_attr, dev_attr) {
            (Some(a), _) if device => (
                a,
                format!("this `{what}` runs on the device, not unrolled on the host: {}", if what == "loop" {
                    "`loop` is always a device loop".to_string()
                } else {
                    format!("`{}` uses a device value (a parameter, a built-in, a memory read, a device variable, or something computed from them). Make it a host value (a literal, a constant, a `#[stage]` parameter, a host `let`) to unroll the loop when the kernel is built", on.to_token_stream())
                }),
            ),
            (_, Some(a)) if !device => (
                a,
                format!("this `{what}` is unrolled on the host when the kernel is built, not a device loop: `{}` uses host values only (literals, constants, `#[stage]` parameters, host `let`s). Use a device value for a bound (a scalar parameter) to loop on the device", on.to_token_stream()),
            ),
            _ => return None,
        };
        Some(self.error(err(msg.0, &msg.1)))
    }

    pub(super) fn for_loop(&mut self, f: &syn::ExprForLoop) -> TokenStream {
        if let Some(e) = self.check_loop_attr(&f.attrs, !self.is_host(&f.expr), "for", &f.expr) {
            return e;
        }
        if self.is_host(&f.expr) {
            // A host loop: unrolled at build time. The iterator uses host values only, which
            // are ordinary Rust.
            let iter = &f.expr;
            self.loops.push(Loop {
                label: f.label.as_ref().map(|l| l.name.ident.to_string()),
                device: false,
                depth: self.depth,
            });
            self.scopes.push(Vec::new());
            bind_pat(self, &f.pat, Kind::Host);
            let body = self.block(&f.body, false);
            self.scopes.pop();
            self.loops.pop();
            let label = &f.label;
            let pat = &f.pat;
            return quote_spanned!(f.for_token.span=> #label for #pat in #iter #body);
        }
        // A device loop over `a..b` or `(a..b).step_by(s)`.
        let (range, step) = match &*f.expr {
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip_parens(&m.receiver), Some(&m.args[0]))
            }
            other => (strip_parens(other), None),
        };
        let Expr::Range(r) = range else {
            return self.error(err(
                &f.expr,
                "a device `for` loop runs over `a..b` or `(a..b).step_by(s)`; other iterators are only available over host values (staged, unrolled loops)",
            ));
        };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return self.error(err(r, "a device `for` loop needs both bounds: `a..b`"));
        };
        if let syn::RangeLimits::Closed(c) = r.limits {
            return self.error(err(
                c,
                "inclusive ranges are not supported in device loops; write `a..b + 1`",
            ));
        }
        let a = self.expr(start);
        let a = self.staged_operand(start, a);
        let b = self.expr(end);
        let b = self.staged_operand(end, b);
        let sv = step.map(|s| {
            let t = self.expr(s);
            self.staged_operand(s, t)
        });
        let pat = match &*f.pat {
            Pat::Ident(pi)
                if pi.subpat.is_none() && pi.by_ref.is_none() && pi.mutability.is_none() =>
            {
                quote!(#pi)
            }
            Pat::Wild(w) => quote!(#w),
            other => {
                return self.error(err(
                    other,
                    "the counter of a device `for` loop is a plain name",
                ))
            }
        };
        let (label, prefix) = self.label_prefix(&f.label);
        self.depth += 1;
        self.loops.push(Loop {
            label,
            device: true,
            depth: self.depth,
        });
        self.scopes.push(Vec::new());
        bind_pat(self, &f.pat, Kind::Dev);
        let body = self.block_with(&f.body, prefix);
        self.scopes.pop();
        self.loops.pop();
        self.depth -= 1;
        match sv {
            None => {
                quote_spanned!(f.for_token.span=> ::strata::__macro_support::for_range(#a, #b, |#pat| #body))
            }
            Some(s) => {
                quote_spanned!(f.for_token.span=> ::strata::__macro_support::for_step(#a, #b, #s, |#pat| #body))
            }
        }
    }

    pub(super) fn while_loop(&mut self, w: &syn::ExprWhile) -> TokenStream {
        if let Expr::Let(l) = &*w.cond {
            return self.error(err(l, "`while let` is not supported in kernels; use `while cond` or `loop` with `if .. { break }`"));
        }
        if let Some(e) = self.check_loop_attr(&w.attrs, !self.is_host(&w.cond), "while", &w.cond) {
            return e;
        }
        if self.is_host(&w.cond) {
            let c = self.expr(&w.cond);
            self.loops.push(Loop {
                label: w.label.as_ref().map(|l| l.name.ident.to_string()),
                device: false,
                depth: self.depth,
            });
            let body = self.block(&w.body, false);
            self.loops.pop();
            let label = &w.label;
            return quote_spanned!(w.while_token.span=> #label while #c #body);
        }
        let (label, prefix) = self.label_prefix(&w.label);
        self.depth += 1;
        self.loops.push(Loop {
            label,
            device: true,
            depth: self.depth,
        });
        let c = self.expr(&w.cond);
        let body = self.block_with(&w.body, prefix);
        self.loops.pop();
        self.depth -= 1;
        quote_spanned!(w.while_token.span=> ::strata::builder::while_(|| #c, || #body))
    }

    pub(super) fn loop_loop(&mut self, l: &syn::ExprLoop) -> TokenStream {
        if let Some(e) = self.check_loop_attr(&l.attrs, true, "loop", &l.loop_token) {
            return e;
        }
        let (label, prefix) = self.label_prefix(&l.label);
        self.depth += 1;
        self.loops.push(Loop {
            label,
            device: true,
            depth: self.depth,
        });
        let body = self.block_with(&l.body, prefix);
        self.loops.pop();
        self.depth -= 1;
        quote_spanned!(l.loop_token.span=> ::strata::builder::loop_(|| #body))
    }

    pub(super) fn jump(
        &mut self,
        tokens: &dyn ToTokens,
        label: &Option<syn::Lifetime>,
        brk: bool,
    ) -> TokenStream {
        let what = if brk { "break" } else { "continue" };
        let target = match label {
            None => self.loops.len().checked_sub(1),
            Some(l) => {
                let name = l.ident.to_string();
                self.loops
                    .iter()
                    .rposition(|lp| lp.label.as_deref() == Some(name.as_str()))
            }
        };
        let Some(t) = target else {
            return self.error(err(tokens, &format!("`{what}` outside of a loop")));
        };
        let lp = &self.loops[t];
        if lp.device {
            match label {
                None => {
                    if brk {
                        quote_spanned!(tokens.span()=> ::strata::builder::break_())
                    } else {
                        quote_spanned!(tokens.span()=> ::strata::builder::continue_())
                    }
                }
                Some(l) => {
                    let id = format_ident!("__strata_loop_{}", l.ident);
                    if brk {
                        quote_spanned!(tokens.span()=> #id.break_())
                    } else {
                        quote_spanned!(tokens.span()=> #id.continue_())
                    }
                }
            }
        } else if lp.depth != self.depth {
            self.error(err(
                tokens,
                &format!("this `{what}` leaves a host loop (a loop over staged values, unrolled at build time) from inside device control flow, which is decided per work-item at run time; make the loop a device loop (over a device bound), or move the `{what}` out of the device `if`"),
            ))
        } else if brk {
            quote!(break #label)
        } else {
            quote!(continue #label)
        }
    }
}
