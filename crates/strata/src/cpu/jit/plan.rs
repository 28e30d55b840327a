//! The cut of a kernel into regions, and the layout of the work-item records ([`Plan`]).
//!
//! A kernel is cut at its barriers and collectives into barrier-free regions; what contains
//! them (the `if`s and loops around a barrier) stays at the group level, a tree of [`Node`]s
//! that [`super::run`] walks once per work-group. A value one region defines and another (or
//! the group level) reads gets a [`Slot`] in each work-item's record, as do private arrays,
//! the operands of group-level statements and the exit flags.
//!
//! **Layout.** The records of a work-group are kept in blocks of [`QUAD`] work-items, each
//! byte of a record beside the same byte of the block's other three: the scalar of `size`
//! bytes at record offset `off` of work-item `l` lies at
//! `(l / 4) * 4 * record + 4 * off + (l % 4) * size`. So the four work-items of a vector
//! ([`super::simd`]) have each slot side by side, one vector load or store, and one
//! work-item's slots are still at constant offsets from one base per scalar size.
//!
//! **Guarded regions.** A region whose whole body is `if lid < bound { .. }`, with `lid` the
//! local id in dimension 0 (or the linear one) and `bound` the same in every work-item
//! ([`Uniform`]), is cut off from the statements before it into a region of its own with a
//! [`Guard`]: the group level computes the bound, and the region's work-item loop stops there
//! instead of visiting the work-items that have nothing to do (a tree reduction's levels; with
//! `lid == bound`, after work-item `bound`: work-item 0's work visits one work-item).
//!
//! **Shared counters.** The counter of a group-level `for` whose start and step are the same
//! in every work-item ([`Uniform`]: a tiled matrix product's tile index) is the same in every
//! work-item that runs an iteration: the group level writes it to a word of its own before
//! the records ([`Plan::shared`]), and a region reads it from there, once per call, where it
//! would read each work-item's copy (in the four-lane code, a vector load per block of four
//! and every index computed from it as a vector).

use crate::ir::{
    self, walk_block, BinaryOp, Block, Builtin, Expr, ExprId, Function, GroupOp, GroupScope,
    LoopId, Mem, PrivateId, Scalar, Stmt, Type, ValueId,
};
use std::collections::{HashMap, HashSet};

/// Work-items per block of records (the vector variant's lanes).
pub(super) const QUAD: usize = 4;

/// Bytes the group level keeps before the records, one word: [`LIMIT`], [`EXITED`] and
/// [`RETURNED`] are offsets into them from the records' start.
pub(super) const HEAD: usize = 8;

/// Where a guarded region ([`Guard`]) finds the limit of its work-item loop in dimension 0:
/// a `u32` at this offset from the records (in the [`HEAD`] before them).
pub(super) const LIMIT: i32 = -8;

/// The byte of the [`HEAD`] word at `offset` from the records.
pub(super) const fn head_byte(offset: i32) -> usize {
    (HEAD as i32 + offset) as usize
}

/// The word before the records of the `k`-th shared counter ([`Plan::shared`]): below the
/// [`HEAD`] word.
const fn shared_at(k: usize) -> i32 {
    -((HEAD + 8 * (k + 1)) as i32)
}

/// A byte before the records that region code sets whenever it sets the exit flag of a
/// group-level loop (`break`, `continue`): until then the group level neither reads nor
/// clears the loop's flags.
pub(super) const EXITED: i32 = -4;

/// The same for the `returned` flag.
pub(super) const RETURNED: i32 = -3;

/// Where a value lives in a work-item's record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) off: u32,
    pub(super) ty: Type,
}

