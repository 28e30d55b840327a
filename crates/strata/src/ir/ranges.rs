//! The range and affine-index analysis ([`Proof`]): which accesses to memory are in bounds for
//! every work-item that runs them, so that the backends that test bounds (the compiled CPU
//! backend, checked mode's instrumentation in [`super::checked`]) may leave the test out.
//!
//! **What it knows.** Walking the statement tree, the analysis keeps *facts* `x <= y + c`
//! between expressions (both as the values they hold in their type; `c` a constant):
//! - the conditions of the enclosing `if`s (each conjunct `x < y`, `x <= y`, `x > y`, `x >= y`,
//!   `x == y` of an integer comparison; in the `else` branch the negation), and after an `if`
//!   whose `then` branch ends in `return`, `break` or `continue` (and which has no `else`), the
//!   negation of its condition for the rest of the block;
//! - the counter of a `for` loop: `var <= end - 1` for a positive step (literal, or any
//!   unsigned step), `var >= end + 1` for a negative literal step, and `var >= start` (or
//!   `var <= start`) when the counter cannot wrap around past `end` (the step's overflow is
//!   ruled out by the range of `end`).
//!
//! From them it derives, per expression, a numeric range (the values it may hold: literals,
//! the ids' and sizes' signs, `+ - *`, division and remainder by positive numbers, `&`,
//! shifts by literals, exact casts, `min`, `max`, `select`; an operation that may wrap gives
//! its type's whole range) and *symbolic upper bounds* `e <= t1 + t2 + ... + c`, whose terms
//! are launch-uniform leaves (integer scalar parameters, buffer lengths and the work-group's
//! sizes, which bound the local ids), e.g. `i + off` under `i < n` is at most `n + off - 1`,
//! and a constant `k > 0` times a non-negative value (or shifted left by a literal) is at most
//! `k` times its bounds, a term repeated `k` times (`local_id(1) * 16 + p` is at most
//! `16 * local_size(1) - 16 + p`; at most 64 terms in all).
//!
//! **Verdicts.** An access at `index` of memory with `len` elements is
//! - [`Verdict::Proven`] when `index >= 0` and `index < len` follow from the facts (`len` a
//!   literal, as for fixed-size local and private arrays; or a bound `len(buffer) - 1`);
//! - [`Verdict::ProvenIf`] when it is in bounds provided conditions on the launch's
//!   arguments hold ([`Precondition`]: `n <= len(a)` for `a[i]` under `i < n`; `len(c) <=
//!   len(a)` for `a[i]` under `i < len(c)`; `local_size(0) + 240 <= 256` for a fixed-size
//!   local array's `tile[p * 16 + local_id(0)]` at `p = 15`; for a *pitched* index
//!   `row * w + col` of a buffer under `row < h && col < w`, `w` and `h` terms, `h * w <=
//!   len(a)` and `h * w <= 2^31` (no wrap), a [`Term::Product`]; for an unsigned index
//!   whose sum or product may wrap, `i + off` under `i < n`, the bound's sum twice: `n + off
//!   <= len(a)` and `n + off <= u32::MAX`, which rules the wrap out, as a fixed-size array's
//!   length below 2^32 does), which a backend tests once (per launch, per work-group or per
//!   loop) rather than per access;
//! - where neither holds, for a fixed-size array, [`Verdict::ProvenIf`] with `local_size(d)
//!   <= 2^e` for the dimensions whose local id or size the index reads, when the index's
//!   numeric range with every such local id below `2^e` (and each size at most `2^e`) lies in
//!   bounds: the largest such `2^e` up to `2^12`, found by bisection (the ranges only widen
//!   as it grows). This proves the indices that divisions and remainders derive from the
//!   local ids, which no sum of terms bounds: SGEMM's layout of register tiles, `ty = l / 32
//!   / 2 * 4 + l % 32 / 8` into a double-buffered padded tile (issue 31);
//! - [`Verdict::Unproven`] otherwise.
//!
//! An access is keyed by its memory and its index expression; where the same pair occurs more
//! than once in a kernel, the verdict holds for all of them (the weakest, with the union of
//! their preconditions). Everything is about the values work-items compute, so a verdict holds
//! for each work-item that runs the access, whatever the others do: it is valid for every
//! active lane of a vector and for every work-item of a work-group.
//!
//! What it does not prove: two-dimensional indices `row * w + col` with `w` not a constant
//! other than the pitched form above (the bound `h * w` is not linear in the terms: only that
//! form's is taken, as one product term), indices loaded from memory, launch-sized local
//! arrays, and anything that may wrap (`i - 1` at `i = 0`, `i + off` where `off` is unbounded
//! unless the bound is taken as a precondition).

use super::{
    ArrayLen, BinaryOp, Builtin, Expr, ExprId, Function, MathFn, Mem, ParamId, ParamKind, Scalar,
    Stmt, UnaryOp, ValueId,
};
use std::collections::{HashMap, HashSet};

/// A launch-uniform value a [`Precondition`] adds up.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Term {
    /// An integer scalar parameter (its value, signed or not as its type says).
    Param(ParamId),
    /// The element count of a buffer parameter, as [`Expr::BufferLen`] gives it (`u32`).
    Len(ParamId),
    /// The work-group's size in a dimension (0 to 2), as [`Builtin::LocalSize`] gives it.
    LocalSize(u8),
    /// The product of two of the above (not products themselves), each as it gives it: the
    /// area `h * w` of a pitched two-dimensional index `row * w + col` (see
    /// [`Verdict::ProvenIf`]). Up to 64 bits; a backend sums a precondition with one in more
    /// than 64.
    Product(Factor, Factor),
}

/// A [`Term`] that is not a product, as a factor of [`Term::Product`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Factor {
    /// As [`Term::Param`].
    Param(ParamId),
    /// As [`Term::Len`].
    Len(ParamId),
    /// As [`Term::LocalSize`].
    LocalSize(u8),
}

impl Factor {
    /// The one factor `terms` are (`None` for several, or a product).
    fn of_terms(terms: &[Term]) -> Option<Factor> {
        match terms {
            [t] => Factor::of(*t),
            _ => None,
        }
    }

    /// `t` as a factor (`None` for a product).
    fn of(t: Term) -> Option<Factor> {
        match t {
            Term::Param(p) => Some(Factor::Param(p)),
            Term::Len(p) => Some(Factor::Len(p)),
            Term::LocalSize(d) => Some(Factor::LocalSize(d)),
            Term::Product(..) => None,
        }
    }
}

/// The right side of a [`Precondition`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Limit {
    /// The real element count of a buffer parameter.
    Len(ParamId),
    /// A fixed-size local array's element count.
    Fixed(u32),
}

/// A condition on the launch's arguments: `terms[0] + terms[1] + ... + offset <= limit`,
/// summed without wrapping (at most 64 terms, each at most 32-bit, `|offset| < 2^48`), with a
/// buffer's real element count or a local array's on the right.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Precondition {
    /// The summed terms, sorted; a term repeats where a constant multiplies it (`16 *
    /// local_size(1) + local_size(0)` is sixteen `LocalSize(1)` and one `LocalSize(0)`).
    pub terms: Vec<Term>,
    /// The constant added.
    pub offset: i64,
    /// What bounds the sum.
    pub limit: Limit,
}

impl Precondition {
    /// Whether `self` implies `other`: the same sum against the same limit with an offset at
    /// least `other`'s, or against a constant with at least `other`'s offset minus its
    /// constant (`local_size(0) <= 256` implies `local_size(0) <= 1024`).
    pub fn implies(&self, other: &Precondition) -> bool {
        if self.terms != other.terms {
            return false;
        }
        match (self.limit, other.limit) {
            (Limit::Fixed(a), Limit::Fixed(b)) => {
                self.offset as i128 - a as i128 >= other.offset as i128 - b as i128
            }
            (a, b) => a == b && self.offset >= other.offset,
        }
    }

    /// Adds `self` to a set of preconditions kept without one that another implies (a
    /// tile's row at offsets 0 to 15 needs only offset 15's test).
    pub fn add_to(&self, set: &mut Vec<Precondition>) {
        if set.iter().any(|q| q.implies(self)) {
            return;
        }
        set.retain(|q| !self.implies(q));
        set.push(self.clone());
    }
}

/// What the analysis says of an access.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// In bounds for every work-item that runs it.
    Proven,
    /// In bounds whenever every precondition holds.
    ProvenIf(Vec<Precondition>),
    /// Not known to be in bounds.
    Unproven,
}

impl Verdict {
    /// The verdict for two occurrences of the same access: both must hold.
    fn meet(self, other: Verdict) -> Verdict {
        match (self, other) {
            (Verdict::Unproven, _) | (_, Verdict::Unproven) => Verdict::Unproven,
            (Verdict::Proven, v) | (v, Verdict::Proven) => v,
            (Verdict::ProvenIf(mut a), Verdict::ProvenIf(b)) => {
                for p in b {
                    if !a.contains(&p) {
                        a.push(p);
                    }
                }
                Verdict::ProvenIf(a)
            }
        }
    }
}

/// The verdicts of a kernel's accesses (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Proof {
    accesses: HashMap<(Mem, ExprId), Verdict>,
    /// [`Proof::offset`]'s answers (`None` where an occurrence had none).
    offsets: HashMap<(Mem, ExprId), Option<(ExprId, i64)>>,
}

const UNPROVEN: Verdict = Verdict::Unproven;

impl Proof {
    /// Analyzes every access of `f`.
    pub fn of(f: &Function) -> Proof {
        let mut a = Analysis {
            f,
            facts: Vec::new(),
            lets: HashMap::new(),
            loops: HashMap::new(),
            ranges: HashMap::new(),
            uppers: HashMap::new(),
            busy: HashMap::new(),
            busy_upper: HashMap::new(),
            cycle: None,
            cycle_ranges: HashMap::new(),
            cycle_uppers: HashMap::new(),
            group_max: [None; 3],
            out: HashMap::new(),
            offsets: HashMap::new(),
        };
        a.block(&f.body);
        Proof {
            accesses: a.out,
            offsets: a.offsets,
        }
    }

    /// Where the access at `index` of `mem` is at `a + k` (`k` a constant, negative for a
    /// difference) and, wherever its verdict holds, `a` and `a + k` are at least 0 and
    /// `a + k` does not wrap in its type: `(a, k)`, so that a backend may address element `a`
    /// and add `k` elements as a constant offset (one address for `tile[r + 0]` to
    /// `tile[r + 15]`, and for a stencil's `(row * w + i) - 1`, `+ 0`, `+ 1`). Only for an
    /// access the verdict proves (once its preconditions are tested), or whose sum cannot
    /// wrap at all.
    pub fn offset(&self, mem: Mem, index: ExprId) -> Option<(ExprId, i64)> {
        self.offsets.get(&(mem, index)).copied().flatten()
    }

