//! Pure expressions: the work-item built-ins, the operators, [`Expr`] itself and the
//! interning arena ([`ExprArena`]) in which identical expressions are one [`ExprId`].

use super::{ExprId, IdVec, Literal, MathFn, ParamId, Scalar, StubId, Type, ValueId};
use std::collections::{HashMap, HashSet};

/// Work-item coordinates and sizes. The dimension is 0, 1 or 2; dimensions beyond the launch's
/// have id 0 and size 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Builtin {
    /// Index of the work-item in the whole launch (`u32`).
    GlobalId(u8),
    /// Index of the work-item in its work-group (`u32`).
    LocalId(u8),
    /// Index of the work-group (`u32`).
    GroupId(u8),
    /// Number of work-items in the launch (`u32`).
    GlobalSize(u8),
    /// Number of work-items in a work-group (`u32`).
    LocalSize(u8),
    /// Number of work-groups (`u32`).
    NumGroups(u8),
    /// Linear index of the work-item in its work-group: `x + y*lx + z*lx*ly` (`u32`).
    LocalLinearId,
    /// Linear index of the work-group: `x + y*gx + z*gx*gy` (`u32`).
    GroupLinearId,
    /// Number of work-items in this work-item's sub-group (`u32`): the device's sub-group size,
    /// or less in the last sub-group of a work-group whose size is not a multiple of it. See
    /// [`GroupScope::SubGroup`](super::GroupScope::SubGroup).
    SubGroupSize,
    /// The device's sub-group size (`u32`, at most 32): the size of every sub-group but
    /// perhaps the last.
    MaxSubGroupSize,
    /// Number of sub-groups in the work-group (`u32`).
    NumSubGroups,
    /// Index of this work-item's sub-group in the work-group: `local_linear_id / size` (`u32`).
    SubGroupId,
    /// Index of the work-item in its sub-group, its *lane*: `local_linear_id % size` (`u32`).
    SubGroupLocalId,
}

