//! Atomics on a buffer that no work-item reads, kept per thread (issue 31).
//!
//! A histogram's `bins.atomic_add(x >> 24, 1)` is a locked instruction on x86-64 (`lock add`:
//! 2^24 of them into 256 bins take 81 ms on one core of the 2-core test machine, against 4 ms
//! for plain adds), and with two threads the bins' cache lines go back and forth between the
//! cores on every update (199 ms, slower than one thread). A buffer parameter whose every
//! access in the kernel is a read-modify-write atomic whose old value is unused, all of one
//! kind ([`Merge`]: add and subtract, and, or, xor, min, max on 32- or 64-bit integers), is
//! never observed by the launch's own work-items: only its contents after the launch are, and
//! those do not depend on the order the operations ran in. A launch ([`choose`]) then gives
//! each thread taking part ([`run`](super::run)'s worker) a copy of the buffer filled with the
//! operation's identity ([`Private::fill`]), which the kernel's atomics update with plain
//! loads and stores (compiled code tests the launch's [`Env::private`](super::Env) bit of the
//! buffer: one branch), and the worker combines its copy into the buffer when it is done
//! ([`Private::merge`]), element by element with the atomic operation, so that several
//! workers' copies, and another launch's atomics on the same buffer at the same time, combine
//! as the atomics would have.
//!
//! Only where it pays and is safe: a buffer of at most [`MAX_BYTES`], used by at least
//! [`WORK_PER_ELEMENT`] work-items per element (filling and merging a copy costs two passes
//! over it per thread), that no other buffer argument of the launch shares memory with
//! (reads of an alias would see the copy's updates missing), in a kernel without stubs (whose
//! CPU bodies are the user's Rust, which might read the buffer). Float atomics stay atomic: a
//! float sum's bits depend on its order.

use crate::ir::{self, AtomicOp, Function, Mem, ParamId, ParamKind, Scalar, Stmt};
use crate::runtime::ArgValue;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// The largest buffer kept per thread, in bytes (a copy per thread, filled and merged once a
/// launch; the L2 cache of most cores holds one).
pub(super) const MAX_BYTES: u64 = 256 << 10;

/// The fewest work-items of a launch per element of a buffer kept per thread.
pub(super) const WORK_PER_ELEMENT: u64 = 4;

/// How the operations on a buffer kept per thread combine: the kind of the kernel's atomics on
/// it (subtraction is addition: a copy that starts at 0 holds the negated sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Merge {
    Add,
    And,
    Or,
    Xor,
    Min,
    Max,
}

impl Merge {
    fn of(op: AtomicOp) -> Option<Merge> {
        Some(match op {
            AtomicOp::Add | AtomicOp::Sub => Merge::Add,
            AtomicOp::And => Merge::And,
            AtomicOp::Or => Merge::Or,
            AtomicOp::Xor => Merge::Xor,
            AtomicOp::Min => Merge::Min,
            AtomicOp::Max => Merge::Max,
            AtomicOp::Exchange | AtomicOp::CompareExchange => return None,
        })
    }
}

/// A buffer parameter that a launch may keep per thread: every access to it in the kernel an
/// atomic of kind `merge` on its `scalar` elements with the old value unused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Private {
    pub(super) param: ParamId,
    pub(super) scalar: Scalar,
    pub(super) merge: Merge,
}

/// The buffer parameters of `f` that a launch may keep per thread (at most the first 32
/// parameters: [`Env::private`](super::Env) is a bit per parameter).
pub(super) fn candidates(f: &Function) -> Vec<Private> {
    if !f.stubs.is_empty() {
        return Vec::new();
    }
    // Per parameter: `None` not seen, `Some(None)` not a candidate, `Some(Some(m))` atomics
    // of kind `m` only so far.
    let mut seen: Vec<Option<Option<Merge>>> = vec![None; f.params.len()];
    ir::walk_block(&f.body, &mut |s| {
        let (mem, kind) = match s {
            Stmt::Atomic {
                result: None,
                mem,
                op,
                ..
            } => (*mem, Merge::of(*op)),
            Stmt::Load { mem, .. }
            | Stmt::Store { mem, .. }
            | Stmt::AtomicLoad { mem, .. }
            | Stmt::Atomic { mem, .. } => (*mem, None),
            _ => return,
        };
        let Some(p) = f.mem_buffer(mem) else { return };
        // Through a field view: a buffer of structs, never a candidate.
        let kind = kind.filter(|_| matches!(mem, Mem::Buffer(_)));
        let slot = &mut seen[p.index()];
        *slot = Some(match *slot {
            None => kind,
            Some(k) if k == kind => k,
            Some(_) => None,
        });
    });
    seen.iter()
        .enumerate()
        .take(32)
        .filter_map(|(i, s)| {
            let merge = (*s)??;
            let param = ParamId::new(i);
            let ParamKind::Buffer { elem, .. } = f.params[param].kind else {
                return None;
            };
            let t = elem.value()?;
            let int = t.width == 1 && t.scalar.is_int() && matches!(t.scalar.size(), 4 | 8);
            int.then_some(Private {
                param,
                scalar: t.scalar,
                merge,
            })
        })
        .collect()
}