    /// The verdict of the access at `index` of `mem` ([`Verdict::Unproven`] for an access the
    /// kernel does not have).
    pub fn verdict(&self, mem: Mem, index: ExprId) -> &Verdict {
        self.accesses.get(&(mem, index)).unwrap_or(&UNPROVEN)
    }

    /// Whether the access at `index` of `mem` is [`Verdict::Proven`].
    pub fn proven(&self, mem: Mem, index: ExprId) -> bool {
        matches!(self.verdict(mem, index), Verdict::Proven)
    }
}

/// `x <= y + c`.
#[derive(Clone, Copy, Debug)]
struct Fact {
    x: ExprId,
    y: ExprId,
    c: i128,
}

/// `e <= sum(terms) + c`.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Bound {
    terms: Vec<Term>,
    c: i128,
    /// Derived through an unsigned addition or product that may wrap. The bound still holds
    /// (a wrapped sum or product is smaller), but only a limit below 2^32 ([`Limit::Fixed`])
    /// rules the wrap out: then every partial sum and product is below the limit, and the
    /// lanes of a vector are consecutive.
    wraps: bool,
}

/// Bounds kept per expression, at most.
const MAX_BOUNDS: usize = 6;

/// Terms of a bound, at most (a term repeats where a constant multiplies it: `16 *
/// local_size(1)` is sixteen terms), so that a backend sums them (each at most 32 bits) and an
/// offset below 2^48 in 64 bits without wrapping.
const MAX_TERMS: usize = 64;

struct Analysis<'f> {
    f: &'f Function,
    facts: Vec<Fact>,
    lets: HashMap<ValueId, ExprId>,
    /// Each `for` counter: start, end, step.
    loops: HashMap<ValueId, (ExprId, ExprId, ExprId)>,
    /// Memoized ranges and bounds under the current facts (cleared when they change).
    ranges: HashMap<ExprId, (i128, i128)>,
    uppers: HashMap<ExprId, Vec<Bound>>,
    /// The expressions whose range (bounds) is being computed, each with its depth among
    /// the computations under way (from 1), and the least depth of those met again (a
    /// cycle) since the current computation began.
    busy: HashMap<ExprId, usize>,
    busy_upper: HashMap<ExprId, usize>,
    cycle: Option<usize>,
    /// The ranges (bounds) computed inside a cycle, each with the depth of the computation
    /// the cycle returned to, kept until that computation ends: not for good (they may be
    /// less precise than they will be outside the cycle), but a walk that computed them again
    /// would compute a shared operand once per path (`z + z`, `z` another such sum:
    /// exponentially often).
    cycle_ranges: HashMap<ExprId, ((i128, i128), usize)>,
    cycle_uppers: HashMap<ExprId, (Vec<Bound>, usize)>,
    /// While [`Analysis::within_group`] tries bounds on the work-group's size: in each
    /// dimension with one, the local size at most this (so the local id below it), in the
    /// ranges computed meanwhile.
    group_max: [Option<i128>; 3],
    out: HashMap<(Mem, ExprId), Verdict>,
    offsets: HashMap<(Mem, ExprId), Option<(ExprId, i64)>>,
}

/// The values of integer scalar type `s`; `None` for other types.
fn type_range(s: Scalar) -> Option<(i128, i128)> {
    if s == Scalar::Bool {
        return Some((0, 1));
    }
    if !s.is_int() {
        return None;
    }
    let bits = s.bits();
    Some(if s.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    })
}

const ANY: (i128, i128) = (i128::MIN / 4, i128::MAX / 4);

