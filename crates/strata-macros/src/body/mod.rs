//! Translation of a kernel body from plain Rust into calls of the strata builder.
//!
//! Every value is either a *host* value (a literal, a constant, a `#[stage]` parameter, a host
//! loop counter, or a `let` whose initializer uses only host values), which stays ordinary Rust
//! and is a compile-time constant of the kernel, or a *device* value (parameters, built-ins,
//! buffer reads, results of device functions and anything computed from them), which is an
//! `Expr<T>` recorded into the kernel. Control flow on host values is ordinary Rust (unrolled
//! or specialized at build time); control flow on device values becomes `if_`, `for_range`,
//! `while_`, `loop_`.
//!
//! The translator is one state, [`Cx`], whose methods live in rooms: `analysis` (host or
//! device), `stmts` (blocks, statements, `let`), `control` (`if` and loops), `expr`
//! (expressions and operators), `places` (assignments to memory and variables) and `names`
//! (the built-ins, and what kernels reject with the messages that say why).
//!
//! **The decisions.** Whether a `let mut` is a device variable depends on what is assigned to
//! it later, so the crate's entry point runs the translation again, with the variables found
//! so far made device variables, until no more are found. `#[host]` and `#[device]` on a loop
//! are checked against where the translation decided it runs ([`Cx::check_loop_attr`]). A
//! typed host operand ([`Cx::is_typed_host`]) beside a device value in an operator, a
//! comparison, a device `for` bound or an assignment is wrapped in `Staged` (the
//! `staged_pair`, `staged_for` and `staged_elem` hooks), which converts it to the device
//! value's type when its value fits; untyped host values stay unwrapped, so Rust's literal
//! inference keeps working. Named gathers at the top level of the body ([`Cx::named_gather`])
//! make the kernel function return the tuple of their handles ([`Cx::kernel_block`]).
//! `buf[i].a.b[k]` (read, assignment, compound assignment) becomes a field place of element
//! `i`, while `p.a` on a struct value is plain Rust field access.
//!
//! **The generated code** calls `strata::__macro_support`, wrappers over the builder made for
//! type inference: a value that becomes an `Expr<T>` is taken as `IntoExpr<T>`, which has no
//! widening conversions, so `T` is inferred from whichever argument fixes it; `Slot` carries
//! the value of an `if` used as a value, `Load` indexes buffers, arrays and variables alike.
//!
//! **Spans.** The builder records where each statement was made with `#[track_caller]`
//! (`std::panic::Location::caller()`, which becomes the `SourceLoc` of a load, store or atomic
//! and the place named by a recording error). For a call in generated code that location is
//! the span of the whole call expression, and a call whose tokens mix the user's spans with
//! `Span::call_site()` (a `::strata` spliced in from a `quote!`) gets the macro's call site:
//! the line of the `#[kernel]` attribute. So every call into strata that stands for an
//! expression of the body is written inside one `quote_spanned!(user_span=> ::strata::..(..))`,
//! every token of it at the user's span.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::HashSet;
use syn::{Block, Error, Expr, Ident, Pat, Stmt};

mod analysis;
mod control;
mod expr;
mod names;
mod places;
mod stmts;

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

fn err(tokens: impl ToTokens, msg: &str) -> Error {
    Error::new_spanned(tokens, msg)
}

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