/// The parameters (a bit each) a launch of `work_items` work-items with `args` keeps per
/// thread, of the kernel's `candidates`: those whose buffer is small enough, used by enough
/// work-items per element, and shares its memory with no other argument.
pub(super) fn choose(candidates: &[Private], args: &[ArgValue], work_items: u64) -> u32 {
    let mut mask = 0u32;
    for c in candidates {
        let ArgValue::Buffer { mem, len } = &args[c.param.index()] else {
            continue;
        };
        let bytes = len.saturating_mul(c.scalar.size() as u64);
        let alias = args.iter().enumerate().any(|(j, a)| {
            j != c.param.index()
                && matches!(a, ArgValue::Buffer { mem: m, .. } if std::sync::Arc::ptr_eq(m, mem))
        });
        if *len > 0
            && bytes <= MAX_BYTES
            && len.saturating_mul(WORK_PER_ELEMENT) <= work_items
            && !alias
        {
            mask |= 1 << c.param.index();
        }
    }
    mask
}

impl Private {
    /// The identity of the merge in this buffer's elements, as the bits of one element.
    fn identity(&self) -> u64 {
        let bits = 8 * self.scalar.size() as u32;
        let ones = u64::MAX >> (64 - bits);
        let signed = self.scalar.is_signed();
        match self.merge {
            Merge::Add | Merge::Or | Merge::Xor => 0,
            Merge::And => ones,
            // The type's largest value: all ones unsigned, all ones but the sign bit signed.
            Merge::Min if signed => ones >> 1,
            Merge::Min => ones,
            // The type's smallest value: zero unsigned, the sign bit alone signed.
            Merge::Max if signed => 1 << (bits - 1),
            Merge::Max => 0,
        }
    }

    /// Fills `copy`, `len` elements (and what rounds them up to whole words), with the
    /// identity.
    pub(super) fn fill(&self, copy: &mut Vec<u64>, len: u64) {
        let id = self.identity();
        let word = if self.scalar.size() == 4 {
            id | id << 32
        } else {
            id
        };
        copy.clear();
        copy.resize((len as usize * self.scalar.size()).div_ceil(8), word);
    }

    /// Combines the copy `copy` into the buffer of `len` elements at `base`, element by element
    /// with the atomic operation (the elements still at the identity left alone).
    ///
    /// # Safety
    /// `base` points to `len` elements of this buffer's scalar, aligned, which stay alive
    /// during the call and are accessed only atomically by others meanwhile.
    pub(super) unsafe fn merge(&self, copy: &[u64], base: *mut u8, len: u64) {
        let id = self.identity();
        let n = len as usize;
        macro_rules! merge {
            ($atomic:ty, $t:ty, $op:ident) => {{
                // SAFETY: `copy` holds at least `n` elements (`fill`); `base` as the caller
                // promises.
                let src = unsafe { std::slice::from_raw_parts(copy.as_ptr() as *const $t, n) };
                for (i, &v) in src.iter().enumerate() {
                    if (v as u64 & (u64::MAX >> (64 - 8 * std::mem::size_of::<$t>()))) != id {
                        let a = unsafe { <$atomic>::from_ptr((base as *mut $t).add(i)) };
                        a.$op(v, Ordering::Relaxed);
                    }
                }
            }};
        }
        macro_rules! by_op {
            ($atomic:ty, $t:ty) => {
                match self.merge {
                    Merge::Add => merge!($atomic, $t, fetch_add),
                    Merge::And => merge!($atomic, $t, fetch_and),
                    Merge::Or => merge!($atomic, $t, fetch_or),
                    Merge::Xor => merge!($atomic, $t, fetch_xor),
                    Merge::Min => merge!($atomic, $t, fetch_min),
                    Merge::Max => merge!($atomic, $t, fetch_max),
                }
            };
        }
        match self.scalar {
            Scalar::U32 => by_op!(AtomicU32, u32),
            Scalar::I32 => by_op!(AtomicI32, i32),
            Scalar::U64 => by_op!(AtomicU64, u64),
            Scalar::I64 => by_op!(AtomicI64, i64),
            s => unreachable!("a candidate of {s}: 32- and 64-bit integers only"),
        }
    }
}