/// The group-level program: what runs between regions. What the group level looks up for a
/// node is in it, resolved once by [`Plan::new`] (issue 31: no hash lookup of a loop's flags,
/// no walk of a subtree for [`Plan::may_exit`], per work-group).
#[derive(Debug)]
pub(super) enum Node {
    Region(usize),
    If {
        cond: Slot,
        then: Vec<Node>,
        els: Vec<Node>,
        /// [`Plan::may_exit`] of the node.
        exits: bool,
    },
    For {
        var: Slot,
        /// Where the group level also writes the counter for the regions to read, where it
        /// is the same in every work-item ([`Plan::shared`]): an offset from the records.
        shared: Option<i32>,
        start: Slot,
        end: Slot,
        step: Slot,
        body: Vec<Node>,
        /// Record offsets of the loop's `broken` and `continued` flags ([`Plan::loop_flags`]).
        flags: (u32, u32),
        /// [`Plan::may_exit`] of the node (of its body: a `break` of the loop itself leaves
        /// the loop, not the block around it, and is still counted).
        exits: bool,
    },
    Loop {
        body: Vec<Node>,
        /// Whether the loop's body reads or updates a buffer atomically: it may be waiting
        /// for another work-group ([`polls_buffers`]).
        polls: bool,
        /// As in `For`.
        flags: (u32, u32),
        exits: bool,
    },
    Barrier,
    Group {
        value: Slot,
        op: GroupOp,
        scope: GroupScope,
        arg: Slot,
        source: Option<Slot>,
    },
}

/// One region before compilation.
pub(super) struct RegionPlan {
    pub(super) stmts: Vec<Stmt>,
    /// Expressions evaluated at the end of the region for the next group-level statement.
    pub(super) exports: Vec<(ExprId, Slot)>,
    /// Where only a prefix of the work-items can do anything ([`Guard`]).
    pub(super) guard: Option<Guard>,
}

/// A region that is one `if` whose condition holds only for work-items whose local id (in
/// dimension 0, or the linear id) lies below a bound that every work-item of the group
/// computes alike: the group level passes the bound ([`Guard::limit`]), the region's
/// work-item loop stops there (at the next whole quad in the 4-lane variant, whose other
/// lanes the condition itself leaves out).
#[derive(Clone, Copy, Debug)]
pub(super) struct Guard {
    /// The linear local id rather than the id in dimension 0.
    pub(super) linear: bool,
    /// `lid <= bound` rather than `lid < bound`.
    pub(super) inclusive: bool,
    /// The comparison is of `i32`s (`lid as i32`) rather than of `u32`s.
    pub(super) signed: bool,
    pub(super) bound: Bound,
}

/// Where the group level finds a [`Guard`]'s bound (32 bits).
#[derive(Clone, Copy, Debug)]
pub(super) enum Bound {
    Literal(u32),
    /// The scalar argument at this index.
    Param(usize),
    LocalSize(u8),
    /// A value in the records, the same in every work-item that defined it.
    Slot(Slot),
}

impl Guard {
    /// The work-items in dimension 0 (the linear ids, `linear`) from which on the condition
    /// is false, at most `local[0]`, given the bound's bits.
    pub(super) fn limit(&self, bits: u32, local: [usize; 3]) -> usize {
        if self.linear && local[1] * local[2] != 1 {
            return local[0];
        }
        let end = if self.signed {
            (bits as i32 as i64 + self.inclusive as i64).max(0) as u64
        } else {
            bits as u64 + self.inclusive as u64
        };
        end.min(local[0] as u64) as usize
    }
}

/// The record layout and the cut of the kernel into regions.
pub(super) struct Plan {
    pub(super) regions: Vec<RegionPlan>,
    pub(super) tree: Vec<Node>,
    /// Record slot of every value another region (or the group level) uses.
    pub(super) values: HashMap<ValueId, Slot>,
    /// The counters of group-level `for`s that are the same in every work-item running an
    /// iteration, each with the word before the records that holds it (an offset from the
    /// records; the counter in its first bytes): regions read them there.
    pub(super) shared: HashMap<ValueId, i32>,
    /// Record offset of every private; `None` for private variables kept in registers (a
    /// kernel of one region).
    pub(super) privates: ir::IdVec<ir::PrivateId, Option<u32>>,
    /// Offset of the `returned` flag.
    pub(super) returned: u32,
    /// Offsets of the `broken` and `continued` flags of each group-level loop.
    pub(super) loop_flags: HashMap<LoopId, (u32, u32)>,
    /// Bytes per work-item record (a multiple of 8).
    pub(super) record: usize,
    /// The kernel is one region with nothing at group level.
    pub(super) simple: bool,
    /// Per region: whether a work-item may leave it early (`return`, or `break`/`continue`
    /// of a group-level loop).
    pub(super) exits: Vec<bool>,
    /// The record offsets of the values some region reads from the records (a group-level
    /// `for` need not write its counter's column where none does).
    pub(super) read: HashSet<u32>,
    /// For a kernel with its vector types split ([`super::split`]), the user's local array
    /// and component behind each local array; empty otherwise.
    pub(super) local_parts: Vec<(ir::LocalId, u32)>,
    /// The same for the user's private behind each private (empty otherwise).
    pub(super) private_parts: Vec<ir::PrivateId>,
    /// The buffer parameters a launch may keep per thread ([`super::privatize`]).
    pub(super) private: Vec<super::privatize::Private>,
}

