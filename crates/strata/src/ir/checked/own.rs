//! The race checks' proof that a buffer needs no shadow: every access of the kernel to it
//! indexes it by the work-item in one affine way ([`OwnIndex`], found by [`own_index`]), and
//! the launch's range ([`OwnIndex::keeps_apart`]) keeps the elements of different work-items
//! apart. `c[global_id(0)] = a[i] + b[i]` is the common case: in a 1-D launch no two
//! work-items reach one element of `c`, so no two accesses to it can race.
//!
//! The proof is split because the instrumentation runs once per kernel and the range is known
//! only at launch: the kernel keeps the buffer's race checks behind a test of its shadow's
//! length, and the launch passes a one-word shadow (instead of [`super::SHADOW_WORDS`] words
//! per element) where the range keeps the work-items apart, so the checks are skipped and the
//! shadow costs neither memory nor zeroing. A 2-D launch of a kernel that indexes by
//! `global_id(0)` keeps them (work-items `(x, 0)` and `(x, 1)` share elements).

use std::collections::HashMap;

use crate::ir::{BinaryOp, Builtin, Expr, ExprId, Function, Mem, ParamId, Stmt};

/// How every access of a kernel to one buffer indexes it: `u + group × group_id(dim) +
/// local × local_id(dim) + global × global_id(dim) + j`, where `u` is one expression the same
/// in every work-item of the launch (the same in every access), the coefficients are the
/// same non-negative literals in every access, and the literal offsets `j` differ at most by
/// `span`, distinct ones by at least `gap`; the arithmetic is in `bits`-bit integers (it
/// wraps there). `local_linear_id` and `group_linear_id` count as dimension 0's ids (they
/// are where the other dimensions are 1, which [`OwnIndex::keeps_apart`] requires).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct OwnIndex {
    /// The dimension of the ids.
    pub dim: u8,
    /// The coefficient of `global_id(dim)`.
    pub global: u64,
    /// The coefficient of `local_id(dim)`.
    pub local: u64,
    /// The coefficient of `group_id(dim)`.
    pub group: u64,
    /// The largest literal offset minus the smallest.
    pub span: u64,
    /// The smallest difference of two distinct literal offsets (`u64::MAX` for one offset).
    pub gap: u64,
    /// The width of the narrowest integer the index is computed in.
    pub bits: u8,
}

impl OwnIndex {
    /// Whether no two work-items of a launch of `global` work-items in work-groups of
    /// `local` can reach one element: the other dimensions have one work-item, the
    /// work-items of a group reach disjoint elements (each one's offsets fit between its
    /// neighbours', or interleave with gaps wider than the group), the groups reach disjoint
    /// blocks, and the whole launch's elements fit in `2^bits` (nothing wraps onto another).
    pub fn keeps_apart(&self, global: [usize; 3], local: [usize; 3]) -> bool {
        let d = self.dim as usize;
        if (0..3).any(|e| e != d && global[e] != 1) || d > 2 {
            return false;
        }
        let (g, l) = (global[d] as u128, local[d] as u128);
        if l == 0 || g % l != 0 {
            return false;
        }
        let groups = g / l;
        // Per work-item and per work-group steps of the index.
        let q = self.global as u128 + self.local as u128;
        let p = self.global as u128 * l + self.group as u128;
        let span = self.span as u128;
        let in_group = l == 1 || q > span || (q >= 1 && self.gap as u128 >= q * l);
        // The elements one work-group reaches, from its smallest.
        let footprint = q * (l - 1) + span + 1;
        let across = groups <= 1 || p >= footprint;
        let fits = p * (groups.max(1) - 1) + footprint <= 1u128 << self.bits;
        in_group && across && fits
    }
}

/// A decomposition of an index expression (see [`OwnIndex`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Affine {
    uniform: Option<ExprId>,
    dim: Option<u8>,
    global: i128,
    local: i128,
    group: i128,
    offset: i128,
    bits: u32,
}

/// The largest literal multiplier followed (larger ones are not worth proving anything).
const MAX_FACTOR: i128 = 1 << 20;

impl Affine {
    fn offset(offset: i128, bits: u32) -> Affine {
        Affine {
            uniform: None,
            dim: None,
            global: 0,
            local: 0,
            group: 0,
            offset,
            bits,
        }
    }

    fn is_offset(&self) -> bool {
        self.uniform.is_none() && self.dim.is_none()
    }