/// Which buffers a kernel may keep per thread, and which launches do (here, not in a file of
/// its own: `tests/layers.rs` lets a file's last `mod tests` use the builder).
#[cfg(test)]
mod tests {
    use super::{candidates, choose, Merge, Private};
    use crate::ir::{ParamId, Scalar};
    use crate::prelude::*;
    use crate::runtime::ArgValue;

    fn kept(k: &Kernel) -> Vec<(u32, Scalar, Merge)> {
        candidates(k.ir())
            .into_iter()
            .map(|p| (p.param.raw(), p.scalar, p.merge))
            .collect()
    }

    /// Only buffers of 32- and 64-bit integers that the kernel updates with atomics of one kind
    /// and never reads: no load, no store, no atomic load, no old value used, no exchange.
    #[test]
    fn only_buffers_no_work_item_reads_are_candidates() {
        let k = Kernel::build("which", |k| {
            let x = k.read::<u32>("x");
            let add = k.read_write::<u32>("add");
            let sub = k.read_write::<i64>("add_sub");
            let used = k.read_write::<u32>("used");
            let read = k.read_write::<u32>("read");
            let mixed = k.read_write::<i32>("mixed");
            let float = k.read_write::<f32>("float");
            let xchg = k.read_write::<u32>("xchg");
            let or = k.read_write::<u64>("or");
            let max = k.read_write::<i32>("max");
            let out = k.write::<u32>("out");
            let i = global_id(0);
            let v = x.at(i);
            add.atomic_add(v % 16u32, 1u32);
            sub.atomic_add(v % 16u32, 2i64);
            sub.atomic_sub(v % 8u32, 1i64);
            out.set(i, used.atomic_add(0u32, v));
            read.atomic_add(v % 4u32, 1u32);
            out.set(i + 1u32, read.at(0u32));
            mixed.atomic_min(0u32, 1i32);
            mixed.atomic_max(1u32, 1i32);
            float.atomic_add(0u32, 1.0f32);
            xchg.atomic_exchange(0u32, v);
            or.atomic_or(v % 64u32, 1u64);
            max.atomic_max(0u32, v.cast::<i32>());
        })
        .unwrap();
        assert_eq!(
            kept(&k),
            [
                (1, Scalar::U32, Merge::Add),
                (2, Scalar::I64, Merge::Add),
                (8, Scalar::U64, Merge::Or),
                (9, Scalar::I32, Merge::Max),
            ]
        );
    }

    /// A kernel calling a stub keeps nothing per thread: the stub's CPU body is the user's
    /// Rust, which might read the buffer.
    #[test]
    fn kernels_with_stubs_keep_nothing() {
        let twice = Stub::<(u32,), u32>::new("twice").cpu(|a: u32| 2 * a);
        let k = Kernel::build("stubbed", |k| {
            let h = k.read_write::<u32>("h");
            h.atomic_add(twice.call((global_id(0),)) % 4u32, 1u32);
        })
        .unwrap();
        assert_eq!(kept(&k), []);
    }

    fn buffer(bytes: usize) -> std::sync::Arc<dyn crate::runtime::Memory> {
        std::sync::Arc::new(crate::cpu::CpuMem::new(bytes, "cpu").unwrap())
    }

    /// A launch keeps a candidate per thread only with enough work-items per element, a
    /// small enough buffer, and no other argument on the same memory.
    #[test]
    fn launches_keep_small_busy_buffers_with_no_alias() {
        let c = |param: u32, scalar| Private {
            param: ParamId::from_raw(param),
            scalar,
            merge: Merge::Add,
        };
        let cands = [c(1, Scalar::U32), c(2, Scalar::U64)];
        let (x, h, g) = (buffer(1 << 20), buffer(1 << 20), buffer(1 << 20));
        let arg = |m: &std::sync::Arc<dyn crate::runtime::Memory>, len| ArgValue::Buffer {
            mem: m.clone(),
            len,
        };
        // 256 `u32` and 256 `u64` with 1024 work-items: both; 1023: neither.
        let args = [arg(&x, 1024), arg(&h, 256), arg(&g, 256)];
        assert_eq!(choose(&cands, &args, 1024), 0b110);
        assert_eq!(choose(&cands, &args, 1023), 0);
        // 256 KiB of `u32` kept, of `u64` not (512 KiB).
        let args = [arg(&x, 1024), arg(&h, 1 << 16), arg(&g, 1 << 16)];
        assert_eq!(choose(&cands, &args, 1 << 20), 0b010);
        // `g` on `x`'s memory: `g` not kept; an empty buffer neither.
        let args = [arg(&x, 1024), arg(&h, 0), arg(&x, 256)];
        assert_eq!(choose(&cands, &args, 1 << 20), 0);
    }
}