/// Whether `s` is or contains a barrier or collective.
pub(super) fn has_sync(s: &Stmt) -> bool {
    match s {
        Stmt::Barrier(_) | Stmt::Group { .. } => true,
        Stmt::If {
            then, otherwise, ..
        } => then.iter().chain(otherwise).any(has_sync),
        Stmt::For { body, .. } | Stmt::Loop { body, .. } => body.iter().any(has_sync),
        _ => false,
    }
}

/// Whether `block` reads or updates an element of a buffer atomically: the only way a
/// work-group can see another's progress, so a loop around it may be a wait (a look-back
/// polling its predecessor's status word).
pub(super) fn polls_buffers(block: &[Stmt]) -> bool {
    let mut polls = false;
    walk_block(block, &mut |s| {
        polls |= matches!(
            s,
            Stmt::Atomic {
                mem: Mem::Buffer(_),
                ..
            } | Stmt::AtomicLoad {
                mem: Mem::Buffer(_),
                ..
            }
        )
    });
    polls
}

struct Planner<'a> {
    f: &'a Function,
    /// Whether guarded regions are cut off ([`Guard`]): not in a kernel of one region.
    uniform: Option<Uniform<'a>>,
    regions: Vec<RegionPlan>,
    record: usize,
    values: HashMap<ValueId, Slot>,
    shared: HashMap<ValueId, i32>,
    loop_flags: HashMap<LoopId, (u32, u32)>,
}

