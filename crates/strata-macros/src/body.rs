//! Translation of a kernel body from plain Rust into calls of the strata builder.
//!
//! Every value is either a *host* value (a literal, a constant, a `#[stage]` parameter, a host
//! loop counter, or a `let` whose initializer uses only host values), which stays ordinary Rust
//! and is a compile-time constant of the kernel, or a *device* value (parameters, built-ins,
//! buffer reads, results of device functions and anything computed from them), which is an
//! `Expr<T>` recorded into the kernel. Control flow on host values is ordinary Rust (unrolled
//! or specialized at build time); control flow on device values becomes `if_`, `for_range`,
//! `while_`, `loop_`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::{BinOp, Block, Error, Expr, Ident, Pat, Stmt, UnOp};

/// What a name in the kernel body stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// An ordinary Rust value (staged).
    Host,
    /// A mutable ordinary Rust value.
    HostMut,
    /// A device value or handle (`Expr`, buffer, local or private array).
    Dev,
    /// A device variable (`Var<T>`): read with `.get()`, written with `.set()`.
    Var,
    /// A Rust array of device values: indexed with host indices.
    DevArr,
    /// A callable parameter.
    Callable,
}

struct Binding {
    name: String,
    kind: Kind,
    depth: usize,
    /// A host value whose Rust type its definition fixes (see [`Cx::is_typed_host`]).
    typed: bool,
}

struct Loop {
    label: Option<String>,
    device: bool,
    depth: usize,
}

