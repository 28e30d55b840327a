//! Atomics and fences: the dialect's atomic functions for integers, compare-exchange loops
//! for floats, atomic loads, and the fences and barriers that give atomics their memory order
//! (the atomics themselves are relaxed in both dialects).
//!
//! Float atomic add, min, max and exchange are a compare-exchange loop on the bits, written
//! here once for every dialect (min and max with `fmin`/`fmax`, the evaluator's NaN rule). An
//! atomic load is a `volatile` load in CUDA and an atomic or with 0 in OpenCL C 1.2, which has
//! no atomic load. An order stronger than relaxed is a fence before an atomic that releases
//! and after one that acquires (`mem_fence` of both spaces in OpenCL; `__threadfence_block()`
//! or `__threadfence()` by scope in CUDA).

use super::writer::Writer;
use crate::ir::{self, AtomicOp, ExprId, Fence, Mem, Scalar};

impl Writer<'_> {
    /// The dialect's fence of memory `spaces` at `scope`.
    pub(super) fn fence(&self, spaces: Fence, scope: ir::MemScope) -> &'static str {
        match (scope, self.d.work_group_fence) {
            (ir::MemScope::WorkGroup, Some(f)) => f,
            _ => self.d.fences[Self::fence_index(spaces)],
        }
    }

    /// The fence an atomic of `order` needs before it (`before`: when it releases) or after
    /// it (when it acquires), if any: atomics themselves are relaxed in both dialects (see
    /// [`ir::AtomicOrder`]).
    pub(super) fn order_fence(&mut self, order: ir::AtomicOrder, before: bool) {
        let needed = if before {
            order.order.releases()
        } else {
            order.order.acquires()
        };
        if needed {
            let all = Fence {
                local: true,
                global: true,
            };
            let f = self.fence(all, order.scope);
            self.line(&format!("{f};"));
        }
    }

    /// The index of a fence of memory `f` in the dialect's [`fences`] and [`barriers`]
    /// (local, global, both).
    ///
    /// [`fences`]: super::Dialect::fences
    /// [`barriers`]: super::Dialect::barriers
    pub(super) fn fence_index(f: Fence) -> usize {
        match (f.local, f.global) {
            (true, false) => 0,
            (false, true) => 1,
            _ => 2,
        }
    }

    /// The atomic read of `mem[index]` (the dialect's atomic load, or an atomic or with 0).
    pub(super) fn atomic_load(&mut self, mem: Mem, index: ExprId) -> String {
        let p = format!("&{}", self.mem_ref(mem, index, 0));
        match self.d.atomic_load {
            Some(f) => f.replace("{p}", &p),
            None => {
                let elem = self.f.mem_elem(mem).expect("validated").scalar;
                let or = if elem.size() == 8 {
                    self.d.atomics64[5]
                } else {
                    self.d.atomics32[5]
                };
                format!("{or}({p}, ({})0)", self.ty(elem))
            }
        }
    }

    /// The call of atomic `op` on `mem[index]` with `operand` (and `compare`, for a
    /// compare-exchange), which returns the old value.
    pub(super) fn atomic(
        &mut self,
        mem: Mem,
        index: ExprId,
        op: AtomicOp,
        operand: ExprId,
        compare: Option<ExprId>,
    ) -> String {
        let elem = self.f.mem_elem(mem).expect("validated").scalar;
        let p = format!("&{}", self.mem_ref(mem, index, 0));
        let v = self.expr(operand)[0].clone();
        let k = match op {
            AtomicOp::Add => 0,
            AtomicOp::Sub => 1,
            AtomicOp::Min => 2,
            AtomicOp::Max => 3,
            AtomicOp::And => 4,
            AtomicOp::Or => 5,
            AtomicOp::Xor => 6,
            AtomicOp::Exchange => 7,
            AtomicOp::CompareExchange => 8,
        };
        let space = match mem {
            Mem::Local(_) => self.d.local_ptr,
            _ => self.d.global,
        };
        if elem.is_float() {
            // Float add, min, max and exchange as a compare-exchange loop on the bits (min and
            // max with the evaluator's NaN rule, `fmin`/`fmax`).
            let t = self.ty(elem);
            let (bits, names) = if elem == Scalar::F32 {
                (Scalar::U32, &self.d.atomics32)
            } else {
                (Scalar::U64, &self.d.atomics64)
            };
            let u = self.ty(bits);
            let cas = names[8];
            let as_u = self.d.bitcast.replace("{t}", u);
            let as_f = self.d.bitcast.replace("{t}", t);
            let f = as_f.replace("{x}", "old");
            let (what, new) = match op {
                AtomicOp::Min => ("min", format!("fmin({f}, v)")),
                AtomicOp::Max => ("max", format!("fmax({f}, v)")),
                AtomicOp::Exchange => ("xchg", "v".to_string()),
                _ => ("add", format!("({f} + v)")),
            };
            let name = format!("strata_atomic_{what}_{t}_{}", space.trim_start_matches('_'));
            self.define(format!(
                "{t} {name}(volatile {space} {t}* p, {t} v) {{\n    {u} old = {load};\n    for (;;) {{\n        {u} seen = {cas}((volatile {space} {u}*)p, old, {new});\n        if (seen == old) return {ret};\n        old = seen;\n    }}\n}}\n",
                load = as_u.replace("{x}", "*p"),
                new = as_u.replace("{x}", &new),
                ret = as_f.replace("{x}", "old"),
            ));
            return format!("{name}({p}, {v})");
        }
        let f = if elem.size() == 8 {
            self.d.atomics64[k]
        } else {
            self.d.atomics32[k]
        };
        match compare {
            Some(c) => {
                let c = self.expr(c)[0].clone();
                format!("{f}({p}, {c}, {v})")
            }
            None => format!("{f}({p}, {v})"),
        }
    }
}
