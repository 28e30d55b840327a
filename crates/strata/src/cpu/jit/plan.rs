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

use crate::ir::{self, Block, ExprId, Function, GroupOp, GroupScope, LoopId, Stmt, Type, ValueId};
use std::collections::{HashMap, HashSet};

/// Work-items per block of records (the vector variant's lanes).
pub(super) const QUAD: usize = 4;

/// Where a value lives in a work-item's record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) off: u32,
    pub(super) ty: Type,
}

/// The group-level program: what runs between regions.
#[derive(Debug)]
pub(super) enum Node {
    Region(usize),
    If {
        cond: Slot,
        then: Vec<Node>,
        els: Vec<Node>,
    },
    For {
        id: LoopId,
        var: Slot,
        start: Slot,
        end: Slot,
        step: Slot,
        body: Vec<Node>,
    },
    Loop {
        id: LoopId,
        body: Vec<Node>,
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
}

/// The record layout and the cut of the kernel into regions.
pub(super) struct Plan {
    pub(super) regions: Vec<RegionPlan>,
    pub(super) tree: Vec<Node>,
    /// Record slot of every value another region (or the group level) uses.
    pub(super) values: HashMap<ValueId, Slot>,
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

struct Planner<'a> {
    f: &'a Function,
    regions: Vec<RegionPlan>,
    record: usize,
    values: HashMap<ValueId, Slot>,
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
        self.regions.push(RegionPlan {
            stmts: std::mem::take(pending),
            exports,
        });
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
                    let var = self.value_slot(*var);
                    self.loop_flag(*id);
                    let body = self.block(body);
                    nodes.push(Node::For {
                        id: *id,
                        var,
                        start,
                        end,
                        step,
                        body,
                    });
                }
                Stmt::Loop { id, body } => {
                    self.flush(&mut nodes, &mut pending, Vec::new());
                    self.loop_flag(*id);
                    let body = self.block(body);
                    nodes.push(Node::Loop { id: *id, body });
                }
                _ => unreachable!("only the statements above contain synchronization"),
            }
        }
        self.flush(&mut nodes, &mut pending, Vec::new());
        nodes
    }

    fn loop_flag(&mut self, id: LoopId) {
        let b = self.alloc(1, 1);
        let c = self.alloc(1, 1);
        self.loop_flags.insert(id, (b, c));
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
        let mut p = Planner {
            f,
            regions: Vec::new(),
            record: 0,
            values: HashMap::new(),
            loop_flags: HashMap::new(),
        };
        let simple = !f.body.iter().any(has_sync);
        let returned = p.alloc(1, 1);
        let tree = p.block(&f.body);
        // A value read by a region that does not define it lives in the record.
        let mut spilled = Vec::new();
        for r in &p.regions {
            let ex: Vec<ExprId> = r.exports.iter().map(|(e, _)| *e).collect();
            let (defs, uses) = values_of(f, &r.stmts, &ex);
            spilled.extend(uses.difference(&defs).copied());
        }
        spilled.sort();
        for v in spilled {
            p.value_slot(v);
        }
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
        let exits = p
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
        Plan {
            regions: p.regions,
            tree,
            values: p.values,
            privates,
            returned,
            loop_flags: p.loop_flags,
            record,
            simple,
            exits,
        }
    }

    /// Whether running `node` may remove work-items from the enclosing block's mask.
    pub(super) fn may_exit(&self, node: &Node) -> bool {
        match node {
            Node::Region(i) => self.exits[*i],
            Node::If { then, els, .. } => then.iter().chain(els).any(|n| self.may_exit(n)),
            Node::For { body, .. } | Node::Loop { body, .. } => {
                body.iter().any(|n| self.may_exit(n))
            }
            Node::Barrier | Node::Group { .. } => false,
        }
    }
}