    fn add(self, o: Affine, sign: i128) -> Option<Affine> {
        let dim = match (self.dim, o.dim) {
            (Some(a), Some(b)) if a != b => return None,
            (a, b) => a.or(b),
        };
        let uniform = match (self.uniform, o.uniform) {
            (Some(_), Some(_)) => return None,
            (Some(u), None) => Some(u),
            (None, Some(u)) if sign > 0 => Some(u),
            (None, Some(_)) => return None,
            (None, None) => None,
        };
        if sign < 0 && !o.is_offset() {
            return None;
        }
        Some(Affine {
            uniform,
            dim,
            global: self.global + o.global,
            local: self.local + o.local,
            group: self.group + o.group,
            offset: self.offset + sign * o.offset,
            bits: self.bits.min(o.bits),
        })
    }

    fn scale(self, k: i128) -> Option<Affine> {
        if !(0..=MAX_FACTOR).contains(&k) || self.uniform.is_some() {
            return None;
        }
        Some(Affine {
            global: self.global * k,
            local: self.local * k,
            group: self.group * k,
            offset: self.offset * k,
            ..self
        })
    }
}

/// Whether `e` has the same value in every work-item of a launch: it reads only literals,
/// scalar parameters, buffer lengths and the launch's sizes.
fn launch_uniform(f: &Function, e: ExprId) -> bool {
    crate::ir::all_exprs(&f.exprs, e, |x| match x {
        Expr::Builtin(b) => matches!(
            b,
            Builtin::GlobalSize(_) | Builtin::LocalSize(_) | Builtin::NumGroups(_)
        ),
        Expr::Value(_) | Expr::Stub(..) => false,
        _ => true,
    })
}

/// `e` as an [`Affine`] index, if it is one.
fn affine(f: &Function, e: ExprId) -> Option<Affine> {
    affine_in(f, e, &mut HashMap::new())
}

/// [`affine`], with the forms of the expressions seen so far in `memo`: indices share
/// operands (`z + z`, `z` another such sum), which a walk of the tree would decompose once
/// per path, exponentially often.
fn affine_in(
    f: &Function,
    e: ExprId,
    memo: &mut HashMap<ExprId, Option<Affine>>,
) -> Option<Affine> {
    if let Some(&a) = memo.get(&e) {
        return a;
    }
    let a = affine_step(f, e, memo);
    memo.insert(e, a);
    a
}

fn affine_step(
    f: &Function,
    e: ExprId,
    memo: &mut HashMap<ExprId, Option<Affine>>,
) -> Option<Affine> {
    let ty = f.exprs.ty(e);
    if ty.width != 1 || !ty.scalar.is_int() {
        return None;
    }
    let bits = ty.scalar.bits();
    if let Some(l) = f.exprs.literal(e) {
        return Some(Affine::offset(l.as_i128(), bits));
    }
    if launch_uniform(f, e) {
        return Some(Affine {
            uniform: Some(e),
            ..Affine::offset(0, bits)
        });
    }
    let id = |dim: u8, which: usize| {
        let mut a = Affine {
            dim: Some(dim),
            ..Affine::offset(0, bits)
        };
        *[&mut a.global, &mut a.local, &mut a.group][which] = 1;
        Some(a)
    };
    match *f.exprs.get(e) {
        Expr::Builtin(Builtin::GlobalId(d)) => id(d, 0),
        Expr::Builtin(Builtin::LocalId(d)) => id(d, 1),
        Expr::Builtin(Builtin::GroupId(d)) => id(d, 2),
        Expr::Builtin(Builtin::LocalLinearId) => id(0, 1),
        Expr::Builtin(Builtin::GroupLinearId) => id(0, 2),
        Expr::Binary(BinaryOp::Add, a, b) => affine_in(f, a, memo)?.add(affine_in(f, b, memo)?, 1),
        Expr::Binary(BinaryOp::Sub, a, b) => affine_in(f, a, memo)?.add(affine_in(f, b, memo)?, -1),
        Expr::Binary(BinaryOp::Mul, a, b) => {
            let (x, k) = match (f.exprs.literal(a), f.exprs.literal(b)) {
                (_, Some(k)) => (a, k),
                (Some(k), None) => (b, k),
                (None, None) => return None,
            };
            affine_in(f, x, memo)?.scale(k.as_i128())
        }
        Expr::Binary(BinaryOp::Shl, a, b) => {
            let k = f.exprs.literal(b)?.as_i128();
            if !(0..20).contains(&k) {
                return None;
            }
            affine_in(f, a, memo)?.scale(1 << k)
        }
        // A widening (or same-width) integer conversion keeps distinct values distinct.
        Expr::Cast(a, _) => {
            let from = f.exprs.ty(a);
            if !from.scalar.is_int() || from.scalar.bits() > bits {
                return None;
            }
            affine_in(f, a, memo)
        }
        _ => None,
    }
}

