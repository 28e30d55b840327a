//! The order in which the vector variant ([`super::simd`]) lowers a straight-line run of
//! statements that updates many private variables in turn: a register tile unrolled when
//! the kernel was built, as SGEMM's `8 x 8` accumulators, each updated once per step of
//! `k` (`crate::blas`).
//!
//! Written step by step (every accumulator once, then the next step), such a run lowered
//! badly: Cranelift computes a pure value where it is first used, so every update (a fused
//! multiply-add) sank to the region's end, where the accumulators are written to the
//! records, while the run's loads stayed where they were written. All the operands of the
//! run (256 a tile of sixteen steps in SGEMM's `8 x 8`) were live at once, spilled and
//! reloaded: two memory operations and a copy per update besides the update, about 27 bytes
//! of code, and the sixteen-step region outgrew the instruction cache
//! (`sgemm_128x128x16_8x8` ran 1.4-1.6 times as long as the eight-step tiling for as many
//! instructions). [`chain_order`] lowers the run group by group instead: the first group of
//! accumulators (as many as fill half the registers, [`GROUP_REGISTERS`]) through every
//! step, then the next group, so that a group stays in registers from its first update to
//! its last. Each group loads again what it reads of local memory and of buffers the kernel
//! only reads (an element of `B` that every row of the tile multiplies is one load per row,
//! from the L1 cache, instead of a value kept across the run); and the caller stores each
//! update to a stack slot that nothing reads (`Gen::anchor`), which pins it where it was
//! scheduled, right after its operands' loads, and keeps Cranelift from merging a group's
//! loads with the same loads of the group before. Per update: a load, the fused
//! multiply-add and that store.
//!
//! Only the order changes, never what a statement computes: each private variable's loads
//! and stores keep their order, a statement comes after every statement of the run whose
//! value it uses, and a run holds only statements that neither fault nor write memory (a
//! `let` without integer division, a private variable's load or store, a load that the
//! proof puts in bounds where it is lowered: the caller's choice,
//! `Gen::movable`; loaded again only where nothing else can write the element while the
//! run executes). So every work-item computes the same bits in the same order of
//! additions per accumulator (the interpreter's), and faults where it did.

use super::plan::values_of;
use crate::ir::{Function, Mem, PrivateId, Stmt, ValueId};
use std::collections::{HashMap, HashSet};

/// The vector registers one group of accumulators may take (half of x86-64's sixteen: the
/// rest hold the operands, the splat of a shared factor and temporaries).
pub(super) const GROUP_REGISTERS: usize = 8;

/// How to lower a run ([`chain_order`]): indices into it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Schedule {
    /// Each group's statements in order.
    pub(super) groups: Vec<Vec<usize>>,
    /// What no group needed, after them, in the written order.
    pub(super) rest: Vec<usize>,
}

/// The run's statements the way [`chain_order`] sees them.
pub(super) struct RunInfo<'a> {
    /// The private variable a memory is (`None` for a buffer, a local or a private array).
    pub(super) private_var: &'a dyn Fn(Mem) -> Option<PrivateId>,
    /// The vector registers a private variable's value takes.
    pub(super) registers: &'a dyn Fn(PrivateId) -> usize,
    /// Whether a statement (a load of memory) may be lowered once per group that reads it.
    pub(super) reloadable: &'a dyn Fn(&Stmt) -> bool,
}

/// How to lower `run` group by group, as the module docs say, or `None` to keep the written
/// order: where no private variable is stored twice in the run, or all that it stores fit
/// one group.
pub(super) fn chain_order(f: &Function, run: &[Stmt], info: &RunInfo<'_>) -> Option<Schedule> {
    let n = run.len();
    let mut defined: HashMap<ValueId, usize> = HashMap::new();
    let mut last_access: HashMap<PrivateId, usize> = HashMap::new();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    // The stored variables in order of their first store, and each one's stores in order.
    let mut vars: Vec<PrivateId> = Vec::new();
    let mut stores: HashMap<PrivateId, Vec<usize>> = HashMap::new();
    for (i, s) in run.iter().enumerate() {
        let var = match *s {
            Stmt::Let { .. } => None,
            Stmt::Load { mem, .. } | Stmt::Store { mem, .. } => (info.private_var)(mem),
            _ => unreachable!("only lets, loads and stores are in a run"),
        };
        let (_, reads) = values_of(f, std::slice::from_ref(s), &[]);
        let mut before: Vec<usize> = reads
            .into_iter()
            .filter_map(|v| defined.get(&v).copied())
            .collect();
        if let Some(p) = var {
            // A private variable's loads and stores keep their order.
            before.extend(last_access.insert(p, i));
            if let Stmt::Store { .. } = s {
                let list = stores.entry(p).or_default();
                if list.is_empty() {
                    vars.push(p);
                }
                list.push(i);
            }
        }
        before.sort_unstable();
        before.dedup();
        preds[i] = before;
        if let Stmt::Let { value, .. } | Stmt::Load { value, .. } = *s {
            defined.insert(value, i);
        }
    }
    // Groups of consecutive variables, each within the register budget.
    let mut groups: Vec<Vec<PrivateId>> = Vec::new();
    let mut used = GROUP_REGISTERS;
    for &p in &vars {
        let r = (info.registers)(p).max(1);
        if used + r > GROUP_REGISTERS {
            groups.push(Vec::new());
            used = 0;
        }
        used += r;
        groups.last_mut().expect("a group").push(p);
    }
    if groups.len() < 2 || stores.values().all(|s| s.len() < 2) {
        return None;
    }
    let reload: Vec<bool> = run.iter().map(|s| (info.reloadable)(s)).collect();
    let mut e = Emitter {
        preds: &preds,
        reload: &reload,
        done: vec![false; n],
        in_group: HashSet::new(),
        grouping: true,
        out: Vec::new(),
    };
    let mut schedule = Schedule {
        groups: Vec::new(),
        rest: Vec::new(),
    };
    for g in groups {
        e.in_group.clear();
        let steps = g.iter().map(|p| stores[p].len()).max().unwrap_or(0);
        for k in 0..steps {
            for p in &g {
                if let Some(&i) = stores[p].get(k) {
                    e.emit(i);
                }
            }
        }
        schedule.groups.push(std::mem::take(&mut e.out));
    }
    e.grouping = false;
    for i in 0..n {
        e.emit(i);
    }
    schedule.rest = e.out;
    Some(schedule)
}