impl Analysis<'_> {
    fn push_fact(&mut self, x: ExprId, y: ExprId, c: i128) {
        // `a + k <= y + c` with `a + k` exact (no wrap) is `a <= y + c - k`; `x <= b + k + c`
        // with `b + k` exact is `x <= b + (c + k)`: the guard `i + 1 < w` bounds `i` itself
        // (`i <= w - 2`). (Exact under the facts before this one.)
        let (sx, sy) = (self.shifted(x), self.shifted(y));
        self.facts.push(Fact { x, y, c });
        if let Some((a, k)) = sx {
            self.facts.push(Fact { x: a, y, c: c - k });
        }
        if let Some((b, k)) = sy {
            self.facts.push(Fact { x, y: b, c: c + k });
        }
        self.ranges.clear();
        self.uppers.clear();
    }

    /// `e` as `a + k` (`k` a constant, negative for a subtraction) where the sum is exact.
    fn shifted(&mut self, e: ExprId) -> Option<(ExprId, i128)> {
        let (a, k) = self.constant_step(e, false)?;
        self.exact(e).map(|_| (a, k))
    }

    /// `e` as `a + k` or `a - c` (`k = -c`), the constant operand `k` or `c` (at least 0 where
    /// `nonnegative`): `(a, k)`, whether or not the operation wraps.
    fn constant_step(&mut self, e: ExprId, nonnegative: bool) -> Option<(ExprId, i128)> {
        let fits = |l: i128| !nonnegative || l >= 0;
        match *self.f.exprs.get(e) {
            Expr::Binary(BinaryOp::Add, a, b) => match (self.range(a), self.range(b)) {
                (_, (l, h)) if l == h && fits(l) => Some((a, l)),
                ((l, h), _) if l == h && fits(l) => Some((b, l)),
                _ => None,
            },
            Expr::Binary(BinaryOp::Sub, a, b) => match self.range(b) {
                (l, h) if l == h && fits(l) => Some((a, -l)),
                _ => None,
            },
            _ => None,
        }
    }

    fn truncate(&mut self, mark: usize) {
        if self.facts.len() != mark {
            self.facts.truncate(mark);
            self.ranges.clear();
            self.uppers.clear();
        }
    }

    fn block(&mut self, b: &[Stmt]) {
        let mark = self.facts.len();
        for s in b {
            self.stmt(s);
        }
        self.truncate(mark);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { value, expr } => {
                self.lets.insert(*value, *expr);
            }
            Stmt::Load { mem, index, .. }
            | Stmt::Store { mem, index, .. }
            | Stmt::Atomic { mem, index, .. }
            | Stmt::AtomicLoad { mem, index, .. } => {
                let (v, off) = self.judge(*mem, *index);
                let v = match self.out.remove(&(*mem, *index)) {
                    Some(old) => old.meet(v),
                    None => v,
                };
                self.out.insert((*mem, *index), v);
                // Every occurrence must give the offset (each holds where its facts do).
                let off = match self.offsets.get(&(*mem, *index)) {
                    Some(&old) if old != off => None,
                    _ => off,
                };
                self.offsets.insert((*mem, *index), off);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let mark = self.facts.len();
                self.assume(*cond, true);
                self.block(then);
                self.truncate(mark);
                self.assume(*cond, false);
                self.block(otherwise);
                self.truncate(mark);
                let leaves = matches!(
                    then.last(),
                    Some(Stmt::Return | Stmt::Break(_) | Stmt::Continue(_))
                );
                if leaves && otherwise.is_empty() {
                    // The rest of the block runs only where the condition was false.
                    self.assume(*cond, false);
                }
            }
            Stmt::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                self.loops.insert(*var, (*start, *end, *step));
                self.block(body);
            }
            Stmt::Loop { body, .. } => self.block(body),
            Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. }
            | Stmt::Group { .. } => {}
        }
    }

    /// Adds the facts `cond == positive` gives.
    fn assume(&mut self, cond: ExprId, positive: bool) {
        // Each conjunct once: conditions share operands (`g && g`, `g` another such
        // condition), so a walk of the tree could meet one exponentially often.
        let mut seen = HashSet::new();
        let mut todo = vec![(cond, positive)];
        while let Some((cond, positive)) = todo.pop() {
            if seen.insert((cond, positive)) {
                self.assume_one(cond, positive, &mut todo);
            }
        }
    }

    /// [`Analysis::assume`]'s step: the facts `cond` gives, or its conjuncts in `todo`.
    fn assume_one(&mut self, cond: ExprId, positive: bool, todo: &mut Vec<(ExprId, bool)>) {
        match *self.f.exprs.get(cond) {
            Expr::Unary(UnaryOp::Not, a) if self.f.exprs.ty(a).scalar == Scalar::Bool => {
                todo.push((a, !positive))
            }
            Expr::Binary(BinaryOp::And, a, b)
                if positive && self.f.exprs.ty(cond).scalar == Scalar::Bool =>
            {
                todo.extend([(b, true), (a, true)]);
            }
            Expr::Binary(BinaryOp::Or, a, b)
                if !positive && self.f.exprs.ty(cond).scalar == Scalar::Bool =>
            {
                todo.extend([(b, false), (a, false)]);
            }
            Expr::Binary(op, x, y) if op.is_comparison() => {
                let t = self.f.exprs.ty(x);
                if t.width != 1 || !t.scalar.is_int() {
                    return;
                }
                let op = if positive {
                    op
                } else {
                    match op {
                        BinaryOp::Lt => BinaryOp::Ge,
                        BinaryOp::Le => BinaryOp::Gt,
                        BinaryOp::Gt => BinaryOp::Le,
                        BinaryOp::Ge => BinaryOp::Lt,
                        BinaryOp::Eq => BinaryOp::Ne,
                        _ => BinaryOp::Eq,
                    }
                };
                match op {
                    BinaryOp::Lt => self.push_fact(x, y, -1),
                    BinaryOp::Le => self.push_fact(x, y, 0),
                    BinaryOp::Gt => self.push_fact(y, x, -1),
                    BinaryOp::Ge => self.push_fact(y, x, 0),
                    BinaryOp::Eq => {
                        self.push_fact(x, y, 0);
                        self.push_fact(y, x, 0);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The verdict of one access at `index` of `mem`, under the current facts, and its
    /// [`Proof::offset`].
    fn judge(&mut self, mem: Mem, index: ExprId) -> (Verdict, Option<(ExprId, i64)>) {
        let t = self.f.exprs.ty(index);
        if t.width != 1 || !t.scalar.is_int() {
            return (Verdict::Unproven, None);
        }
        let (lo, hi) = self.range(index);
        if lo < 0 {
            return (Verdict::Unproven, None);
        }
        let limit = match mem {
            Mem::Buffer(p) => Limit::Len(p),
            Mem::Field(v) => Limit::Len(self.f.fields[v].buffer),
            Mem::Local(l) => match self.f.locals[l].len {
                // `tile[p * 16 + local_id(0)]`: when `local_size(0) + p * 16 <= 256`.
                ArrayLen::Fixed(n) => Limit::Fixed(n),
                _ => return (Verdict::Unproven, None),
            },
            Mem::Private(p) => {
                let n = self.f.privates[p].count();
                return if hi < n as i128 {
                    (Verdict::Proven, None)
                } else {
                    (Verdict::Unproven, None)
                };
            }
        };
        let mut v = match limit {
            Limit::Fixed(n) if hi < n as i128 => Verdict::Proven,
            _ => {
                let bounds = self.upper(index);
                Self::bounds_verdict(bounds, limit)
            }
        };
        if v == Verdict::Unproven {
            if let Some((pitched, offset)) = self.pitched(index, limit) {
                return (pitched, Some(offset));
            }
            if let Limit::Fixed(n) = limit {
                if let Some(within) = self.within_group(index, n) {
                    return within;
                }
            }
        }
        // `a + k`, `a` at least 0: the sum does not wrap where no values make it (the range
        // is exact), or where `a`'s bounds plus `k` prove the access (below the limit,
        // below 2^31: so is the sum, in either type).
        let Some((a, k)) = self.split(index) else {
            return (v, None);
        };
        if self.exact(index).is_some() {
            return (v, Some((a, k as i64)));
        }
        if !matches!(limit, Limit::Fixed(n) if n <= i32::MAX as u32) {
            return (v, None);
        }
        let shifted: Vec<Bound> = self
            .upper(a)
            .into_iter()
            .map(|b| Bound {
                c: b.c.saturating_add(k as i128),
                ..b
            })
            .collect();
        let vs = Self::bounds_verdict(shifted, limit);
        match (&v, &vs) {
            (_, Verdict::Unproven) | (Verdict::Proven, Verdict::ProvenIf(_)) => (v, None),
            _ => {
                v = vs;
                (v, Some((a, k as i64)))
            }
        }
    }

    /// An index into an array of `n` elements that its numeric range keeps in bounds when
    /// the work-group is at most `2^e` work-items wide in each dimension whose local id or size
    /// the index reads: the largest such `2^e` up to `2^12`, as preconditions
    /// `local_size(d) <= 2^e` on those dimensions (SGEMM's `a_tile[(t & 1) * 528 + ty + 33 *
    /// kk]`, its row `ty` of register tiles derived from `local_id(0)` by divisions, which no
    /// sum of terms bounds). `None` where no such bound does (nor `2^0`). With the verdict,
    /// the access's [`Proof::offset`] where its sum cannot wrap under that bound.
    fn within_group(&mut self, index: ExprId, n: u32) -> Option<(Verdict, Option<(ExprId, i64)>)> {
        let dims = self.local_dims(index);
        if !dims.contains(&true) {
            return None;
        }
        // Whether the index fits under the bound `2^e` in the dimensions `on`, and its offset
        // there.
        let fits = |a: &mut Self, e: u32, on: [bool; 3]| {
            a.group_max = on.map(|d| d.then_some(1i128 << e));
            a.ranges.clear();
            a.uppers.clear();
            let (lo, hi) = a.range(index);
            let ok = lo >= 0 && hi < n as i128;
            let off = if ok && a.exact(index).is_some() {
                a.split(index)
            } else {
                None
            };
            a.group_max = [None; 3];
            a.ranges.clear();
            a.uppers.clear();
            (ok, off)
        };
        // The ranges only widen as the bound grows: the largest exponent that fits, by
        // bisection (`ok` fits, `bad` does not).
        let (fit, mut off) = fits(self, 0, dims);
        if !fit {
            return None;
        }
        let (mut ok, mut bad) = (0u32, 13u32);
        while bad - ok > 1 {
            let mid = (ok + bad) / 2;
            match fits(self, mid, dims) {
                (true, o) => (ok, off) = (mid, o),
                (false, _) => bad = mid,
            }
        }
        // A dimension whose bound the proof does not need is left free (`local_id(1) % 4`).
        let mut dims = dims;
        for d in 0..3 {
            if dims[d] {
                let mut without = dims;
                without[d] = false;
                if let (true, o) = fits(self, ok, without) {
                    (dims, off) = (without, o);
                }
            }
        }
        let pres = (0..3u8)
            .filter(|&d| dims[d as usize])
            .map(|d| Precondition {
                terms: vec![Term::LocalSize(d)],
                offset: 0,
                limit: Limit::Fixed(1 << ok),
            })
            .collect();
        Some((Verdict::ProvenIf(pres), off.map(|(a, k)| (a, k as i64))))
    }

    /// The dimensions whose local id or size `e` reads (through `let`s and loop counters'
    /// starts, ends and steps; the linear local id reads all three).
    fn local_dims(&self, e: ExprId) -> [bool; 3] {
        let mut dims = [false; 3];
        let mut seen = HashSet::new();
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            if !seen.insert(e) {
                continue;
            }
            match self.f.exprs.get(e) {
                Expr::Builtin(Builtin::LocalId(d) | Builtin::LocalSize(d)) => {
                    if let Some(x) = dims.get_mut(*d as usize) {
                        *x = true;
                    }
                }
                Expr::Builtin(Builtin::LocalLinearId) => dims = [true; 3],
                Expr::Builtin(_) | Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) => {}
                Expr::Value(v) => {
                    if let Some(&x) = self.lets.get(v) {
                        todo.push(x);
                    }
                    if let Some(&(a, b, c)) = self.loops.get(v) {
                        todo.extend([a, b, c]);
                    }
                }
                Expr::Unary(_, a)
                | Expr::Cast(a, _)
                | Expr::Bitcast(a, _)
                | Expr::Splat(a, _)
                | Expr::Extract(a, _) => todo.push(*a),
                Expr::Binary(_, a, b) => todo.extend([*a, *b]),
                Expr::Select(a, b, c) => todo.extend([*a, *b, *c]),
                Expr::Math(_, xs) | Expr::Compose(xs) | Expr::Stub(_, xs) => {
                    todo.extend(xs.iter().copied())
                }
            }
        }
        dims
    }

    /// A pitched two-dimensional index `x * w + y` (in either order of either operation) of a
    /// buffer, `w` a term at least 0, `x` and `y` at least 0 with the bounds `x <= X - 1`
    /// (`X` a term) and `y <= w + c`, `c <= -1`: the index is at most `(X - 1) * w + w + c =
    /// X * w + c`. In bounds when `X * w + c + 1 <= len`, and without wrapping (in `i32` or
    /// `u32`, so the lanes of a vector are consecutive) when `X * w + c + 1 <= 2^31`: the two
    /// preconditions (a negative `X * w` passes both: no work-item reaches the access, as
    /// `0 <= x <= X - 1` would not hold).
    ///
    /// Also with constants added to or subtracted from the whole, one after another (a
    /// stencil's `(j + dj - 1) * w + i + di - 1`, read as `((x * w + i) + di) - 1`): their sum
    /// `d` moves the bound to `X * w + c + d`, where `y` plus each partial sum stays at least
    /// 0 (no partial result below 0, which would wrap), and the no-wrap precondition takes the
    /// largest partial sum. Under those preconditions the index is the core plus the sum,
    /// exactly: returned as its [`Proof::offset`] (the core, the sum).
    fn pitched(&mut self, index: ExprId, limit: Limit) -> Option<(Verdict, (ExprId, i64))> {
        if !matches!(limit, Limit::Len(_)) {
            return None;
        }
        let t = self.f.exprs.ty(index);
        if t.width != 1 || !matches!(t.scalar, Scalar::I32 | Scalar::U32) {
            return None;
        }
        // The constants around the core, outermost first.
        let mut core = self.resolve(index);
        let mut steps: Vec<i128> = Vec::new();
        while let Some((inner, k)) = self.constant_step(core, true) {
            if steps.len() == 8 {
                return None;
            }
            steps.push(k);
            core = self.resolve(inner);
        }
        // Partial sums from the core outwards.
        let (mut d, mut dmin, mut dmax) = (0i128, 0i128, 0i128);
        for &k in steps.iter().rev() {
            d += k;
            dmin = dmin.min(d);
            dmax = dmax.max(d);
        }
        let Expr::Binary(BinaryOp::Add, p, q) = *self.f.exprs.get(core) else {
            return None;
        };
        for (prod, y) in [(p, q), (q, p)] {
            let Expr::Binary(BinaryOp::Mul, m1, m2) = *self.f.exprs.get(self.resolve(prod)) else {
                continue;
            };
            for (x, w) in [(m1, m2), (m2, m1)] {
                let Some(wt) = self.term(self.resolve(w)).and_then(Factor::of) else {
                    continue;
                };
                if self.range(w).0 < 0 || self.range(x).0 < 0 || self.range(y).0 + dmin < 0 {
                    continue;
                }
                let xs: Vec<Factor> = self
                    .upper(x)
                    .into_iter()
                    .filter(|b| !b.wraps && b.terms.len() == 1 && b.c <= -1)
                    .filter_map(|b| Factor::of(b.terms[0]))
                    .collect();
                let cy = self
                    .upper(y)
                    .into_iter()
                    .filter(|b| !b.wraps && b.c <= -1 && Factor::of_terms(&b.terms) == Some(wt))
                    .map(|b| b.c)
                    .min();
                let (Some(&xt), Some(cy)) = (xs.first(), cy) else {
                    continue;
                };
                let terms = vec![Term::Product(xt.min(wt), xt.max(wt))];
                let offset = i64::try_from(cy + 1 + d).ok()?;
                let highest = i64::try_from(cy + 1 + dmax).ok()?;
                let at = (core, i64::try_from(d).ok()?);
                let verdict = Verdict::ProvenIf(vec![
                    Precondition {
                        terms: terms.clone(),
                        offset,
                        limit,
                    },
                    Precondition {
                        terms,
                        offset: highest,
                        limit: Limit::Fixed(1 << 31),
                    },
                ]);
                return Some((verdict, at));
            }
        }
        None
    }

    /// The expression `e` names, through `let`s.
    fn resolve(&self, mut e: ExprId) -> ExprId {
        while let Expr::Value(v) = *self.f.exprs.get(e) {
            match self.lets.get(&v) {
                Some(&x) => e = x,
                None => break,
            }
        }
        e
    }

    /// `e` as `a + k`, `k` a constant in `0..2^31`, `a` a 32-bit integer at least 0.
    fn split(&mut self, e: ExprId) -> Option<(ExprId, u32)> {
        let Expr::Binary(BinaryOp::Add, x, y) = *self.f.exprs.get(e) else {
            return None;
        };
        let s = self.f.exprs.ty(e).scalar;
        if !matches!(s, Scalar::I32 | Scalar::U32) {
            return None;
        }
        let (a, kr) = match (self.range(x), self.range(y)) {
            (_, (l, h)) if l == h => (x, l),
            ((l, h), _) if l == h => (y, l),
            _ => return None,
        };
        let k = u32::try_from(kr).ok().filter(|&k| k <= i32::MAX as u32)?;
        (self.range(a).0 >= 0).then_some((a, k))
    }

    /// The verdict that the best of `bounds` (an index's) gives against `limit`.
    fn bounds_verdict(bounds: Vec<Bound>, limit: Limit) -> Verdict {
        let mut best: Option<(Precondition, bool)> = None;
        for b in bounds {
            // A bound through an unsigned sum or product that may wrap still bounds the index
            // (a wrapped value is smaller), but against a buffer's length, which may exceed
            // 2^32, it also needs a limit that rules the wrap out (below).
            let wraps = b.wraps && matches!(limit, Limit::Len(_));
            match limit {
                Limit::Len(buffer) => {
                    if b.terms == [Term::Len(buffer)] && b.c <= -1 && !wraps {
                        return Verdict::Proven;
                    }
                    // `len(buffer) + k <= len(buffer)` never holds.
                    if b.terms.contains(&Term::Len(buffer)) {
                        continue;
                    }
                }
                Limit::Fixed(n) if b.terms.is_empty() => {
                    if b.c < n as i128 {
                        return Verdict::Proven;
                    }
                    continue;
                }
                Limit::Fixed(_) => {}
            }
            if b.terms.is_empty() && b.c >= ANY.1 {
                continue;
            }
            // Small enough that the sum of at most MAX_BOUNDS 32-bit terms and it stays
            // inside 64 bits.
            let Ok(offset) = i64::try_from(b.c.saturating_add(1)) else {
                continue;
            };
            if offset.unsigned_abs() >= 1 << 48 {
                continue;
            }
            // (A wrapping bound of 2^31 or more comes through an operand's numeric range, a
            // counter below a `u32` end, say: its tests pass only for buffers of 2^31
            // elements and more, and fail everywhere else, where they would take the fast
            // copy of a whole block away from the accesses they do not concern, the
            // patterns' reduce and scan passes 3x slower on `cpu`. So does a constant bound
            // that large, an index type's maximum where nothing else bounds the index (a
            // loop's loads at `i + 15` below `min(start + 32, len(x))`): the whole region of
            // a kernel with a barrier ran under masks, its loads lane by lane, 5x slower. And
            // against a fixed-size array, whose length is below 2^31, such a bound never
            // holds: `local_id(1) * 16`'s numeric bound, `(2^32 - 2) * 16`, would be taken for
            // `tile[local_id(1) * 16 + local_id(0)]` as the precondition of fewest terms.)
            if (b.wraps || b.terms.is_empty()) && offset > i32::MAX as i64 {
                continue;
            }
            let p = Precondition {
                terms: b.terms,
                offset,
                limit,
            };
            // The fewest terms first (the cheapest test); a constant (often a type's
            // maximum) only where nothing else bounds the index.
            // (Where as many, one that cannot wrap: one test, not two.)
            let rank = |p: &Precondition, w: bool| {
                let n = match p.terms.len() {
                    0 => usize::MAX,
                    n => n,
                };
                (n, w)
            };
            if best
                .as_ref()
                .is_none_or(|(q, qw)| rank(&p, wraps) < rank(q, *qw))
            {
                best = Some((p, wraps));
            }
        }
        match best {
            // The same sum below `u32::MAX` too: then no partial sum or product wraps (as
            // against a fixed-size array's length), so the index is its true value and the
            // lanes of a vector are consecutive.
            Some((p, true)) => {
                let nowrap = Precondition {
                    limit: Limit::Fixed(u32::MAX),
                    ..p.clone()
                };
                Verdict::ProvenIf(vec![p, nowrap])
            }
            Some((p, false)) => Verdict::ProvenIf(vec![p]),
            None => Verdict::Unproven,
        }
    }

    /// The leaf `e` is, as a precondition's term.
    fn term(&self, e: ExprId) -> Option<Term> {
        match *self.f.exprs.get(e) {
            Expr::BufferLen(p) => Some(Term::Len(p)),
            Expr::Builtin(Builtin::LocalSize(d)) if d < 3 => Some(Term::LocalSize(d)),
            Expr::Param(p) => match self.f.params[p].kind {
                // 32 bits at most, so that a backend sums them in 64 without wrapping.
                ParamKind::Scalar(t)
                    if t.width == 1 && t.scalar.is_int() && t.scalar.size() <= 4 =>
                {
                    Some(Term::Param(p))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The range `e`'s operation gives from its operands' ranges, if it cannot wrap; `None`
    /// where it may.
    fn exact(&mut self, e: ExprId) -> Option<(i128, i128)> {
        let t = self.f.exprs.ty(e);
        if t.width != 1 {
            return None;
        }
        let (tlo, thi) = type_range(t.scalar)?;
        let r = match *self.f.exprs.get(e) {
            Expr::Literal(l) => {
                let v = l.as_i128();
                (v, v)
            }
            Expr::BufferLen(_) => (0, u32::MAX as i128),
            Expr::Builtin(b) => match (b, self.group_max) {
                (Builtin::LocalSize(d), g) if d < 3 && g[d as usize].is_some() => {
                    (1, g[d as usize].unwrap_or(0).min(thi))
                }
                (Builtin::LocalId(d), g) if d < 3 && g[d as usize].is_some() => {
                    (0, (g[d as usize].unwrap_or(0) - 1).min(thi))
                }
                (Builtin::LocalLinearId, [Some(x), Some(y), Some(z)]) => {
                    (0, (x * y * z - 1).min(thi))
                }
                (_, _) => match b {
                    Builtin::LocalSize(_)
                    | Builtin::GlobalSize(_)
                    | Builtin::NumGroups(_)
                    | Builtin::SubGroupSize
                    | Builtin::MaxSubGroupSize
                    | Builtin::NumSubGroups => (1, thi),
                    // Below a size of at most 2^32 - 1 (`NdRange` rejects larger global
                    // sizes, and a work-group is no larger than the launch): `i + 1` of an
                    // id cannot wrap.
                    Builtin::GlobalId(_)
                    | Builtin::LocalId(_)
                    | Builtin::GroupId(_)
                    | Builtin::LocalLinearId => (0, thi - 1),
                    _ => (0, thi),
                },
            },
            Expr::Value(v) => {
                if let Some(&x) = self.lets.get(&v) {
                    return Some(self.range(x));
                }
                if let Some(&(start, end, step)) = self.loops.get(&v) {
                    return Some(self.counter(t.scalar, start, end, step));
                }
                return None;
            }
            Expr::Binary(op, a, b) => {
                let (al, ah) = self.range(a);
                let (bl, bh) = self.range(b);
                match op {
                    // Saturating: a saturated end is outside every type's range.
                    BinaryOp::Add => (al.saturating_add(bl), ah.saturating_add(bh)),
                    BinaryOp::Sub => (al.saturating_sub(bh), ah.saturating_sub(bl)),
                    BinaryOp::Mul => {
                        let c = [
                            al.saturating_mul(bl),
                            al.saturating_mul(bh),
                            ah.saturating_mul(bl),
                            ah.saturating_mul(bh),
                        ];
                        (*c.iter().min().unwrap(), *c.iter().max().unwrap())
                    }
                    BinaryOp::Div if al >= 0 && bl > 0 => (al / bh, ah / bl),
                    BinaryOp::Rem if al >= 0 && bl > 0 => (0, ah.min(bh - 1)),
                    BinaryOp::And if al >= 0 && bl >= 0 => (0, ah.min(bh)),
                    BinaryOp::Shr
                        if al >= 0 && bl == bh && bl >= 0 && bl < t.scalar.bits() as i128 =>
                    {
                        (al >> bl, ah >> bl)
                    }
                    BinaryOp::Shl if bl == bh && bl >= 0 && bl < t.scalar.bits() as i128 => {
                        let k = 1i128 << bl;
                        (al.saturating_mul(k), ah.saturating_mul(k))
                    }
                    _ if op.is_comparison() => (0, 1),
                    _ => return None,
                }
            }
            Expr::Cast(a, _) => {
                let s = self.f.exprs.ty(a).scalar;
                if !s.is_int() && s != Scalar::Bool {
                    return None;
                }
                self.range(a)
            }
            Expr::Select(_, a, b) => {
                let (al, ah) = self.range(a);
                let (bl, bh) = self.range(b);
                (al.min(bl), ah.max(bh))
            }
            Expr::Math(MathFn::Min, ref xs) if xs.len() == 2 => {
                let (al, ah) = self.range(xs[0]);
                let (bl, bh) = self.range(xs[1]);
                (al.min(bl), ah.min(bh))
            }
            Expr::Math(MathFn::Max, ref xs) if xs.len() == 2 => {
                let (al, ah) = self.range(xs[0]);
                let (bl, bh) = self.range(xs[1]);
                (al.max(bl), ah.max(bh))
            }
            _ => return None,
        };
        (r.0 >= tlo && r.1 <= thi).then_some(r)
    }

    /// The range of a `for` counter of type `s`.
    fn counter(&mut self, s: Scalar, start: ExprId, end: ExprId, step: ExprId) -> (i128, i128) {
        let (tlo, thi) = type_range(s).unwrap_or(ANY);
        let (sl, sh) = self.range(start);
        let (el, eh) = self.range(end);
        let (kl, kh) = self.range(step);
        if kl > 0 || !s.is_signed() {
            // Up to `end - 1`; from `start` on unless `var + step` may wrap.
            let lo = if eh - 1 + kh.max(1) <= thi { sl } else { tlo };
            (lo, eh - 1)
        } else if kh < 0 {
            let hi = if el + 1 + kl >= tlo { sh } else { thi };
            (el + 1, hi)
        } else {
            (tlo, thi)
        }
    }

    /// The values `e` may hold under the current facts (its type's range where unknown).
    fn range(&mut self, e: ExprId) -> (i128, i128) {
        if let Some(&r) = self.ranges.get(&e) {
            return r;
        }
        if let Some(&(r, root)) = self.cycle_ranges.get(&e) {
            self.met_cycle(root);
            return r;
        }
        let t = self.f.exprs.ty(e);
        let whole = if t.width == 1 {
            type_range(t.scalar).unwrap_or(ANY)
        } else {
            ANY
        };
        // A cycle of facts (`x == y`) ends at the type's range; what is computed inside one
        // is kept only until the computation the cycle returned to ends (it may be less
        // precise than it will be outside; `cycle_ranges`).
        if let Some(&root) = self.busy.get(&e) {
            self.met_cycle(root);
            return whole;
        }
        let depth = self.depth() + 1;
        self.busy.insert(e, depth);
        let outer = self.cycle.take();
        let (mut lo, mut hi) = self.exact(e).unwrap_or(whole);
        // (A copy: the loop computes ranges, which borrows the analysis.)
        let facts = self.facts.clone();
        for Fact { x, y, c } in facts {
            if x == e {
                hi = hi.min(self.range(y).1.saturating_add(c));
            }
            if y == e {
                lo = lo.max(self.range(x).0.saturating_sub(c));
            }
        }
        if lo > hi {
            // Contradictory facts: the code is unreachable; keep the type's range.
            (lo, hi) = whole;
        }
        self.busy.remove(&e);
        match self.end_computation(depth, outer) {
            None => {
                self.ranges.insert(e, (lo, hi));
            }
            Some(root) => {
                self.cycle_ranges.insert(e, ((lo, hi), root));
            }
        }
        (lo, hi)
    }

    /// Upper bounds of `e` under the current facts, at most [`MAX_BOUNDS`], the numeric one
    /// (its range's maximum) among them.
    fn upper(&mut self, e: ExprId) -> Vec<Bound> {
        if let Some(b) = self.uppers.get(&e) {
            return b.clone();
        }
        if let Some((b, root)) = self.cycle_uppers.get(&e) {
            let (b, root) = (b.clone(), *root);
            self.met_cycle(root);
            return b;
        }
        if let Some(&root) = self.busy_upper.get(&e) {
            self.met_cycle(root);
            return Vec::new();
        }
        let depth = self.depth() + 1;
        self.busy_upper.insert(e, depth);
        let outer = self.cycle.take();
        let mut out: Vec<Bound> = Vec::new();
        let add = |out: &mut Vec<Bound>, b: Bound| {
            if out.len() < MAX_BOUNDS && !out.contains(&b) {
                out.push(b);
            }
        };
        if let Some(t) = self.term(e) {
            add(
                &mut out,
                Bound {
                    terms: vec![t],
                    c: 0,
                    wraps: false,
                },
            );
        }
        // (A copy: the loop computes ranges, which borrows the analysis.)
        let facts = self.facts.clone();
        for Fact { x, y, c } in facts {
            if x == e {
                for b in self.upper(y) {
                    add(
                        &mut out,
                        Bound {
                            terms: b.terms,
                            c: b.c.saturating_add(c),
                            wraps: b.wraps,
                        },
                    );
                }
            }
        }
        let exact = self.exact(e).is_some();
        let et = self.f.exprs.ty(e);
        let unsigned = et.width == 1 && et.scalar.is_int() && !et.scalar.is_signed();
        match self.f.exprs.get(e).clone() {
            // (An unsigned sum that wraps is smaller than its operands' sum.)
            Expr::Binary(BinaryOp::Add, a, b) if exact || unsigned => {
                let (ua, ub) = (self.upper(a), self.upper(b));
                for x in &ua {
                    for y in &ub {
                        if x.terms.len() + y.terms.len() > MAX_TERMS {
                            continue;
                        }
                        let mut terms = [x.terms.clone(), y.terms.clone()].concat();
                        terms.sort();
                        add(
                            &mut out,
                            Bound {
                                terms,
                                c: x.c.saturating_add(y.c),
                                wraps: x.wraps || y.wraps || !exact,
                            },
                        );
                    }
                }
            }
            Expr::Binary(BinaryOp::Sub, a, b) if exact => {
                let bl = self.range(b).0;
                for x in self.upper(a) {
                    add(
                        &mut out,
                        Bound {
                            terms: x.terms,
                            c: x.c.saturating_sub(bl),
                            wraps: x.wraps,
                        },
                    );
                }
            }
            // A constant `k > 0` times a non-negative `x` (or `x << s`, `k = 2^s`): `k` times
            // each of `x`'s bounds, its terms `k` times over. (An unsigned product that wraps
            // is smaller than the true one, which the bound bounds: marked as wrapping.)
            Expr::Binary(op @ (BinaryOp::Mul | BinaryOp::Shl), a, b) if exact || unsigned => {
                let (al, ah) = self.range(a);
                let (bl, bh) = self.range(b);
                let scaled = match op {
                    BinaryOp::Mul if bl == bh => Some((a, bl)),
                    BinaryOp::Mul if al == ah => Some((b, al)),
                    // (A shift by 32 or more is not `x * 2^s`.)
                    BinaryOp::Shl if bl == bh && bl >= 0 && bl < et.scalar.bits() as i128 => {
                        Some((a, 1i128 << bl))
                    }
                    _ => None,
                };
                if let Some((x, k)) = scaled.filter(|&(x, k)| k > 0 && self.range(x).0 >= 0) {
                    for bx in self.upper(x) {
                        if bx.terms.is_empty() {
                            // The numeric bound: the range's maximum below covers it when the
                            // product is exact; else it is the wrapped product's bound.
                            add(
                                &mut out,
                                Bound {
                                    terms: Vec::new(),
                                    c: bx.c.saturating_mul(k),
                                    wraps: bx.wraps || !exact,
                                },
                            );
                            continue;
                        }
                        let Some(n) = usize::try_from(k)
                            .ok()
                            .and_then(|k| k.checked_mul(bx.terms.len()))
                            .filter(|&n| n <= MAX_TERMS)
                        else {
                            continue;
                        };
                        let mut terms = Vec::with_capacity(n);
                        for t in &bx.terms {
                            terms.extend(std::iter::repeat_n(*t, k as usize));
                        }
                        terms.sort();
                        add(
                            &mut out,
                            Bound {
                                terms,
                                c: bx.c.saturating_mul(k),
                                wraps: bx.wraps || !exact,
                            },
                        );
                    }
                }
            }
            Expr::Cast(a, _) if exact => {
                for x in self.upper(a) {
                    add(&mut out, x);
                }
            }
            Expr::Math(MathFn::Min, xs) if exact && xs.len() == 2 => {
                for x in [self.upper(xs[0]), self.upper(xs[1])].concat() {
                    add(&mut out, x);
                }
            }
            // A local id is below the work-group's size.
            Expr::Builtin(Builtin::LocalId(d)) if d < 3 => add(
                &mut out,
                Bound {
                    terms: vec![Term::LocalSize(d)],
                    c: -1,
                    wraps: false,
                },
            ),
            Expr::Value(v) => {
                if let Some(&x) = self.lets.get(&v) {
                    for b in self.upper(x) {
                        add(&mut out, b);
                    }
                } else if let Some(&(_, end, step)) = self.loops.get(&v) {
                    let s = self.f.values[v].ty.scalar;
                    let (kl, kh) = self.range(step);
                    let tlo = type_range(s).map_or(ANY.0, |r| r.0);
                    if s.is_signed() && kh < 0 && self.range(end).0 + 1 + kl >= tlo {
                        // Down from `start`, which it never wraps past.
                        let start = self.loops[&v].0;
                        for b in self.upper(start) {
                            add(&mut out, b);
                        }
                    }
                    if kl > 0 || !s.is_signed() {
                        for b in self.upper(end) {
                            add(
                                &mut out,
                                Bound {
                                    terms: b.terms,
                                    c: b.c.saturating_sub(1),
                                    wraps: b.wraps,
                                },
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        let hi = self.range(e).1;
        let t = self.f.exprs.ty(e);
        let top = type_range(t.scalar).map_or(ANY.1, |r| r.1);
        if hi < top && t.width == 1 {
            let b = Bound {
                terms: Vec::new(),
                c: hi,
                wraps: false,
            };
            if !out.contains(&b) {
                if out.len() == MAX_BOUNDS {
                    out.pop();
                }
                out.push(b);
            }
        }
        self.busy_upper.remove(&e);
        match self.end_computation(depth, outer) {
            None => {
                self.uppers.insert(e, out.clone());
            }
            Some(root) => {
                self.cycle_uppers.insert(e, (out.clone(), root));
            }
        }
        out
    }

    /// How many ranges and bounds are being computed, one inside the other.
    fn depth(&self) -> usize {
        self.busy.len() + self.busy_upper.len()
    }

    /// Notes a cycle back to the computation at depth `root`.
    fn met_cycle(&mut self, root: usize) {
        self.cycle = Some(self.cycle.map_or(root, |c| c.min(root)));
    }

    /// Ends the computation at `depth` (`outer`: the cycle noted before it began): forgets
    /// what was computed in cycles back to it, and returns the depth of the outermost
    /// computation a cycle in it returned to, if one is still under way (then its result is
    /// kept only until that one ends).
    fn end_computation(&mut self, depth: usize, outer: Option<usize>) -> Option<usize> {
        self.cycle_ranges.retain(|_, (_, root)| *root < depth);
        self.cycle_uppers.retain(|_, (_, root)| *root < depth);
        let inner = self.cycle.filter(|&root| root < depth);
        self.cycle = outer.into_iter().chain(inner).min();
        inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::walk_block;
    use crate::prelude::*;

    /// The verdicts of `k`'s accesses, in the order the statements come, each with its
    /// memory's name.
    fn verdicts(k: &Kernel) -> Vec<(String, Verdict)> {
        let f = k.ir();
        let proof = Proof::of(f);
        let mut out = Vec::new();
        walk_block(&f.body, &mut |s| {
            if let Stmt::Load { mem, index, .. }
            | Stmt::Store { mem, index, .. }
            | Stmt::Atomic { mem, index, .. }
            | Stmt::AtomicLoad { mem, index, .. } = s
            {
                // Private variables (not arrays) are not accesses to test.
                if !matches!(mem, Mem::Private(p) if f.privates[*p].len.is_none()) {
                    out.push((f.mem_name(*mem), proof.verdict(*mem, *index).clone()));
                }
            }
        });
        out
    }

    fn param(k: &Kernel, name: &str) -> ParamId {
        let f = k.ir();
        f.params
            .iter_enumerated()
            .find(|(_, p)| p.name == name)
            .map(|(id, _)| id)
            .unwrap()
    }

    fn verdict_of(k: &Kernel, mem: &str) -> Verdict {
        let v = verdicts(k);
        let mut it = v.iter().filter(|(m, _)| m == mem);
        let first = it
            .next()
            .unwrap_or_else(|| panic!("no access to {mem}: {v:?}"));
        first.1.clone()
    }

    fn needs(k: &Kernel, terms: &[Term], offset: i64, buffer: &str) -> Verdict {
        Verdict::ProvenIf(vec![Precondition {
            terms: terms.to_vec(),
            offset,
            limit: Limit::Len(param(k, buffer)),
        }])
    }

    #[test]
    fn local_ids_through_divisions_bound_the_work_group() {
        // SGEMM's layout: a row `ty` and column `tx` of register tiles from `local_id(0)` by
        // divisions and remainders (no sum of terms bounds `l / 32`), into a 2 x 16 x 17 tile
        // (double buffered, padded): in bounds for groups up to 256 wide, which the
        // numeric ranges show with the local ids below 256 (not below 512).
        let k = Kernel::build("layout", |k| {
            let a = k.read::<f32>("a");
            let out = k.write::<f32>("out");
            let t = k.scalar::<u32>("t");
            let tile = k.local_array::<f32>("tile", 2 * 16 * 17);
            let l = local_id(0);
            let (lane, warp) = (l % 32u32, l / 32u32);
            let ty = warp / 2u32 * 4u32 + lane / 8u32;
            let tx = warp % 2u32 * 8u32 + lane % 8u32;
            let buf = (t & 1u32) * (16 * 17);
            tile.set(buf + ty * 17u32 + tx, a.at(global_id(0)));
            barrier();
            // Reads the rows 0..15 of `buf` at the work-item's column `tx + 1` or `tx`: past
            // 16 x 17 for a group of 512 (ty up to 31).
            out.set(global_id(0), tile.at(buf + tx + ty * 17u32 + 1u32));
            // The local id in dimension 1 plays no part: no condition on its size.
            out.set(global_id(0), tile.at(local_id(1) % 4u32 + l / 2u32));
        })
        .unwrap();
        let v = verdicts(&k);
        let within = |limit| {
            Verdict::ProvenIf(vec![Precondition {
                terms: vec![Term::LocalSize(0)],
                offset: 0,
                limit: Limit::Fixed(limit),
            }])
        };
        assert_eq!(v[1], ("tile".into(), within(256)), "{v:?}");
        assert_eq!(v[2], ("tile".into(), within(256)), "{v:?}");
        // `local_id(1) % 4 + l / 2 <= 543`: groups up to 1024 wide (`3 + 1023 / 2 = 514`),
        // bounded in dimension 0 only.
        assert_eq!(v[4], ("tile".into(), within(1024)), "{v:?}");
        // An index the local ids do not bound stays unproven.
        let k = Kernel::build("free", |k| {
            let at = k.read::<u32>("at");
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 64);
            tile.set(local_id(0) / 4u32 + at.at(global_id(0)), 1.0f32);
            barrier();
            out.set(global_id(0), tile.at(local_id(0) / 4u32));
        })
        .unwrap();
        let v = verdicts(&k);
        assert_eq!(v[1], ("tile".into(), Verdict::Unproven), "{v:?}");
        assert_eq!(v[2], ("tile".into(), within(256)), "{v:?}");
    }

    #[test]
    fn local_ids_are_below_the_work_group_size() {
        // A fixed-size tile at `local_id(0) + 48` fits when the group is at most 16 wide; a
        // buffer at `local_id(1)` when it has `local_size(1)` elements.
        let k = Kernel::build("tiles", |k| {
            let a = k.read::<f32>("a");
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 64);
            tile.set(local_id(0) + 48u32, a.at(local_id(1)));
            barrier();
            out.set(global_id(0), tile.at(local_id(0) % 64u32));
        })
        .unwrap();
        let v = verdicts(&k);
        assert_eq!(v[0].1, needs(&k, &[Term::LocalSize(1)], 0, "a"), "{v:?}");
        assert_eq!(
            v[1].1,
            Verdict::ProvenIf(vec![Precondition {
                terms: vec![Term::LocalSize(0)],
                offset: 48,
                limit: Limit::Fixed(64),
            }]),
            "{v:?}"
        );
        assert_eq!(v[2].1, Verdict::Proven, "{v:?}");
    }

    #[test]
    fn id_under_a_guard_on_a_length() {
        // vadd: `c[i]` is proven by the guard, `a[i]` and `b[i]` when len(c) <= their length.
        let k = Kernel::build("vadd", |k| {
            let a = k.read::<f32>("a");
            let b = k.read::<f32>("b");
            let c = k.write::<f32>("c");
            let i = global_id(0);
            if_(i.lt(c.len()), || c.set(i, a.at(i) + b.at(i)));
        })
        .unwrap();
        let c = param(&k, "c");
        assert_eq!(verdict_of(&k, "c"), Verdict::Proven);
        assert_eq!(verdict_of(&k, "a"), needs(&k, &[Term::Len(c)], 0, "a"));
        assert_eq!(verdict_of(&k, "b"), needs(&k, &[Term::Len(c)], 0, "b"));
    }

    #[test]
    fn guard_on_a_parameter() {
        let k = Kernel::build("g", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let i = global_id(0);
            if_(i.lt(n), || a.set(i, 1u32));
        })
        .unwrap();
        let n = param(&k, "n");
        assert_eq!(verdict_of(&k, "a"), needs(&k, &[Term::Param(n)], 0, "a"));
        // `n <= len(a)` in the guard proves it.
        let k = Kernel::build("g", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let i = global_id(0);
            if_(i.lt(n).and(n.le(a.len())), || a.set(i, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Proven);
        // So does `n == len(a)`, and `i < min(n, len(a))`.
        let k = Kernel::build("g", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let i = global_id(0);
            if_(n.eq(a.len()).and(i.lt(n)), || a.set(i, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Proven);
        let k = Kernel::build("g", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let i = global_id(0);
            if_(i.lt(n.min(a.len())), || a.set(i, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Proven);
    }

    #[test]
    fn early_return_guards_the_rest() {
        let k = Kernel::build("r", |k| {
            let a = k.read_write::<u32>("a");
            let i = global_id(0);
            if_(i.ge(a.len()), return_);
            a.set(i, 1u32);
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Proven);
        // Without the guard nothing is known.
        let k = Kernel::build("r", |k| {
            let a = k.read_write::<u32>("a");
            a.set(global_id(0), 1u32);
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Unproven);
    }

    #[test]
    fn minus_one_may_wrap() {
        // `i - 1` at `i = 0` wraps to u32::MAX: not proven, not even with a precondition.
        let k = Kernel::build("m", |k| {
            let a = k.read_write::<u32>("a");
            let i = global_id(0);
            if_(i.lt(a.len()), || a.set(i - 1u32, 1u32));
        })
        .unwrap();
        assert_eq!(
            verdict_of(&k, "a"),
            Verdict::Unproven,
            "{}",
            crate::ir::print::function_to_string(k.ir())
        );
        // With `i >= 1` it cannot wrap.
        let k = Kernel::build("m", |k| {
            let a = k.read_write::<u32>("a");
            let i = global_id(0);
            if_(i.ge(1u32).and(i.lt(a.len())), || a.set(i - 1u32, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Proven);
        // `i + 1` under `i < len(a)` is one past the end for the last work-item (unless the
        // buffer had 2^32 elements: no precondition, as no buffer below 2^32 elements would
        // pass it, `a_type_maximum_is_no_precondition`).
        let k = Kernel::build("m", |k| {
            let a = k.read_write::<u32>("a");
            let i = global_id(0);
            if_(i.lt(a.len()), || a.set(i + 1u32, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Unproven);
    }

    #[test]
    fn signed_ids() {
        // An id cast to i32 may be negative (ids past i32::MAX): not proven by `j < n`.
        let k = Kernel::build("s", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<i32>("n");
            let j = global_id(0).cast::<i32>();
            if_(j.lt(n), || a.set(j, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Unproven);
        // With `j >= 0` it is, given `n <= len(a)`.
        let k = Kernel::build("s", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<i32>("n");
            let j = global_id(0).cast::<i32>();
            if_(j.ge(0).and(j.lt(n)), || a.set(j, 1u32));
        })
        .unwrap();
        let n = param(&k, "n");
        assert_eq!(verdict_of(&k, "a"), needs(&k, &[Term::Param(n)], 0, "a"));
    }

    /// [`needs`] for an index whose sum may wrap: also the same sum below `u32::MAX`.
    fn needs_nowrap(k: &Kernel, terms: &[Term], offset: i64, buffer: &str) -> Verdict {
        let Verdict::ProvenIf(mut ps) = needs(k, terms, offset, buffer) else {
            unreachable!()
        };
        ps.push(Precondition {
            terms: terms.to_vec(),
            offset,
            limit: Limit::Fixed(u32::MAX),
        });
        Verdict::ProvenIf(ps)
    }

    #[test]
    fn uniform_offsets() {
        // `i + off` under `i < n`: in bounds when `n + off <= len(a)` (summed without
        // wrapping); the `u32` addition itself may wrap unless `off` is bounded, so also when
        // `n + off <= u32::MAX` (then it does not: the index is its true value).
        let k = Kernel::build("o", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let off = k.scalar::<u32>("off");
            let i = global_id(0);
            if_(i.lt(n), || a.set(i + off, 1u32));
        })
        .unwrap();
        let (n, off) = (param(&k, "n"), param(&k, "off"));
        let mut terms = vec![Term::Param(n), Term::Param(off)];
        terms.sort();
        assert_eq!(verdict_of(&k, "a"), needs_nowrap(&k, &terms, 0, "a"));
        // A near miss: the same sum in `i32`, which may wrap to a negative index (no bound
        // is taken through a signed sum that may wrap).
        let k = Kernel::build("o", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<i32>("n");
            let off = k.scalar::<i32>("off");
            let i = global_id(0).cast::<i32>();
            if_(i.lt(n), || a.set(i + off, 1u32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Unproven);
        // With `off < 1024` and `n < 2^20` the sum cannot wrap.
        let k = Kernel::build("o", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let off = k.scalar::<u32>("off");
            let i = global_id(0);
            if_(i.lt(n).and(off.lt(1024u32)).and(n.lt(1u32 << 20)), || {
                a.set(i + off, 1u32)
            });
        })
        .unwrap();
        // The fewest terms: `n + 1023 <= len(a)`.
        let n = param(&k, "n");
        assert_eq!(verdict_of(&k, "a"), needs(&k, &[Term::Param(n)], 1023, "a"));
    }

    /// Of two wrapping bounds of as many terms, the one whose constant is 2^31 or more (an
    /// operand bounded by its type only: the patterns' reduce pass gave `off + (i + 3)`,
    /// with `i` below `min(start + per, n)`, `per + off + 4294967294` beside `n + off`) is
    /// no precondition, whichever comes first: it would fail for every buffer below 2^31
    /// elements and take the fast copy of a whole block away from the other accesses.
    #[test]
    fn bounds_through_a_type_range_are_no_preconditions() {
        let (per, n, off) = (ParamId::new(0), ParamId::new(1), ParamId::new(2));
        let a = ParamId::new(3);
        let bound = |terms: Vec<Term>, c: i128| Bound {
            terms,
            c,
            wraps: true,
        };
        let huge = || bound(vec![Term::Param(per), Term::Param(off)], 4294967294 - 1);
        let fair = || bound(vec![Term::Param(n), Term::Param(off)], -1);
        let want = Verdict::ProvenIf(vec![
            Precondition {
                terms: vec![Term::Param(n), Term::Param(off)],
                offset: 0,
                limit: Limit::Len(a),
            },
            Precondition {
                terms: vec![Term::Param(n), Term::Param(off)],
                offset: 0,
                limit: Limit::Fixed(u32::MAX),
            },
        ]);
        for bounds in [vec![huge(), fair()], vec![fair(), huge()]] {
            assert_eq!(Analysis::bounds_verdict(bounds, Limit::Len(a)), want);
        }
        assert_eq!(
            Analysis::bounds_verdict(vec![huge()], Limit::Len(a)),
            Verdict::Unproven
        );
    }

    /// A constant bound at an index type's maximum (nothing else bounds the index) is no
    /// precondition either: `2^32 <= len(x)` fails for every buffer below 2^32 elements. A
    /// work-item's loop over its own 32 elements, unrolled by 16, below `min(start + 32,
    /// len(x))`: its loads at `i + 15` are unproven (each tested), not proven if `x` has
    /// 2^32 elements.
    #[test]
    fn a_type_maximum_is_no_precondition() {
        let k = Kernel::build("chunks", |k| {
            let x = k.read::<u32>("x");
            let out = k.write::<u32>("out");
            let start = global_id(0) * 32u32;
            let end = (start + 32u32).min(x.len());
            let count = select(end.gt(start), end - start, 0u32);
            let total = var(0u32);
            for_step(
                start,
                start + count / 16u32 * 16u32,
                16u32,
                |i: crate::builder::Expr<u32>| {
                    total.set(total.get() + x.at(i + 15u32));
                },
            );
            out.set(global_id(0), total.get());
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "x"), Verdict::Unproven);
        let x = ParamId::new(0);
        let max = Bound {
            terms: vec![],
            c: u32::MAX as i128,
            wraps: false,
        };
        assert_eq!(
            Analysis::bounds_verdict(vec![max], Limit::Len(x)),
            Verdict::Unproven
        );
        // Below 2^31 a constant still is one (a buffer of at least that many elements).
        let small = Bound {
            terms: vec![],
            c: 1 << 20,
            wraps: false,
        };
        assert_eq!(
            Analysis::bounds_verdict(vec![small], Limit::Len(x)),
            Verdict::ProvenIf(vec![Precondition {
                terms: vec![],
                offset: (1 << 20) + 1,
                limit: Limit::Len(x),
            }])
        );
    }

    #[test]
    fn loop_counters() {
        let k = Kernel::build("l", |k| {
            let a = k.read::<f32>("a");
            let out = k.write::<f32>("out");
            let acc = var(0.0f32);
            for_range(0u32, a.len(), |j| acc.set(acc.get() + a.at(j)));
            for_step(1u32, a.len(), 3u32, |j| acc.set(acc.get() + a.at(j - 1u32)));
            out.set(0u32, acc.get());
        })
        .unwrap();
        let v = verdicts(&k);
        assert_eq!(v[0], ("a".into(), Verdict::Proven));
        // `j + 3` may wrap past u32::MAX to a small `j` when len(a) is near it: then `j - 1`
        // wraps too.
        assert_eq!(v[1], ("a".into(), Verdict::Unproven));
        assert_eq!(verdict_of(&k, "out"), needs(&k, &[], 1, "out"));
        let k = Kernel::build("l", |k| {
            let a = k.read::<f32>("a");
            let out = k.write::<f32>("out");
            let acc = var(0.0f32);
            if_(a.len().lt(1u32 << 30), || {
                for_step(1u32, a.len(), 3u32, |j| acc.set(acc.get() + a.at(j - 1u32)));
            });
            out.set(0u32, acc.get());
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Proven);
        // A step that may carry the counter past u32::MAX: `j - 1` may wrap after it.
        let k = Kernel::build("l", |k| {
            let a = k.read_write::<f32>("a");
            let n = k.scalar::<u32>("n");
            let s = k.scalar::<u32>("s");
            for_step(1u32, n, s, |j| a.set(j - 1u32, 0.0f32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Unproven);
        // Negative steps: from len(a) - 1 down to 0.
        let k = Kernel::build("l", |k| {
            let a = k.read_write::<f32>("a");
            let n = k.scalar::<i32>("n");
            if_(n.le(a.len().cast::<i32>()).and(n.ge(1)), || {
                for_step(n - 1, -1, -1, |j| a.set(j, 0.0f32));
            });
        })
        .unwrap();
        let n = param(&k, "n");
        assert_eq!(verdict_of(&k, "a"), needs(&k, &[Term::Param(n)], 0, "a"));
        // ... but down to -2 reaches -1.
        let k = Kernel::build("l", |k| {
            let a = k.read_write::<f32>("a");
            let n = k.scalar::<i32>("n");
            if_(n.ge(1).and(n.lt(100)), || {
                for_step(n - 1, -2, -1, |j| a.set(j, 0.0f32));
            });
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "a"), Verdict::Unproven);
    }

    #[test]
    fn local_arrays_of_literal_length() {
        // (A loop to a literal bound is unrolled by the optimizer: the bound is `min(n, 16)`.)
        let k = Kernel::build("t", |k| {
            let out = k.write::<f32>("out");
            let n = k.scalar::<u32>("n");
            let tile = k.local_array::<f32>("tile", 16);
            let acc = var(0.0f32);
            for_range(0u32, n.min(16u32), |p| acc.set(acc.get() + tile.at(p)));
            // 17 elements: one past the end, unless `n <= 16`.
            for_range(0u32, n.min(17u32), |p| acc.set(acc.get() + tile.at(p)));
            // The local id: when the work-group is at most 16 wide.
            tile.set(local_id(0), acc.get());
            out.set(global_id(0), acc.get());
        })
        .unwrap();
        let v: Vec<Verdict> = verdicts(&k)
            .into_iter()
            .filter(|(m, _)| m == "tile")
            .map(|(_, v)| v)
            .collect();
        let fixed = |t: Term| {
            Verdict::ProvenIf(vec![Precondition {
                terms: vec![t],
                offset: 0,
                limit: Limit::Fixed(16),
            }])
        };
        assert_eq!(
            v,
            [
                Verdict::Proven,
                fixed(Term::Param(param(&k, "n"))),
                fixed(Term::LocalSize(0))
            ],
            "{}",
            crate::ir::print::function_to_string(k.ir())
        );
    }

    #[test]
    fn pitched_two_dimensional_indices() {
        // `row * w + col` under `row < h && col < w`: at most h * w - 1, in bounds when
        // `h * w <= len(img)`, without wrapping when `h * w <= 2^31`; in either order.
        let pitched = |k: &Kernel, offset: i64| {
            let (w, h) = (param(k, "w"), param(k, "h"));
            let terms = vec![Term::Product(
                Factor::Param(w.min(h)),
                Factor::Param(w.max(h)),
            )];
            Verdict::ProvenIf(vec![
                Precondition {
                    terms: terms.clone(),
                    offset,
                    limit: Limit::Len(param(k, "img")),
                },
                Precondition {
                    terms,
                    offset,
                    limit: Limit::Fixed(1 << 31),
                },
            ])
        };
        let k = Kernel::build("p", |k| {
            let img = k.read_write::<f32>("img");
            let w = k.scalar::<u32>("w");
            let h = k.scalar::<u32>("h");
            let (col, row) = (global_id(0), global_id(1));
            if_(row.lt(h).and(col.lt(w)), || img.set(row * w + col, 0.0f32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "img"), pitched(&k, 0));
        // In the other order, through `let`s.
        let k = Kernel::build("p", |k| {
            let img = k.read_write::<f32>("img");
            let w = k.scalar::<u32>("w");
            let h = k.scalar::<u32>("h");
            let (col, row) = (global_id(0).named("col"), global_id(1).named("row"));
            if_(col.lt(w).and(row.lt(h)), || {
                let at = (col + w * row).named("at");
                img.set(at, 0.0f32)
            });
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "img"), pitched(&k, 0));
        // Not proven: `col` up to `w` (not below it), `row` unbounded, `col` bounded by
        // another value than the pitch, a signed pitch that may be negative.
        let k = Kernel::build("p", |k| {
            let img = k.read_write::<f32>("img");
            let w = k.scalar::<u32>("w");
            let h = k.scalar::<u32>("h");
            let (col, row) = (global_id(0), global_id(1));
            let (img2, img3) = (k.read_write::<f32>("img2"), k.read_write::<f32>("img3"));
            if_(row.lt(h).and(col.le(w)), || img.set(row * w + col, 0.0f32));
            if_(col.lt(w), || img2.set(row * w + col, 0.0f32));
            if_(row.lt(h).and(col.lt(h)), || img3.set(row * w + col, 0.0f32));
        })
        .unwrap();
        assert_eq!(
            verdicts(&k),
            ["img", "img2", "img3"].map(|m| (m.to_string(), Verdict::Unproven)),
            "{}",
            crate::ir::print::function_to_string(k.ir())
        );
        let k = Kernel::build("p", |k| {
            let img = k.read_write::<f32>("img");
            let w = k.scalar::<i32>("w");
            let h = k.scalar::<i32>("h");
            let (col, row) = (global_id(0).cast::<i32>(), global_id(1).cast::<i32>());
            if_(row.lt(h).and(col.lt(w)), || img.set(row * w + col, 0.0f32));
        })
        .unwrap();
        assert_eq!(verdict_of(&k, "img"), Verdict::Unproven);
        // With small literal bounds the numeric range proves it given the length.
        let k = Kernel::build("p", |k| {
            let img = k.read_write::<f32>("img");
            let (col, row) = (global_id(0), global_id(1));
            if_(row.lt(48u32).and(col.lt(64u32)), || {
                img.set(row * 64u32 + col, 0.0f32)
            });
        })
        .unwrap();
        assert_eq!(
            verdict_of(&k, "img"),
            needs(&k, &[], 3072, "img"),
            "{}",
            crate::ir::print::function_to_string(k.ir())
        );
    }

    /// A guard on `i + 1` bounds `i` (an id is below 2^32 - 1, so the sum cannot wrap), and a
    /// 3 x 3 stencil's pitched loads `(j + dj - 1) * w + i + di - 1` under `1 <= i, j` and
    /// `i + 1, j + 1 < w` are in bounds when `w * w` (plus the largest load's offset) fits the
    /// buffer and 2^31, written either way: with the column's constants inside or outside the
    /// sum. Without the lower guard `i >= 1` (`i - 1` may be below 0) they are not.
    #[test]
    fn stencils_on_a_pitched_image() {
        let k = Kernel::build("guard", |k| {
            let a = k.read_write::<f32>("a");
            let n = k.scalar::<u32>("n");
            let i = global_id(0);
            if_((i + 1u32).lt(n), || a.set(i, 0.0f32));
        })
        .unwrap();
        assert_eq!(
            verdict_of(&k, "a"),
            needs(&k, &[Term::Param(param(&k, "n"))], -1, "a")
        );
        let blur = |inside: bool, low: bool| {
            Kernel::build("blur", |k| {
                let x = k.read::<f32>("x");
                let y = k.write::<f32>("y");
                let w = k.scalar::<u32>("w");
                let (i, j) = (global_id(0), global_id(1));
                let lo = if low { i.ge(1u32) } else { i.ge(0u32) };
                let inner = lo
                    .and(j.ge(1u32))
                    .and((i + 1u32).lt(w))
                    .and((j + 1u32).lt(w));
                if_(inner, || {
                    let mut s = lit(0.0f32);
                    for dj in 0..3u32 {
                        for di in 0..3u32 {
                            s = s + x.at(if inside {
                                (j + dj - 1u32) * w + (i + di - 1u32)
                            } else {
                                (j + dj - 1u32) * w + i + di - 1u32
                            });
                        }
                    }
                    y.set(j * w + i, s);
                });
            })
            .unwrap()
        };
        let area = |k: &Kernel, len: i64, nowrap: i64, buffer: &str| {
            let w = Factor::Param(param(k, "w"));
            let terms = vec![Term::Product(w, w)];
            Verdict::ProvenIf(vec![
                Precondition {
                    terms: terms.clone(),
                    offset: len,
                    limit: Limit::Len(param(k, buffer)),
                },
                Precondition {
                    terms,
                    offset: nowrap,
                    limit: Limit::Fixed(1 << 31),
                },
            ])
        };
        for inside in [true, false] {
            let k = blur(inside, true);
            let v = verdicts(&k);
            let ir = crate::ir::print::function_to_string(k.ir());
            // Columns `i - 1`, `i`, `i + 1`: at most `w * w - 3`, `- 2`, `- 1` (the row is at
            // most `w - 1`, the column at most `w - 1`); outside, the sum's partial results
            // reach one more (`+ 2` before `- 1`).
            for (n, (_, got)) in v.iter().take(9).enumerate() {
                let c = (n % 3) as i64 - 2;
                let nowrap = if inside { c } else { c + 1 };
                assert_eq!(*got, area(&k, c, nowrap, "x"), "load {n} ({inside}): {ir}");
            }
            assert_eq!(v[9].1, area(&k, -1, -1, "y"), "{ir}");
            // The offsets: outside, the row's core `(j + dj - 1) * w + i` plus -1, 0, 1, so
            // that a row's three loads share one address.
            let k3 = |k: i64| if inside { Some(0) } else { Some(k) };
            assert_eq!(
                offsets(&k, "x"),
                [-1, 0, 1, -1, 0, 1, -1, 0, 1].map(k3),
                "{ir}"
            );
            let k = blur(inside, false);
            let v = verdicts(&k);
            assert_eq!(v[0].1, Verdict::Unproven, "{v:?}");
        }
    }

    #[test]
    fn constant_times_a_local_id() {
        // The tiled matmul's rows of a 16 x 16 tile: `ly * 16 + p` is at most
        // `16 * local_size(1) - 16 + p`, in bounds when the group is at most 16 high.
        let k = Kernel::build("mm", |k| {
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 256);
            let (lx, ly) = (local_id(0), local_id(1));
            tile.set(ly * 16u32 + lx, 1.0f32);
            barrier();
            let x = tile.at(ly * 16u32 + 15u32);
            let y = tile.at((ly << 4u32) + 3u32);
            out.set(global_id(0), x + y);
        })
        .unwrap();
        let ir = crate::ir::print::function_to_string(k.ir());
        let v: Vec<Verdict> = verdicts(&k)
            .into_iter()
            .filter(|(m, _)| m == "tile")
            .map(|(_, v)| v)
            .collect();
        let fixed = |terms: Vec<Term>, offset: i64| {
            Verdict::ProvenIf(vec![Precondition {
                terms,
                offset,
                limit: Limit::Fixed(256),
            }])
        };
        let ls1 = |n: usize| vec![Term::LocalSize(1); n];
        assert_eq!(
            v,
            [
                // local_size(0) - 1 + 16 * local_size(1) - 16 <= 255.
                fixed([vec![Term::LocalSize(0)], ls1(16)].concat(), -16),
                // 16 * local_size(1) - 16 + 15 <= 255.
                fixed(ls1(16), 0),
                // The shift by 4: 16 * local_size(1) - 16 + 3 <= 255.
                fixed(ls1(16), -12),
            ],
            "{ir}"
        );
    }

    #[test]
    fn products_that_may_wrap() {
        // `i * 4` under `i < n` may wrap past 2^32 (n near 2^31): then the lanes are not
        // where the bound says. Into a buffer, whose length may exceed 2^32, proven only where
        // the bound is also below `u32::MAX` (no wrap).
        let k = Kernel::build("w", |k| {
            let a = k.read_write::<u32>("a");
            let n = k.scalar::<u32>("n");
            let i = global_id(0);
            if_(i.lt(n), || a.set(i * 4u32, 1u32));
        })
        .unwrap();
        let n = param(&k, "n");
        assert_eq!(
            verdict_of(&k, "a"),
            needs_nowrap(&k, &[Term::Param(n); 4], -3, "a")
        );
        // A signed product may wrap to a negative index: not proven even into a tile.
        let k = Kernel::build("w", |k| {
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 256);
            let ly = local_id(1).cast::<i32>();
            tile.set(ly * 16 + 3, 1.0f32);
            out.set(global_id(0), tile.at(3u32));
        })
        .unwrap();
        assert_eq!(verdicts(&k)[0], ("tile".into(), Verdict::Unproven));
        // A constant too large to repeat a term (100 > 64 terms), and a negative one.
        let k = Kernel::build("w", |k| {
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 256);
            tile.set(local_id(1) * 100u32, 1.0f32);
            let j = local_id(1).cast::<i32>();
            if_(j.lt(4), || tile.set((j * -16).cast::<u32>(), 2.0f32));
            out.set(global_id(0), tile.at(3u32));
        })
        .unwrap();
        // No sum of terms bounds them, but their numeric ranges do where the group is narrow
        // in dimension 1: `local_id(1) * 100 <= 255` for two rows, `j * -16` for one.
        let v = verdicts(&k);
        let narrow = |limit| {
            Verdict::ProvenIf(vec![Precondition {
                terms: vec![Term::LocalSize(1)],
                offset: 0,
                limit: Limit::Fixed(limit),
            }])
        };
        assert_eq!(v[0], ("tile".into(), narrow(2)), "{v:?}");
        assert_eq!(v[1], ("tile".into(), narrow(1)), "{v:?}");
        // With a small numeric range the product is exact: proven outright.
        let k = Kernel::build("w", |k| {
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 256);
            let j = local_id(1);
            if_(j.lt(16u32), || tile.set(j * 16u32 + 15u32, 1.0f32));
            out.set(global_id(0), tile.at(3u32));
        })
        .unwrap();
        assert_eq!(verdicts(&k)[0], ("tile".into(), Verdict::Proven));
    }

    /// The constant offsets ([`Proof::offset`]) of `k`'s accesses to `mem`, in order.
    fn offsets(k: &Kernel, mem: &str) -> Vec<Option<i64>> {
        let f = k.ir();
        let proof = Proof::of(f);
        let mut out = Vec::new();
        walk_block(&f.body, &mut |s| {
            if let Stmt::Load { mem: m, index, .. } | Stmt::Store { mem: m, index, .. } = s {
                if f.mem_name(*m) == mem {
                    out.push(proof.offset(*m, *index).map(|(_, k)| k));
                }
            }
        });
        out
    }

    #[test]
    fn constant_offsets_where_the_sum_cannot_wrap() {
        // `ly * 16 + 15` may wrap as far as the types go, but not where the precondition
        // `16 * local_size(1) <= 256` holds: one address for the row, offset 15.
        let k = Kernel::build("mm", |k| {
            let out = k.write::<f32>("out");
            let a = k.read::<f32>("a");
            let tile = k.local_array::<f32>("tile", 256);
            let (lx, ly) = (local_id(0), local_id(1));
            tile.set(ly * 16u32 + lx, 1.0f32);
            barrier();
            let x = tile.at(ly * 16u32 + 15u32);
            // Proven by the guard on the sum, with an offset: an id is below 2^32 - 1 (a
            // launch's sizes are at most that), so `lx + 1` cannot wrap.
            let y = var(0.0f32);
            if_((lx + 1u32).lt(16u32), || y.set(tile.at(lx + 1u32)));
            // A sum whose range cannot wrap: an offset whatever the verdict.
            if_(lx.lt(100u32), || y.set(y.get() + a.at(lx + 7u32)));
            out.set(global_id(0), x + y.get());
        })
        .unwrap();
        let ir = crate::ir::print::function_to_string(k.ir());
        assert_eq!(offsets(&k, "tile"), [None, Some(15), Some(1)], "{ir}");
        assert_eq!(offsets(&k, "a"), [Some(7)], "{ir}");
        assert!(matches!(verdict_of(&k, "a"), Verdict::ProvenIf(_)), "{ir}");
        let v: Vec<Verdict> = verdicts(&k)
            .into_iter()
            .filter(|(m, _)| m == "tile")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(v[2], Verdict::Proven, "{ir}");
        // A signed row: `(ly as i32) * 16` may be negative, no offset (nor a proof).
        let k = Kernel::build("mm", |k| {
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 256);
            let ly = local_id(1).cast::<i32>();
            out.set(global_id(0), tile.at(ly * 16 + 5));
        })
        .unwrap();
        assert_eq!(offsets(&k, "tile"), [None]);
    }

    #[test]
    fn every_occurrence_must_be_proven() {
        // The same access once guarded and once not: unproven.
        let k = Kernel::build("e", |k| {
            let a = k.read_write::<u32>("a");
            let i = global_id(0);
            if_(i.lt(a.len()), || a.set(i, 1u32));
            a.set(i, 2u32);
        })
        .unwrap();
        assert!(verdicts(&k).iter().all(|(_, v)| *v == Verdict::Unproven));
    }
}