/// How every access of `body` to buffer parameter `p` indexes it, where that is one
/// [`OwnIndex`]: no atomics on it and no field views of it.
pub(super) fn own_index(f: &Function, body: &[Stmt], p: ParamId) -> Option<OwnIndex> {
    if f.fields.iter().any(|v| v.buffer == p) {
        return None;
    }
    let mut forms: Vec<Option<Affine>> = Vec::new();
    crate::ir::walk_block(body, &mut |s| match s {
        Stmt::Load {
            mem: Mem::Buffer(q),
            index,
            ..
        }
        | Stmt::Store {
            mem: Mem::Buffer(q),
            index,
            ..
        } if *q == p => forms.push(affine(f, *index)),
        Stmt::Atomic {
            mem: Mem::Buffer(q),
            ..
        }
        | Stmt::AtomicLoad {
            mem: Mem::Buffer(q),
            ..
        } if *q == p => forms.push(None),
        _ => {}
    });
    let forms: Vec<Affine> = forms.into_iter().collect::<Option<_>>()?;
    let first = *forms.first()?;
    let dim = first.dim?;
    let same = |a: &Affine| {
        (a.uniform, a.dim, a.global, a.local, a.group)
            == (
                first.uniform,
                first.dim,
                first.global,
                first.local,
                first.group,
            )
    };
    if !forms.iter().all(same)
        || [first.global, first.local, first.group]
            .iter()
            .any(|&c| c < 0)
    {
        return None;
    }
    let mut offsets: Vec<i128> = forms.iter().map(|a| a.offset).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let span = offsets.last()? - offsets.first()?;
    let gap = offsets.windows(2).map(|w| w[1] - w[0]).min();
    let small = |v: i128| u64::try_from(v).ok();
    Some(OwnIndex {
        dim,
        global: small(first.global)?,
        local: small(first.local)?,
        group: small(first.group)?,
        span: small(span)?,
        gap: gap.map_or(Some(u64::MAX), small)?,
        bits: forms.iter().map(|a| a.bits).min()? as u8,
    })
}

#[cfg(test)]
mod tests {
    use super::OwnIndex;

    fn own(global: u64, local: u64, group: u64, span: u64, gap: u64) -> OwnIndex {
        OwnIndex {
            dim: 0,
            global,
            local,
            group,
            span,
            gap,
            bits: 32,
        }
    }

    #[test]
    fn ranges_that_keep_work_items_apart() {
        let g = |n: usize, l: usize| ([n, 1, 1], [l, 1, 1]);
        // c[global_id(0)]
        let vadd = own(1, 0, 0, 0, u64::MAX);
        let (gl, lo) = g(1 << 20, 256);
        assert!(vadd.keeps_apart(gl, lo));
        // ... but not in a 2-D launch.
        assert!(!vadd.keeps_apart([1024, 2, 1], [256, 1, 1]));
        // off + global_id * 4 + j, j < 4 (contiguous staging).
        assert!(own(4, 0, 0, 3, 1).keeps_apart(gl, lo));
        // off + group_id * (256 * 4) + local_id + 256 j, j < 4 (strided staging) with a
        // work-group of 256, not of 512 (work-items 0 and 256 would share elements).
        assert!(own(0, 1, 1024, 768, 256).keeps_apart(gl, lo));
        let (gl2, lo2) = g(1 << 20, 512);
        assert!(!own(0, 1, 1024, 768, 256).keeps_apart(gl2, lo2));
        // global_id + j for j in {0, 1}: neighbours overlap.
        assert!(!own(1, 0, 0, 1, 1).keeps_apart(gl, lo));
        // local_id alone: the work-groups share elements.
        assert!(!own(0, 1, 0, 0, u64::MAX).keeps_apart(gl, lo));
        assert!(own(0, 1, 0, 0, u64::MAX).keeps_apart([256, 1, 1], [256, 1, 1]));
        // global_id * 2^30 wraps in 32 bits.
        assert!(!own(1 << 30, 0, 0, 0, u64::MAX).keeps_apart([8, 1, 1], [8, 1, 1]));
        assert!(own(1 << 29, 0, 0, 0, u64::MAX).keeps_apart([8, 1, 1], [8, 1, 1]));
    }
}