impl Planner<'_> {
    fn alloc(&mut self, bytes: usize, align: usize) -> u32 {
        self.record = self.record.div_ceil(align) * align;
        let off = self.record as u32;
        self.record += bytes;
        off
    }

    fn slot(&mut self, ty: Type) -> Slot {
        let off = self.alloc(ty.size(), ty.scalar.size());
        Slot { off, ty }
    }

    fn expr_slot(&mut self, e: ExprId) -> (ExprId, Slot) {
        (e, self.slot(self.f.exprs.ty(e)))
    }

    fn value_slot(&mut self, v: ValueId) -> Slot {
        if let Some(s) = self.values.get(&v) {
            return *s;
        }
        let s = self.slot(self.f.values[v].ty);
        self.values.insert(v, s);
        s
    }

    fn flush(
        &mut self,
        nodes: &mut Vec<Node>,
        pending: &mut Vec<Stmt>,
        exports: Vec<(ExprId, Slot)>,
    ) {
        if pending.is_empty() && exports.is_empty() {
            return;
        }
        let guard = match (self.uniform.as_mut(), pending.last()) {
            (Some(u), Some(s)) if exports.is_empty() => u.guard(s),
            _ => None,
        };
        if let Some(guard) = guard {
            let last = pending.pop().expect("a guarded statement");
            if !pending.is_empty() {
                self.regions.push(RegionPlan {
                    stmts: std::mem::take(pending),
                    exports: Vec::new(),
                    guard: None,
                });
                nodes.push(Node::Region(self.regions.len() - 1));
            }
            self.regions.push(RegionPlan {
                stmts: vec![last],
                exports,
                guard: Some(guard),
            });
        } else {
            self.regions.push(RegionPlan {
                stmts: std::mem::take(pending),
                exports,
                guard: None,
            });
        }
        nodes.push(Node::Region(self.regions.len() - 1));
    }

    fn block(&mut self, b: &Block) -> Vec<Node> {
        let mut nodes = Vec::new();
        let mut pending = Vec::new();
        for s in b {
            if !has_sync(s) {
                pending.push(s.clone());
                continue;
            }
            match s {
                Stmt::Barrier(_) => {
                    self.flush(&mut nodes, &mut pending, Vec::new());
                    nodes.push(Node::Barrier);
                }
                Stmt::Group {
                    value,
                    op,
                    scope,
                    arg,
                    source,
                } => {
                    let a = self.expr_slot(*arg);
                    let src = source.map(|e| self.expr_slot(e));
                    let mut ex = vec![a];
                    ex.extend(src);
                    self.flush(&mut nodes, &mut pending, ex);
                    let value = self.value_slot(*value);
                    nodes.push(Node::Group {
                        value,
                        op: *op,
                        scope: *scope,
                        arg: a.1,
                        source: src.map(|s| s.1),
                    });
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let c = self.expr_slot(*cond);
                    self.flush(&mut nodes, &mut pending, vec![c]);
                    let then = self.block(then);
                    let els = self.block(otherwise);
                    nodes.push(Node::If {
                        cond: c.1,
                        then,
                        els,
                        exits: false,
                    });
                }
                Stmt::For {
                    id,
                    var,
                    start,
                    end,
                    step,
                    body,
                } => {
                    let ex = vec![
                        self.expr_slot(*start),
                        self.expr_slot(*end),
                        self.expr_slot(*step),
                    ];
                    let (start, end, step) = (ex[0].1, ex[1].1, ex[2].1);
                    self.flush(&mut nodes, &mut pending, ex);
                    let shared = if self.uniform.as_mut().is_some_and(|u| u.counter(*var)) {
                        let at = shared_at(self.shared.len());
                        self.shared.insert(*var, at);
                        Some(at)
                    } else {
                        None
                    };
                    let var = self.value_slot(*var);
                    let flags = self.loop_flag(*id);
                    let body = self.block(body);
                    nodes.push(Node::For {
                        var,
                        shared,
                        start,
                        end,
                        step,
                        body,
                        flags,
                        exits: false,
                    });
                }
                Stmt::Loop { id, body } => {
                    self.flush(&mut nodes, &mut pending, Vec::new());
                    let flags = self.loop_flag(*id);
                    let polls = polls_buffers(body);
                    let body = self.block(body);
                    nodes.push(Node::Loop {
                        body,
                        polls,
                        flags,
                        exits: false,
                    });
                }
                _ => unreachable!("only the statements above contain synchronization"),
            }
        }
        self.flush(&mut nodes, &mut pending, Vec::new());
        nodes
    }

    fn loop_flag(&mut self, id: LoopId) -> (u32, u32) {
        let b = self.alloc(1, 1);
        let c = self.alloc(1, 1);
        self.loop_flags.insert(id, (b, c));
        (b, c)
    }
}

/// The values a block defines, and the values its expressions read.
pub(super) fn values_of(
    f: &Function,
    stmts: &[Stmt],
    extra: &[ExprId],
) -> (HashSet<ValueId>, HashSet<ValueId>) {
    let mut defs = HashSet::new();
    let mut roots: Vec<ExprId> = extra.to_vec();
    for s in stmts {
        ir::walk_block(std::slice::from_ref(s), &mut |s| {
            roots.extend(ir::stmt_operands(s));
            match s {
                Stmt::Let { value, .. }
                | Stmt::Load { value, .. }
                | Stmt::AtomicLoad { value, .. } => {
                    defs.insert(*value);
                }
                Stmt::Atomic {
                    result: Some(value),
                    ..
                } => {
                    defs.insert(*value);
                }
                Stmt::For { var, .. } => {
                    defs.insert(*var);
                }
                _ => {}
            }
        });
    }
    let mut uses = HashSet::new();
    let mut seen = HashSet::new();
    while let Some(e) = roots.pop() {
        if !seen.insert(e) {
            continue;
        }
        let expr = f.exprs.get(e);
        if let ir::Expr::Value(v) = expr {
            uses.insert(*v);
        }
        roots.extend(ir::expr_operands(expr));
    }
    (defs, uses)
}