impl Builtin {
    /// Name used by the text form and the builder.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::GlobalId(_) => "global_id",
            Builtin::LocalId(_) => "local_id",
            Builtin::GroupId(_) => "group_id",
            Builtin::GlobalSize(_) => "global_size",
            Builtin::LocalSize(_) => "local_size",
            Builtin::NumGroups(_) => "num_groups",
            Builtin::LocalLinearId => "local_linear_id",
            Builtin::GroupLinearId => "group_linear_id",
            Builtin::SubGroupSize => "sub_group_size",
            Builtin::MaxSubGroupSize => "max_sub_group_size",
            Builtin::NumSubGroups => "num_sub_groups",
            Builtin::SubGroupId => "sub_group_id",
            Builtin::SubGroupLocalId => "sub_group_local_id",
        }
    }

    /// The value of a sub-group built-in for the work-item with local linear id `lid` in a
    /// work-group of `group_size` work-items, on a device whose sub-group size is `sg`; `None`
    /// for the other built-ins. The one definition of these values: the CPU backends call it,
    /// the code generators write the same formulas.
    pub fn sub_group_value(self, lid: u32, group_size: u32, sg: u32) -> Option<u32> {
        Some(match self {
            Builtin::SubGroupSize => sg.min(group_size - lid / sg * sg),
            Builtin::MaxSubGroupSize => sg,
            Builtin::NumSubGroups => group_size.div_ceil(sg),
            Builtin::SubGroupId => lid / sg,
            Builtin::SubGroupLocalId => lid % sg,
            _ => return None,
        })
    }

    /// Whether this built-in has the same value in every work-item of a work-group: the
    /// work-group's ids and the launch's sizes.
    pub fn same_in_group(self) -> bool {
        matches!(
            self,
            Builtin::GroupId(_)
                | Builtin::GlobalSize(_)
                | Builtin::LocalSize(_)
                | Builtin::NumGroups(_)
                | Builtin::GroupLinearId
                | Builtin::MaxSubGroupSize
                | Builtin::NumSubGroups
        )
    }

    /// Whether this is one of the sub-group built-ins, whose values depend on the device's
    /// sub-group size.
    pub fn is_sub_group(self) -> bool {
        self.sub_group_value(0, 1, 1).is_some()
    }

    /// The dimension argument, if the built-in takes one.
    pub fn dim(self) -> Option<u8> {
        match self {
            Builtin::GlobalId(d)
            | Builtin::LocalId(d)
            | Builtin::GroupId(d)
            | Builtin::GlobalSize(d)
            | Builtin::LocalSize(d)
            | Builtin::NumGroups(d) => Some(d),
            Builtin::LocalLinearId
            | Builtin::GroupLinearId
            | Builtin::SubGroupSize
            | Builtin::MaxSubGroupSize
            | Builtin::NumSubGroups
            | Builtin::SubGroupId
            | Builtin::SubGroupLocalId => None,
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    /// Arithmetic negation (wrapping for integers).
    Neg,
    /// Bitwise complement for integers, logical not for `bool`.
    Not,
}

/// Binary operators. Both operands have the same type; comparisons yield `bool` (of the same
/// width); shifts take an unsigned or signed amount of the same type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integers round towards zero)
    Div,
    /// `%` (sign of the dividend; floats: `fmod`)
    Rem,
    /// `&` (logical and for `bool`)
    And,
    /// `|` (logical or for `bool`)
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>` (arithmetic for signed integers)
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinaryOp {
    /// `true` for the six comparisons.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::Xor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        }
    }
}

/// A pure expression.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Expr {
    /// A scalar constant.
    Literal(Literal),
    /// The value of scalar parameter `n` (an index into
    /// [`Function::params`](super::Function::params)).
    Param(ParamId),
    /// The number of elements of buffer parameter `n` (`u32`).
    BufferLen(ParamId),
    /// A value defined by a statement.
    Value(ValueId),
    /// A work-item coordinate or size.
    Builtin(Builtin),
    /// A unary operation.
    Unary(UnaryOp, ExprId),
    /// A binary operation.
    Binary(BinaryOp, ExprId, ExprId),
    /// `cond ? a : b`, componentwise when `cond` is a vector of the same width.
    Select(ExprId, ExprId, ExprId),
    /// Value conversion to another component type (same width); see the module docs.
    Cast(ExprId, Scalar),
    /// Reinterpretation of the bits as another type of the same size.
    Bitcast(ExprId, Type),
    /// A built-in function.
    Math(MathFn, Vec<ExprId>),
    /// A vector with every component equal to a scalar.
    Splat(ExprId, u8),
    /// A vector from its scalar components.
    Compose(Vec<ExprId>),
    /// Component `n` of a vector.
    Extract(ExprId, u8),
    /// A call of stub function `n` ([`Function::stubs`](super::Function::stubs)).
    Stub(StubId, Vec<ExprId>),
}

/// The expressions of one function, interned: adding an expression that already exists returns
/// the existing id.
#[derive(Clone, Default, Debug)]
pub struct ExprArena {
    pub(super) exprs: IdVec<ExprId, (Expr, Type)>,
    /// The ids by expression, hashed with the fingerprint's fast hash: every expression a
    /// kernel records goes through here, and patterns record their kernels at every call.
    index: HashMap<Expr, ExprId, std::hash::BuildHasherDefault<super::fingerprint::Hasher128>>,
}

impl ExprArena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `expr` of type `ty`, or returns the id it already has.
    pub fn intern(&mut self, expr: Expr, ty: Type) -> ExprId {
        match self.index.entry(expr) {
            std::collections::hash_map::Entry::Occupied(o) => *o.get(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let id = self.exprs.push((v.key().clone(), ty));
                *v.insert(id)
            }
        }
    }

    /// The expression with id `id`.
    pub fn get(&self, id: ExprId) -> &Expr {
        &self.exprs[id].0
    }

    /// The type of expression `id`.
    pub fn ty(&self, id: ExprId) -> Type {
        self.exprs[id].1
    }

    /// Number of expressions.
    pub fn len(&self) -> usize {
        self.exprs.len()
    }

    /// `true` when there are no expressions.
    pub fn is_empty(&self) -> bool {
        self.exprs.is_empty()
    }

    /// Iterates over `(id, expr, type)` in creation order (operands before their users).
    pub fn iter(&self) -> impl Iterator<Item = (ExprId, &Expr, Type)> {
        self.exprs.iter_enumerated().map(|(id, (e, t))| (id, e, *t))
    }

    /// The literal value of `id`, if it is a literal.
    pub fn literal(&self, id: ExprId) -> Option<Literal> {
        match self.get(id) {
            Expr::Literal(l) => Some(*l),
            _ => None,
        }
    }
}

/// Calls `visit` on every expression `roots` read, themselves included, each once, until it
/// returns `false`; returns whether it never did. Operands are shared (`x + x`, a value used
/// twice), so a walk of the tree instead of the graph can take time exponential in its size.
pub fn visit_exprs(
    exprs: &ExprArena,
    roots: Vec<ExprId>,
    visit: &mut impl FnMut(&Expr) -> bool,
) -> bool {
    let mut seen = HashSet::new();
    let mut stack = roots;
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let e = exprs.get(id);
        if !visit(e) {
            return false;
        }
        stack.extend(expr_operands(e));
    }
    true
}

/// Whether `ok` holds for `root` and every expression it reads ([`visit_exprs`]).
pub fn all_exprs(exprs: &ExprArena, root: ExprId, mut ok: impl FnMut(&Expr) -> bool) -> bool {
    visit_exprs(exprs, vec![root], &mut ok)
}

/// The operands of an expression.
pub fn expr_operands(expr: &Expr) -> Vec<ExprId> {
    match expr {
        Expr::Literal(_)
        | Expr::Param(_)
        | Expr::BufferLen(_)
        | Expr::Value(_)
        | Expr::Builtin(_) => vec![],
        Expr::Unary(_, a)
        | Expr::Cast(a, _)
        | Expr::Bitcast(a, _)
        | Expr::Splat(a, _)
        | Expr::Extract(a, _) => vec![*a],
        Expr::Binary(_, a, b) => vec![*a, *b],
        Expr::Select(c, a, b) => vec![*c, *a, *b],
        Expr::Math(_, args) | Expr::Compose(args) | Expr::Stub(_, args) => args.clone(),
    }
}