/// Built-in functions, called by their builder names.
const BUILTINS: &[&str] = &[
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
const NAMED_BUILTINS: &[&str] = &["local_array", "private_array"];
/// Built-ins implemented in `strata::__macro_support`.
const SUPPORT_BUILTINS: &[&str] = &[
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
const HEAP_TYPES: &[&str] = &[
    "Box", "Vec", "String", "Rc", "Arc", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "VecDeque",
];

/// The translator's state for one function body.
pub struct Cx {
    scopes: Vec<Vec<Binding>>,
    loops: Vec<Loop>,
    /// Number of device control-flow closures enclosing the current point.
    depth: usize,
    /// Names of `let mut` variables that must be device variables.
    pub demoted: HashSet<String>,
    /// Names found to need demotion during this pass.
    pub found: HashSet<String>,
    pub errors: Vec<Error>,
    /// Named gathers (`let total = gather_add::<u32>(v);` at the top level): name and
    /// element type, in declaration order.
    pub gathers: Vec<(Ident, syn::Type)>,
    fn_name: String,
    tmp: usize,
}

fn s() -> TokenStream {
    quote!(::strata)
}

fn err(tokens: impl ToTokens, msg: &str) -> Error {
    Error::new_spanned(tokens, msg)
}

const PANIC_MSG: &str = "kernels cannot panic: there is no unwinding on a device. Check the condition with `if` and write an error code to a buffer instead (out-of-bounds accesses are already reported by the CPU backend)";
const FORMAT_MSG: &str = "string formatting is not available on a device; write the values to a buffer and format them on the host";
const HEAP_MSG: &str = "heap allocation is not available in kernels; use a private array (`let mut a = [0.0f32; 8];`), local memory (`let tile = local_array::<f32>(256);`) or a buffer parameter";

impl Cx {
    pub fn new(fn_name: String, demoted: HashSet<String>) -> Cx {
        Cx {
            scopes: vec![Vec::new()],
            loops: Vec::new(),
            depth: 0,
            demoted,
            found: HashSet::new(),
            errors: Vec::new(),
            gathers: Vec::new(),
            fn_name,
            tmp: 0,
        }
    }

    pub fn bind(&mut self, name: &str, kind: Kind) {
        let depth = self.depth;
        self.scopes.last_mut().expect("scope").push(Binding {
            name: name.to_string(),
            kind,
            depth,
            typed: false,
        });
    }

    /// Binds a host value whose type its definition states (a `#[stage]` parameter, a `let`
    /// with a type or a typed initializer).
    pub fn bind_typed(&mut self, name: &str, kind: Kind) {
        self.bind(name, kind);
        if let Some(b) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
            b.typed = true;
        }
    }

    /// Whether `e` is a host value whose Rust type is fixed by its definition rather than
    /// inferred from where it is used: a constant or other item from outside the kernel
    /// (`W`, `u32::MAX`), a suffixed literal (`16usize`), a cast, a typed host binding, or
    /// arithmetic and method calls on those. Beside a device value such a value is wrapped in
    /// `Staged`, which converts it to the device value's type when it fits; untyped host values
    /// (`2`, `let k = 4;`) are left to Rust's inference.
    fn is_typed_host(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => !i.suffix().is_empty(),
                syn::Lit::Float(f) => !f.suffix().is_empty(),
                _ => false,
            },
            Expr::Path(p) => match p.path.get_ident() {
                Some(i) => {
                    let name = i.to_string();
                    self.scopes
                        .iter()
                        .rev()
                        .flat_map(|s| s.iter().rev())
                        .find(|b| b.name == name)
                        .is_none_or(|b| b.typed && matches!(b.kind, Kind::Host | Kind::HostMut))
                }
                None => p.qself.is_none(),
            },
            Expr::Paren(p) => self.is_typed_host(&p.expr),
            Expr::Group(g) => self.is_typed_host(&g.expr),
            Expr::Cast(_) => self.is_host(e),
            Expr::Unary(u) => self.is_typed_host(&u.expr),
            Expr::MethodCall(m) => self.is_typed_host(&m.receiver),
            Expr::Binary(b) => match b.op {
                BinOp::Shl(_) | BinOp::Shr(_) => self.is_typed_host(&b.left),
                BinOp::Add(_)
                | BinOp::Sub(_)
                | BinOp::Mul(_)
                | BinOp::Div(_)
                | BinOp::Rem(_)
                | BinOp::BitAnd(_)
                | BinOp::BitOr(_)
                | BinOp::BitXor(_) => self.is_typed_host(&b.left) || self.is_typed_host(&b.right),
                _ => false,
            },
            _ => false,
        }
    }

    /// A host operand beside a device value: wrapped in `Staged` when its type is fixed (see
    /// [`Cx::is_typed_host`]), as it is otherwise.
    fn staged_operand(&self, e: &Expr, tokens: TokenStream) -> TokenStream {
        if self.is_host(e) && self.is_typed_host(e) {
            quote_spanned!(e.span()=> ::strata::__macro_support::Staged(#tokens))
        } else {
            tokens
        }
    }

    fn lookup(&self, name: &str) -> Option<(Kind, usize)> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|b| b.name == name)
            .map(|b| (b.kind, b.depth))
    }

    fn kind_of_path(&self, e: &Expr) -> Option<Kind> {
        match e {
            Expr::Path(p) if p.qself.is_none() => p
                .path
                .get_ident()
                .and_then(|i| self.lookup(&i.to_string()))
                .map(|(k, _)| k),
            Expr::Paren(p) => self.kind_of_path(&p.expr),
            Expr::Group(g) => self.kind_of_path(&g.expr),
            _ => None,
        }
    }

    fn error(&mut self, e: Error) -> TokenStream {
        self.errors.push(e);
        quote!(())
    }

    fn fresh(&mut self, what: &str) -> Ident {
        self.tmp += 1;
        format_ident!("__strata_{}_{}", what, self.tmp)
    }

    /// Whether `e` is a host (staged) value; see the module docs.
    pub fn is_host(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(_) => true,
            Expr::Path(p) => match p.path.get_ident() {
                Some(i) => match self.lookup(&i.to_string()) {
                    Some((k, _)) => matches!(k, Kind::Host | Kind::HostMut | Kind::Callable),
                    None => true,
                },
                None => true,
            },
            Expr::Paren(p) => self.is_host(&p.expr),
            Expr::Group(g) => self.is_host(&g.expr),
            Expr::Binary(b) => self.is_host(&b.left) && self.is_host(&b.right),
            Expr::Unary(u) => !matches!(u.op, UnOp::Deref(_)) && self.is_host(&u.expr),
            Expr::Cast(c) => self.is_host(&c.expr),
            Expr::MethodCall(m) => {
                self.is_host(&m.receiver) && m.args.iter().all(|a| self.is_host(a))
            }
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) if p.path.get_ident().is_some() => false,
                Expr::Path(_) => c.args.iter().all(|a| self.is_host(a)),
                _ => false,
            },
            Expr::Index(ix) => {
                matches!(
                    self.kind_of_path(&ix.expr),
                    Some(Kind::Host | Kind::HostMut)
                ) && self.is_host(&ix.index)
            }
            Expr::If(i) => {
                self.is_host(&i.cond)
                    && block_tail(&i.then_branch).is_none_or(|t| self.is_host(t))
                    && i.else_branch.as_ref().is_none_or(|(_, e)| self.is_host(e))
            }
            Expr::Block(b) => block_tail(&b.block).is_none_or(|t| self.is_host(t)),
            Expr::Array(a) => a.elems.iter().all(|x| self.is_host(x)),
            Expr::Tuple(t) => t.elems.iter().all(|x| self.is_host(x)),
            Expr::Repeat(r) => self.is_host(&r.expr),
            Expr::Range(r) => {
                r.start.as_ref().is_none_or(|x| self.is_host(x))
                    && r.end.as_ref().is_none_or(|x| self.is_host(x))
            }
            Expr::Field(f) => self.is_host(&f.base),
            Expr::Closure(_) | Expr::Macro(_) => true,
            _ => false,
        }
    }

    /// Whether `e` can be evaluated unconditionally (for `if` as `select`): no memory access,
    /// no calls but math methods, no statements.
    fn is_pure(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(_) | Expr::Path(_) => true,
            Expr::Paren(p) => self.is_pure(&p.expr),
            Expr::Group(g) => self.is_pure(&g.expr),
            Expr::Binary(b) => {
                !is_compound(&b.op) && self.is_pure(&b.left) && self.is_pure(&b.right)
            }
            Expr::Unary(u) => !matches!(u.op, UnOp::Deref(_)) && self.is_pure(&u.expr),
            Expr::Cast(c) => self.is_pure(&c.expr),
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                !name.starts_with("atomic_")
                    && !name.starts_with("set_")
                    && name != "at"
                    && name != "set"
                    && name != "get"
                    && self.is_pure(&m.receiver)
                    && m.args.iter().all(|a| self.is_pure(a))
            }
            Expr::Call(c) => {
                matches!(&*c.func, Expr::Path(p) if p.path.get_ident().is_some_and(|i| ["select", "lit", "vec2", "vec3", "vec4", "splat"].contains(&i.to_string().as_str())))
                    && c.args.iter().all(|a| self.is_pure(a))
            }
            Expr::Block(b) => {
                b.block.stmts.len() == 1 && block_tail(&b.block).is_some_and(|t| self.is_pure(t))
            }
            Expr::If(i) => {
                i.then_branch.stmts.len() == 1
                    && block_tail(&i.then_branch).is_some_and(|t| self.is_pure(t))
                    && self.is_pure(&i.cond)
                    && i.else_branch.as_ref().is_some_and(|(_, e)| self.is_pure(e))
            }
            _ => false,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Blocks and statements

    /// `{ stmts }`; when `value`, the block's tail expression is its value.
    pub fn block(&mut self, b: &Block, value: bool) -> TokenStream {
        self.scopes.push(Vec::new());
        let body = self.stmts(&b.stmts, value, TokenStream::new());
        self.scopes.pop();
        quote_spanned!(b.brace_token.span.join()=> { #body })
    }

    /// A block with `prefix` statements first (a loop label).
    fn block_with(&mut self, b: &Block, prefix: TokenStream) -> TokenStream {
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

    fn item(&mut self, item: &syn::Item) -> TokenStream {
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

    fn mac(&mut self, m: &syn::Macro) -> TokenStream {
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
                            tmps.push((t, host));
                        }
                        for (p, (t, host)) in pt.elems.iter().zip(tmps) {
                            match p {
                                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                                    let id = &pi.ident;
                                    if pi.mutability.is_some() {
                                        let name = id.to_string();
                                        if host && !self.demoted.contains(&name) {
                                            out.extend(quote!(let mut #id = #t;));
                                            self.bind(&name, Kind::HostMut);
                                        } else {
                                            out.extend(quote!(let #id = ::strata::__macro_support::var(#name, #t);));
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
        let st = s();
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
            return quote_spanned!(init.span()=> let #id = #st::__macro_support::var #tf ("v", #v););
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
                    return quote_spanned!(init.span()=> let #id = #st::__macro_support::private_array_init #tf (#name, (#len) as u32, #v););
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
                quote_spanned!(init.span()=> let #id = #st::__macro_support::var #tf (#name, #e);)
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
                        quote_spanned!(init.span()=> let #id = #st::__macro_support::dev::<#t>(#e);)
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

    fn named_builtin(&mut self, c: &syn::ExprCall, name: &str) -> TokenStream {
        let st = s();
        let Expr::Path(p) = &*c.func else {
            unreachable!()
        };
        let seg = p.path.segments.last().expect("segment");
        let f = &seg.ident;
        let args_tf = &seg.arguments;
        let args: Vec<TokenStream> = c.args.iter().map(|a| self.expr(a)).collect();
        quote_spanned!(c.span()=> #st::__macro_support::#f #args_tf (#name, #((#args) as u32),*))
    }

    // -----------------------------------------------------------------------------------------
    // Expressions in statement position

    fn expr_stmt(&mut self, e: &Expr) -> TokenStream {
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

    fn assign(&mut self, a: &syn::ExprAssign) -> TokenStream {
        let st = s();
        if let Some(place) = self.field_place(&a.left) {
            let v = self.expr(&a.right);
            return quote_spanned!(a.span()=> #st::__macro_support::store_field(&#place, #v));
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
                            quote_spanned!(a.span()=> #id.set(#st::__macro_support::staged_for(&#id, #st::__macro_support::Staged(#v))))
                        } else {
                            quote_spanned!(a.span()=> #id.set(#st::__macro_support::dev(#v)))
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
                        quote_spanned!(a.span()=> #base.set(#i, #st::__macro_support::staged_elem(&#base, #st::__macro_support::Staged(#v))))
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

    fn compound(&mut self, b: &syn::ExprBinary) -> TokenStream {
        let op = compound_to_binary(&b.op);
        if let Some(place) = self.field_place(&b.left) {
            let st = s();
            let v = self.expr(&b.right);
            return quote_spanned!(b.span()=> {
                let __strata_p = #place;
                #st::__macro_support::store_field(&__strata_p, #st::builder::FieldAccess::load(&__strata_p) #op (#v))
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
    fn expr_place(&mut self, e: &Expr) -> TokenStream {
        match e {
            Expr::Path(p) if p.path.get_ident().is_some() => quote!(#p),
            _ => self.expr(e),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Control flow

    fn if_stmt(&mut self, i: &syn::ExprIf) -> TokenStream {
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
        let st = s();
        let c = self.expr(&i.cond);
        self.depth += 1;
        let then = self.block(&i.then_branch, false);
        let els = match &i.else_branch {
            None => quote!(),
            Some((_, e)) => {
                let e = match &**e {
                    Expr::If(ei) => self.if_stmt(ei),
                    Expr::Block(b) => self.block(&b.block, false),
                    other => self.expr_stmt(other),
                };
                quote!(.else_(|| { #e; }))
            }
        };
        self.depth -= 1;
        quote_spanned!(i.if_token.span=> { #st::builder::if_(#c, || #then) #els; })
    }

    /// An `if` whose value is used.
    fn value_if(&mut self, i: &syn::ExprIf, name: &str) -> TokenStream {
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
        let st = s();
        let pure = i.then_branch.stmts.len() == 1
            && block_tail(&i.then_branch).is_some_and(|t| self.is_pure(t))
            && self.is_pure(els);
        let c = self.expr(&i.cond);
        if pure {
            let a = self.expr(block_tail(&i.then_branch).expect("tail"));
            let b = self.value_arm(els, name);
            return quote_spanned!(i.if_token.span=> #st::__macro_support::select(#c, #a, #b));
        }
        let slot = self.fresh("slot");
        self.depth += 1;
        let then = self.block(&i.then_branch, true);
        let e = self.value_arm(els, name);
        self.depth -= 1;
        quote_spanned!(i.if_token.span=> {
            let #slot = #st::__macro_support::Slot::new(#name);
            #st::builder::if_(#c, || #slot.put(#then)).else_(|| #slot.put({ #e }));
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
                    quote!(#[allow(unused_variables)] let #id = ::strata::builder::current_loop();),
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

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> TokenStream {
        let st = s();
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
                quote_spanned!(f.for_token.span=> #st::__macro_support::for_range(#a, #b, |#pat| #body))
            }
            Some(s) => {
                quote_spanned!(f.for_token.span=> #st::__macro_support::for_step(#a, #b, #s, |#pat| #body))
            }
        }
    }

    fn while_loop(&mut self, w: &syn::ExprWhile) -> TokenStream {
        if let Expr::Let(l) = &*w.cond {
            return self.error(err(l, "`while let` is not supported in kernels; use `while cond` or `loop` with `if .. { break }`"));
        }
        let st = s();
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
        quote_spanned!(w.while_token.span=> #st::builder::while_(|| #c, || #body))
    }

    fn loop_loop(&mut self, l: &syn::ExprLoop) -> TokenStream {
        let st = s();
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
        quote_spanned!(l.loop_token.span=> #st::builder::loop_(|| #body))
    }

    fn jump(
        &mut self,
        tokens: &dyn ToTokens,
        label: &Option<syn::Lifetime>,
        brk: bool,
    ) -> TokenStream {
        let st = s();
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
                        quote_spanned!(tokens.span()=> #st::builder::break_())
                    } else {
                        quote_spanned!(tokens.span()=> #st::builder::continue_())
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

    // -----------------------------------------------------------------------------------------
    // Expressions in value position

    pub fn expr(&mut self, e: &Expr) -> TokenStream {
        let st = s();
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
                    _ => quote_spanned!(ix.bracket_token.span.join()=> #st::__macro_support::Load::load(&#base, #i)),
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
                quote_spanned!(r.span()=> #st::builder::return_())
            }
            Expr::Field(f) => {
                // `ps[i].vel.x`: one field of an element of a buffer of structs, read alone.
                if let Some(place) = self.field_place(e) {
                    return quote_spanned!(f.span()=> #st::builder::FieldAccess::load(&#place));
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

    /// `buf[i].a.b[2]` where `buf` is a buffer: the place of that field of element `i`
    /// (`buf.item(i).a.b[2]`), read or written alone. `None` for any other expression.
    fn field_place(&mut self, e: &Expr) -> Option<TokenStream> {
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
        let st = s();
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
                        return quote_spanned!(c.span()=> #st::builder::#id #tf (#(#args),*));
                    }
                    if SUPPORT_BUILTINS.contains(&f.as_str()) {
                        return quote_spanned!(c.span()=> #st::__macro_support::#id #tf (#(#args),*));
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

/// `init` as a call of the `var` built-in (`var(init)` or `var::<T>(init)`), unless a local
/// binding shadows the name.
fn as_var_call<'a>(init: &'a Expr, cx: &Cx) -> Option<&'a syn::ExprCall> {
    let Expr::Call(c) = init else { return None };
    let Expr::Path(p) = &*c.func else { return None };
    (p.qself.is_none()
        && p.path.segments.len() == 1
        && p.path.segments[0].ident == "var"
        && c.args.len() == 1
        && cx.lookup("var").is_none())
    .then_some(c)
}

/// The tokens of `let x = init` for an error that spans both.
fn l_span(id: &Ident, init: &Expr) -> TokenStream {
    quote!(#id #init)
}

fn bind_pat(cx: &mut Cx, p: &Pat, kind: Kind) {
    match p {
        Pat::Ident(pi) => cx.bind(&pi.ident.to_string(), kind),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| bind_pat(cx, e, kind)),
        Pat::Type(t) => bind_pat(cx, &t.pat, kind),
        Pat::Reference(r) => bind_pat(cx, &r.pat, kind),
        Pat::Paren(pp) => bind_pat(cx, &pp.pat, kind),
        _ => {}
    }
}

fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        Expr::Group(g) => strip_parens(&g.expr),
        _ => e,
    }
}

fn block_tail(b: &Block) -> Option<&Expr> {
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => Some(e),
        _ => None,
    }
}

fn is_compound(op: &BinOp) -> bool {
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