impl Plan {
    pub(super) fn new(f: &Function) -> Plan {
        let simple = !f.body.iter().any(has_sync);
        let mut p = Planner {
            f,
            uniform: (!simple).then(|| Uniform::new(f)),
            regions: Vec::new(),
            record: 0,
            values: HashMap::new(),
            shared: HashMap::new(),
            loop_flags: HashMap::new(),
        };
        let returned = p.alloc(1, 1);
        let tree = p.block(&f.body);
        // A value read by a region that does not define it lives in the record.
        let mut spilled = Vec::new();
        let mut read = HashSet::new();
        for r in &p.regions {
            let ex: Vec<ExprId> = r.exports.iter().map(|(e, _)| *e).collect();
            let (defs, uses) = values_of(f, &r.stmts, &ex);
            spilled.extend(uses.difference(&defs).copied());
            // (A shared counter is read from its word, not from the records.)
            read.extend(
                uses.difference(&defs)
                    .filter(|v| !p.shared.contains_key(v))
                    .copied(),
            );
        }
        spilled.sort();
        for v in spilled {
            p.value_slot(v);
        }
        // A guard's bound in the records (its value is defined by an earlier region).
        for r in &mut p.regions {
            if let Some(Guard {
                bound: Bound::Slot(s),
                ..
            }) = &mut r.guard
            {
                let Some(Stmt::If { cond, .. }) = r.stmts.first() else {
                    unreachable!("a guarded region is one `if`")
                };
                let v = guard_value(f, *cond).expect("a guard's bound is a value");
                *s = p.values[&v];
                // The group level reads a guard's bound from the records.
                read.insert(v);
            }
        }
        let read = read.iter().map(|v| p.values[v].off).collect();
        let privates = f
            .privates
            .iter()
            .map(|d| {
                if simple && d.len.is_none() {
                    None
                } else {
                    let bytes = d.elem.size() * d.count() as usize;
                    Some(p.alloc(bytes, 8))
                }
            })
            .collect();
        let record = p.record.div_ceil(8) * 8;
        let exits: Vec<bool> = p
            .regions
            .iter()
            .map(|r| {
                let mut local = HashSet::new();
                let mut exits = false;
                ir::walk_block(&r.stmts, &mut |s| match s {
                    Stmt::For { id, .. } | Stmt::Loop { id, .. } => {
                        local.insert(*id);
                    }
                    Stmt::Return => exits = true,
                    Stmt::Break(id) | Stmt::Continue(id) if !local.contains(id) => exits = true,
                    _ => {}
                });
                exits
            })
            .collect();
        let mut tree = tree;
        mark_exits(&mut tree, &exits);
        Plan {
            regions: p.regions,
            tree,
            values: p.values,
            shared: p.shared,
            privates,
            returned,
            loop_flags: p.loop_flags,
            record,
            simple,
            exits,
            read,
            local_parts: Vec::new(),
            private_parts: Vec::new(),
            private: super::privatize::candidates(f),
        }
    }

    /// Bytes before the records: the shared counters' words, then the [`HEAD`] word.
    pub(super) fn head(&self) -> usize {
        HEAD + 8 * self.shared.len()
    }

    /// Whether running `node` may remove work-items from the enclosing block's mask (a
    /// region that may return or leave a loop, or a node containing one: resolved once,
    /// [`mark_exits`]).
    pub(super) fn may_exit(&self, node: &Node) -> bool {
        match node {
            Node::Region(i) => self.exits[*i],
            Node::If { exits, .. } | Node::For { exits, .. } | Node::Loop { exits, .. } => *exits,
            Node::Barrier | Node::Group { .. } => false,
        }
    }
}

/// Sets the `exits` of the `if`s and loops of `nodes` (whether a region inside may return or
/// leave a loop, by the regions' `exits`); returns whether any node of `nodes` may.
fn mark_exits(nodes: &mut [Node], regions: &[bool]) -> bool {
    let mut any = false;
    for n in nodes {
        any |= match n {
            Node::Region(i) => regions[*i],
            Node::If {
                then, els, exits, ..
            } => {
                // Both branches marked (no short cut).
                let t = mark_exits(then, regions);
                *exits = mark_exits(els, regions) | t;
                *exits
            }
            Node::For { body, exits, .. } | Node::Loop { body, exits, .. } => {
                *exits = mark_exits(body, regions);
                *exits
            }
            Node::Barrier | Node::Group { .. } => false,
        };
    }
    any
}