/// Emits statements after those they depend on ([`chain_order`]).
struct Emitter<'a> {
    preds: &'a [Vec<usize>],
    reload: &'a [bool],
    /// Emitted (a reloadable load: at least once).
    done: Vec<bool>,
    /// The reloadable loads emitted in the current group.
    in_group: HashSet<usize>,
    /// Emitting a group (not the rest).
    grouping: bool,
    out: Vec<usize>,
}

impl Emitter<'_> {
    /// Whether statement `i` needs no emitting now: a reloadable load already emitted in
    /// this group (after the groups, emitted at all: what a group loaded is still bound),
    /// anything else already emitted.
    fn emitted(&self, i: usize) -> bool {
        if self.reload[i] && self.grouping {
            self.in_group.contains(&i)
        } else {
            self.done[i]
        }
    }

    /// Emits statement `root` after what it depends on (depth first, with a stack of its
    /// own: a run may be thousands of statements long).
    fn emit(&mut self, root: usize) {
        let mut stack = vec![(root, 0usize)];
        while let Some((i, k)) = stack.pop() {
            if k == 0 && self.emitted(i) {
                continue;
            }
            if let Some(&p) = self.preds[i].get(k) {
                stack.push((i, k + 1));
                stack.push((p, 0));
                continue;
            }
            self.done[i] = true;
            if self.reload[i] {
                self.in_group.insert(i);
            }
            self.out.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{chain_order, RunInfo, Schedule};
    use crate::ir::{Function, Mem, PrivateId, Stmt};
    use crate::prelude::*;

    /// Twelve `f32` accumulators updated in three steps, each from an element of a local
    /// tile and one of a buffer (the shape of a register tile), and one that also reads
    /// another's value; then written out.
    fn tile_kernel() -> Kernel {
        Kernel::build("tile", |k| {
            let b = k.read::<f32>("b");
            let out = k.write::<f32>("out");
            let tile = k.local_array::<f32>("tile", 16);
            let acc: Vec<Var<f32>> = (0..12)
                .map(|j| var_named(&format!("c{j}"), 0.0f32))
                .collect();
            for s in 0..3u32 {
                let x = tile.at(lit(s));
                for (j, v) in acc.iter().enumerate() {
                    v.set(x.fma(b.at(lit(s * 12 + j as u32)), v.get()));
                }
                acc[9].set(acc[9].get() + acc[2].get());
            }
            for (j, v) in acc.iter().enumerate() {
                out.set(global_id(0) * 12u32 + j as u32, v.get());
            }
        })
        .unwrap()
    }

    /// The private variable `mem` is (none is an array here).
    fn var(mem: Mem) -> Option<PrivateId> {
        match mem {
            Mem::Private(p) => Some(p),
            _ => None,
        }
    }

    /// The leading statements that a run may hold: lets, loads, stores of private variables.
    fn run_of(f: &Function) -> &[Stmt] {
        let n = f
            .body
            .iter()
            .take_while(|s| match s {
                Stmt::Let { .. } | Stmt::Load { .. } => true,
                Stmt::Store { mem, .. } => var(*mem).is_some(),
                _ => false,
            })
            .count();
        &f.body[..n]
    }

    fn schedule(f: &Function, run: &[Stmt], registers: usize) -> Option<Schedule> {
        let reload = |s: &Stmt| matches!(s, Stmt::Load { mem, .. } if var(*mem).is_none());
        let info = RunInfo {
            private_var: &var,
            registers: &|_| registers,
            reloadable: &reload,
        };
        chain_order(f, run, &info)
    }

    /// The group order keeps what the written order means: a variable's loads and stores in
    /// their order, every value defined before it is read, every statement lowered (a load
    /// of memory once per group that reads it, no other twice); the first group stores only
    /// the first eight variables, step by step.
    #[test]
    fn groups_keep_each_variables_order_and_every_dependency() {
        let k = tile_kernel();
        let f = k.ir();
        let run = run_of(f);
        let sc = schedule(f, run, 1).expect("twelve variables stored three times: two groups");
        assert_eq!(sc.groups.len(), 2);
        let flat: Vec<usize> = sc
            .groups
            .iter()
            .flatten()
            .chain(&sc.rest)
            .copied()
            .collect();
        let mut seen = vec![0u32; run.len()];
        let mut last: std::collections::HashMap<PrivateId, usize> = Default::default();
        let mut defined = std::collections::HashSet::new();
        for &i in &flat {
            seen[i] += 1;
            match run[i] {
                Stmt::Let { value, .. } => {
                    defined.insert(value);
                }
                Stmt::Load { value, mem, .. } => {
                    if let Some(p) = var(mem) {
                        // After the variable's previous access in the written order.
                        let prev = last.insert(p, i);
                        assert!(prev.is_none_or(|j| j < i), "{p:?} out of order");
                    }
                    defined.insert(value);
                }
                Stmt::Store { mem, .. } => {
                    let p = var(mem).expect("a private variable");
                    let prev = last.insert(p, i);
                    assert!(prev.is_none_or(|j| j < i), "{p:?} out of order");
                }
                _ => unreachable!(),
            }
            for v in super::values_of(f, std::slice::from_ref(&run[i]), &[]).1 {
                let in_run = run.iter().any(|s| {
                    matches!(s, Stmt::Let { value, .. } | Stmt::Load { value, .. } if *value == v)
                });
                assert!(
                    !in_run || defined.contains(&v),
                    "{v:?} read before it is defined"
                );
            }
        }
        for (i, s) in run.iter().enumerate() {
            let reloadable = matches!(s, Stmt::Load { mem, .. } if var(*mem).is_none());
            assert!(seen[i] >= 1, "statement {i} lowered");
            assert!(
                reloadable || seen[i] == 1,
                "statement {i} lowered {} times",
                seen[i]
            );
        }
        // The first group: the first eight variables stored (in the order of their first
        // store), step by step.
        let first_stores: Vec<PrivateId> = run
            .iter()
            .filter_map(|s| match s {
                Stmt::Store { mem, .. } => var(*mem),
                _ => None,
            })
            .fold(Vec::new(), |mut v, p| {
                if !v.contains(&p) {
                    v.push(p);
                }
                v
            });
        let stored: Vec<PrivateId> = sc.groups[0]
            .iter()
            .filter_map(|&i| match run[i] {
                Stmt::Store { mem, .. } => var(mem),
                _ => None,
            })
            .collect();
        // (Four stores each: the initial value and three steps.)
        let want: Vec<PrivateId> = (0..4).flat_map(|_| first_stores[..8].to_vec()).collect();
        assert_eq!(stored, want);
        // The tile's element of each step is loaded again by the second group.
        let tile_loads = |g: &[usize]| {
            g.iter()
                .filter(|&&i| {
                    matches!(
                        run[i],
                        Stmt::Load {
                            mem: Mem::Local(_),
                            ..
                        }
                    )
                })
                .count()
        };
        assert_eq!(
            (tile_loads(&sc.groups[0]), tile_loads(&sc.groups[1])),
            (3, 3)
        );
    }

    /// No group order where it would not pay: where no variable is stored twice, or all
    /// the variables fit one group's registers; a group per variable where each takes the
    /// whole budget.
    #[test]
    fn runs_that_fit_the_registers_keep_their_order() {
        let k = tile_kernel();
        let f = k.ir();
        let run = run_of(f);
        assert!(schedule(f, run, 1).is_some());
        // With every variable stored once: the first step alone.
        let first_step = run
            .iter()
            .position(|s| matches!(s, Stmt::Store { mem, .. } if var(*mem).is_some()))
            .unwrap();
        let one_step_end = (first_step..run.len())
            .filter(|&i| matches!(run[i], Stmt::Store { .. }))
            .nth(11)
            .unwrap();
        assert!(schedule(f, &run[..=one_step_end], 1).is_none());
        // Twelve variables of eight registers each: a group each.
        assert_eq!(schedule(f, run, 8).map(|s| s.groups.len()), Some(12));
        // Four variables of one register: one group.
        let four = Kernel::build("four", |k| {
            let out = k.write::<f32>("out");
            let acc: Vec<Var<f32>> = (0..4)
                .map(|j| var_named(&format!("c{j}"), 1.0f32))
                .collect();
            for _ in 0..5 {
                for v in &acc {
                    v.set(v.get() * 2.0f32);
                }
            }
            for (j, v) in acc.iter().enumerate() {
                out.set(lit(j as u32), v.get());
            }
        })
        .unwrap();
        let f4 = four.ir();
        assert!(schedule(f4, run_of(f4), 1).is_none());
    }
}
