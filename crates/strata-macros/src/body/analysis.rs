//! Host or device: which values of a kernel body stay ordinary Rust (host values, staged into
//! the kernel as constants) and which are recorded (device values), whether a host value's type
//! is fixed by its definition (and so is wrapped in `Staged` beside a device value), and which
//! expressions are pure enough to evaluate unconditionally (an `if` as `select`).

use super::{block_tail, places::is_compound, Cx, Kind};
use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, UnOp};

impl Cx {
    /// Whether `e` is a host value whose Rust type is fixed by its definition rather than
    /// inferred from where it is used: a constant or other item from outside the kernel
    /// (`W`, `u32::MAX`), a suffixed literal (`16usize`), a cast, a typed host binding, or
    /// arithmetic and method calls on those. Beside a device value such a value is wrapped in
    /// `Staged`, which converts it to the device value's type when it fits; untyped host values
    /// (`2`, `let k = 4;`) are left to Rust's inference.
    pub(super) fn is_typed_host(&self, e: &Expr) -> bool {
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
    pub(super) fn staged_operand(&self, e: &Expr, tokens: TokenStream) -> TokenStream {
        if self.is_host(e) && self.is_typed_host(e) {
            quote_spanned!(e.span()=> ::strata::__macro_support::Staged(#tokens))
        } else {
            tokens
        }
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
    pub(super) fn is_pure(&self, e: &Expr) -> bool {
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
}