/// The bound of a guard condition `lid < bound` (or `bound > lid`, `<=`, `>=`) whose bound is a
/// value.
fn guard_value(f: &Function, cond: ExprId) -> Option<ValueId> {
    let Expr::Binary(op, a, b) = f.exprs.get(cond) else {
        return None;
    };
    let bound = match op {
        BinaryOp::Lt | BinaryOp::Le => *b,
        // The local id is a built-in (or its cast), never a value.
        BinaryOp::Eq if matches!(f.exprs.get(*a), Expr::Value(_)) => *a,
        BinaryOp::Eq => *b,
        _ => *a,
    };
    match f.exprs.get(bound) {
        Expr::Value(v) => Some(*v),
        _ => None,
    }
}

/// How a value is defined, for [`Uniform`].
#[derive(Clone, Copy)]
enum Def {
    Expr(ExprId),
    Private(PrivateId),
    /// A `for` counter: its start and step.
    Counter(ExprId, ExprId),
    /// Loaded from shared memory, an atomic's result, a collective's.
    Other,
}

/// Which values are the same in every work-item of a group that computes them (at the same
/// point of its run): literals, arguments, sizes and group ids and what is computed from them
/// alone, `for` counters with such a start and step, and the scalar private variables that
/// every store sets to such a value outside any condition or loop that work-items may take
/// differently (none at all where a work-item may leave a loop or return on its own: from
/// there on their paths differ). A greatest fixed point: every scalar private starts as
/// uniform (all are zero at first), those stored otherwise are removed until nothing changes.
pub(super) struct Uniform<'a> {
    f: &'a Function,
    defs: HashMap<ValueId, Def>,
    privs: Vec<bool>,
    memo: HashMap<ExprId, bool>,
}

impl<'a> Uniform<'a> {
    pub(super) fn new(f: &'a Function) -> Uniform<'a> {
        let mut defs = HashMap::new();
        ir::walk_block(&f.body, &mut |s| match s {
            Stmt::Let { value, expr } => {
                defs.insert(*value, Def::Expr(*expr));
            }
            Stmt::Load {
                value,
                mem: Mem::Private(p),
                ..
            } if f.privates[*p].len.is_none() => {
                defs.insert(*value, Def::Private(*p));
            }
            Stmt::For {
                var, start, step, ..
            } => {
                defs.insert(*var, Def::Counter(*start, *step));
            }
            Stmt::Load { value, .. }
            | Stmt::AtomicLoad { value, .. }
            | Stmt::Group { value, .. }
            | Stmt::Atomic {
                result: Some(value),
                ..
            } => {
                defs.insert(*value, Def::Other);
            }
            _ => {}
        });
        let privs = f.privates.iter().map(|d| d.len.is_none()).collect();
        let mut u = Uniform {
            f,
            defs,
            privs,
            memo: HashMap::new(),
        };
        loop {
            let before = u.privs.clone();
            u.memo.clear();
            if u.walk(&f.body, false) {
                u.privs.iter_mut().for_each(|p| *p = false);
            }
            if u.privs == before {
                break;
            }
        }
        u.memo.clear();
        u
    }

    /// Removes the privates stored non-uniformly in `block`; true where a work-item may leave
    /// a loop or return on its own.
    fn walk(&mut self, block: &[Stmt], div: bool) -> bool {
        for s in block {
            let split = match s {
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let d = div || !self.expr(*cond);
                    self.walk(then, d) || self.walk(otherwise, d)
                }
                Stmt::For {
                    start,
                    end,
                    step,
                    body,
                    ..
                } => {
                    let d = div || !(self.expr(*start) && self.expr(*end) && self.expr(*step));
                    self.walk(body, d)
                }
                Stmt::Loop { body, .. } => self.walk(body, div),
                Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return => div,
                Stmt::Store {
                    mem: Mem::Private(p),
                    value,
                    ..
                } => {
                    if div || !self.expr(*value) {
                        self.privs[p.index()] = false;
                    }
                    false
                }
                Stmt::Atomic {
                    mem: Mem::Private(p),
                    ..
                } => {
                    self.privs[p.index()] = false;
                    false
                }
                _ => false,
            };
            if split {
                return true;
            }
        }
        false
    }

    /// Whether `v` is a `for` counter with a start and step the same in every work-item of
    /// the group: then it is the same in every work-item that runs an iteration (they step
    /// together; one that left the loop runs no more of it).
    fn counter(&mut self, v: ValueId) -> bool {
        match self.defs.get(&v).copied() {
            Some(Def::Counter(s, st)) => self.expr(s) && self.expr(st),
            _ => false,
        }
    }

    /// Whether `e` is the same in every work-item of the group that computes it.
    pub(super) fn expr(&mut self, e: ExprId) -> bool {
        if let Some(&u) = self.memo.get(&e) {
            return u;
        }
        let u = match self.f.exprs.get(e) {
            Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) => true,
            Expr::Builtin(b) => b.same_in_group(),
            Expr::Value(v) => match self.defs.get(v).copied() {
                Some(Def::Expr(x)) => self.expr(x),
                Some(Def::Private(p)) => self.privs[p.index()],
                Some(Def::Counter(s, st)) => self.expr(s) && self.expr(st),
                Some(Def::Other) | None => false,
            },
            Expr::Stub(..) => false,
            x => ir::expr_operands(x).into_iter().all(|o| self.expr(o)),
        };
        self.memo.insert(e, u);
        u
    }

    /// The [`Guard`] of `s`: an `if` without `else` whose condition compares the local id in
    /// dimension 0 (or the linear one, perhaps as `i32`) with a uniform bound the group level
    /// can read (a literal, an argument, `local_size(d)`, or a value in the records, whose
    /// slot [`Plan::new`] fills in).
    fn guard(&mut self, s: &Stmt) -> Option<Guard> {
        let Stmt::If {
            cond,
            then,
            otherwise,
        } = s
        else {
            return None;
        };
        if !otherwise.is_empty() || then.is_empty() {
            return None;
        }
        let Expr::Binary(op, a, b) = self.f.exprs.get(*cond) else {
            return None;
        };
        let f = self.f;
        let id = |e: ExprId| match f.exprs.get(e) {
            Expr::Builtin(Builtin::LocalId(0)) => Some(false),
            Expr::Builtin(Builtin::LocalLinearId) => Some(true),
            _ => None,
        };
        // The local id `e` is (`(linear, signed)`): dimension 0's or the linear one, as a `u32`
        // or cast to `i32`.
        let lid_of = |e: ExprId| match f.exprs.get(e) {
            Expr::Cast(x, Scalar::I32) => Some((id(*x)?, true)),
            _ if f.exprs.ty(e) == Type::U32 => Some((id(e)?, false)),
            _ => None,
        };
        let (inclusive, lid, bound) = match op {
            BinaryOp::Lt => (false, *a, *b),
            BinaryOp::Le => (true, *a, *b),
            BinaryOp::Gt => (false, *b, *a),
            BinaryOp::Ge => (true, *b, *a),
            // `lid == bound` holds for no work-item past `bound` (`lid <= bound`): the loop
            // stops after it, the condition itself leaves out those before (work-item 0's
            // work, `lid == 0`, visits one work-item, not the whole group).
            BinaryOp::Eq if lid_of(*a).is_some() => (true, *a, *b),
            BinaryOp::Eq => (true, *b, *a),
            _ => return None,
        };
        let (linear, signed) = lid_of(lid)?;
        let bound = match self.f.exprs.get(bound) {
            Expr::Literal(l) => Bound::Literal(l.bits as u32),
            Expr::Param(p) if matches!(self.f.params[*p].kind, ir::ParamKind::Scalar(_)) => {
                Bound::Param(p.index())
            }
            Expr::Builtin(Builtin::LocalSize(d)) => Bound::LocalSize(*d),
            Expr::Value(_) if self.expr(bound) => Bound::Slot(Slot {
                off: 0,
                ty: self.f.exprs.ty(bound),
            }),
            _ => return None,
        };
        Some(Guard {
            linear,
            inclusive,
            signed,
            bound,
        })
    }
}
