//! The compiled CPU backend: kernels as native code through Cranelift.
//!
//! **Shape.** A kernel is cut at its barriers and collectives into barrier-free *regions*
//! ([`plan`]). Each region becomes one native function that runs the region's statements for
//! every work-item of a work-group in turn (a loop over the local ids, the region's code in its
//! body, with real branches and loops inside one work-item), so a kernel without barriers is
//! one function and one call per work-group. What sits between regions, the barriers, the
//! collectives and the `if`s and loops that contain them, is run by [`Worker`] once per
//! work-group with the same execution masks as the interpreter ([`super::exec`]): a barrier
//! reached by part of the group is the same error, a collective folds in local-id order with
//! the interpreter's code ([`super::semantics::collective`]), so results agree bit for bit.
//!
//! **State between regions.** Each work-item has a *record*: the values a region defines and
//! another uses, its private variables and arrays, the operands of the next group-level
//! statement (a condition, loop bounds, a collective's operand) and its exit flags (returned;
//! left or continued a group-level loop). Inside a region, values live in registers.
//!
//! **Semantics.** The IR's rules as the evaluator implements them: wrapping integer
//! arithmetic, masked shift amounts, division by zero an error (`MIN / -1` wraps), saturating
//! float-to-integer casts, and every transcendental built-in through the same Rust function
//! the evaluator calls (`ir::eval::Float`), so the compiled backend and the interpreter give
//! the same bits. Every access is bounds-checked with the interpreter's error; a `loop` polls
//! the launch's cancel flag.

#![allow(clippy::needless_range_loop)] // lane loops index several per-work-item arrays

mod lower;
mod simd;

use super::cpu_mem;
use super::semantics::collective;
use crate::error::{Error, Result, WorkItem};
use crate::ir::eval::{with_int, Column, Num};
use crate::ir::{
    self, ExprId, Function, GroupOp, GroupScope, LoopId, Mem, Scalar, Stmt, Type, ValueId,
};
use crate::ir::{Block, ValidFunction};
use crate::runtime::{ArgValue, NdRange};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// A compiled region: runs its statements for every work-item `l` of the group with
/// `mask[l] != 0`; returns 0, or a nonzero status with the fault written to `env.fault`.
type RegionFn = unsafe extern "C" fn(env: *const Env, mask: *const u8) -> u32;

/// A buffer or local array as compiled code sees it.
#[repr(C)]
#[derive(Clone, Copy)]
struct MemArg {
    base: *mut u8,
    len: u64,
}

/// The first fault of a region call.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Fault {
    /// Index into [`JitProgram::sites`].
    site: u32,
    /// Local linear id of the work-item.
    lane: u32,
    /// The index used (out-of-bounds faults).
    index: i64,
    /// The memory's length (out-of-bounds faults).
    len: u64,
}

/// What compiled code reads of a launch, and where it reports.
#[repr(C)]
struct Env {
    bufs: *const MemArg,
    scalars: *const u64,
    locals: *const MemArg,
    records: *mut u8,
    local: [u32; 3],
    group: [u32; 3],
    groups: [u32; 3],
    _pad: u32,
    fault: *mut Fault,
    stop: *const AtomicBool,
    cancel: *const AtomicBool,
    program: *const JitProgram,
    /// A panic of a stub's body, kept until the launch reports it.
    panic: *mut Option<String>,
}

/// What a fault site in compiled code is.
#[derive(Clone, Debug)]
enum Site {
    /// An access out of bounds; `scalar` is the index's type.
    OutOfBounds {
        mem: Mem,
        scalar: Scalar,
        at: crate::ir::SourceLoc,
    },
    /// Integer division (`true`) or remainder by zero.
    DivByZero(bool),
    /// A `for` loop with step 0.
    ZeroStep,
    /// The launch was cancelled or another work-group failed.
    Stopped,
    /// A stub's CPU body panicked.
    StubPanic(String),
}

/// Where a value lives in a work-item's record.
#[derive(Clone, Copy, Debug)]
struct Slot {
    off: u32,
    ty: Type,
}

/// The group-level program: what runs between regions.
#[derive(Debug)]
enum Node {
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
struct RegionPlan {
    stmts: Vec<Stmt>,
    /// Expressions evaluated at the end of the region for the next group-level statement.
    exports: Vec<(ExprId, Slot)>,
}

/// The record layout and the cut of the kernel into regions.
pub(super) struct Plan {
    regions: Vec<RegionPlan>,
    tree: Vec<Node>,
    /// Record slot of every value another region (or the group level) uses.
    values: HashMap<ValueId, Slot>,
    /// Record offset of every private; `None` for private variables kept in registers (a
    /// kernel of one region).
    privates: Vec<Option<u32>>,
    /// Offset of the `returned` flag.
    returned: u32,
    /// Offsets of the `broken` and `continued` flags of each group-level loop.
    loop_flags: HashMap<LoopId, (u32, u32)>,
    /// Bytes per work-item record (a multiple of 8).
    record: usize,
    /// The kernel is one region with nothing at group level.
    simple: bool,
    /// Per region: whether a work-item may leave it early (`return`, or `break`/`continue`
    /// of a group-level loop).
    exits: Vec<bool>,
}

fn has_sync(s: &Stmt) -> bool {
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
        let s = self.slot(self.f.values[v.0 as usize].ty);
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
fn values_of(
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
    fn new(f: &Function) -> Plan {
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
    fn may_exit(&self, node: &Node) -> bool {
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

/// Keeps the JIT module's code alive as long as the program.
struct Code(Option<cranelift_jit::JITModule>);

// SAFETY: after `finalize_definitions` the module is only kept to own the executable memory,
// which is never written again; nothing else of it is used from other threads.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            // SAFETY: the program owning this code is being dropped, so no launch runs it.
            unsafe { m.free_memory() };
        }
    }
}

/// A kernel compiled to native code.
pub(crate) struct JitProgram {
    decls: super::Decls,
    plan: Plan,
    regions: Vec<RegionFn>,
    /// The vector variant of a one-region kernel ([`simd`]), when it has one.
    vector: Option<RegionFn>,
    sites: Vec<Site>,
    stubs: Vec<ir::StubDecl>,
    _code: Code,
}

/// The host's instruction set, detected once.
fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa> {
    static ISA: OnceLock<std::result::Result<cranelift_codegen::isa::OwnedTargetIsa, String>> =
        OnceLock::new();
    ISA.get_or_init(|| {
        use cranelift_codegen::settings::{self, Configurable};
        let mut flags = settings::builder();
        let set = |flags: &mut settings::Builder, k: &str, v: &str| {
            flags
                .set(k, v)
                .map_err(|e| format!("cranelift setting {k}: {e}"))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(
            &mut flags,
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )?;
        let isa =
            cranelift_native::builder().map_err(|e| format!("no native code generator: {e}"))?;
        isa.finish(settings::Flags::new(flags))
            .map_err(|e| format!("cranelift: {e}"))
    })
    .clone()
    .map_err(|message| Error::Backend {
        backend: "cpu",
        message,
    })
}

impl JitProgram {
    /// Compiles a validated function.
    pub(crate) fn compile(vf: &ValidFunction) -> Result<JitProgram> {
        let f = vf.function();
        let decls = super::Decls::new(f)?;
        let plan = Plan::new(f);
        let mut sites = vec![Site::Stopped];
        let (code, mut regions) =
            lower::compile(f, &plan, isa()?, &mut sites).map_err(|message| Error::Backend {
                backend: "cpu",
                message: format!("compiling kernel `{}`: {message}", f.name),
            })?;
        let vector = (regions.len() > plan.regions.len()).then(|| regions.pop().expect("compiled"));
        Ok(JitProgram {
            decls,
            plan,
            regions,
            vector,
            sites,
            stubs: f.stubs.clone(),
            _code: Code(Some(code)),
        })
    }

    /// Runs the program over `range` with resolved arguments; stops between work-groups (and
    /// in every `loop` iteration) with [`Error::Cancelled`] once `cancel` is set.
    pub(crate) fn launch(
        &self,
        range: NdRange,
        args: &[ArgValue],
        cancel: &AtomicBool,
    ) -> Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        let local = range.local_size().expect("resolved range");
        let groups = range.groups();
        let total = range.group_count();
        let bufs: Vec<MemArg> = args
            .iter()
            .map(|a| match a {
                ArgValue::Buffer { mem, len, .. } => MemArg {
                    base: cpu_mem(mem).base() as *mut u8,
                    len: *len,
                },
                _ => MemArg {
                    base: std::ptr::null_mut(),
                    len: 0,
                },
            })
            .collect();
        let scalars: Vec<u64> = args
            .iter()
            .map(|a| match a {
                ArgValue::Scalar(l) => l.bits,
                ArgValue::LocalLen(n) => *n as u64,
                ArgValue::Buffer { .. } => 0,
            })
            .collect();
        let stop = AtomicBool::new(false);
        let shared = Shared {
            bufs: bufs.as_ptr(),
            scalars: &scalars,
            args,
            local,
            groups,
            stop: &stop,
            cancel,
        };
        super::run_groups(
            total,
            &self.decls.name,
            cancel,
            &stop,
            || Ok(Worker::new(self, &shared)),
            |w, g| w.run_group(g),
        )
    }

    fn cancelled(&self) -> Error {
        Error::Cancelled {
            kernel: self.decls.name.clone(),
        }
    }
}

/// What every worker of a launch reads.
struct Shared<'a> {
    bufs: *const MemArg,
    scalars: &'a [u64],
    args: &'a [ArgValue],
    local: [usize; 3],
    groups: [usize; 3],
    stop: &'a AtomicBool,
    cancel: &'a AtomicBool,
}

// SAFETY: the buffer pointers point into `CpuMem`s kept alive by the launch command for the
// whole launch; compiled code accesses them with plain word loads and stores, as the
// interpreter's relaxed atomics do on x86-64 and AArch64.
unsafe impl Sync for Shared<'_> {}

/// Group-level loop state: which work-items left the loop or ended the iteration.
struct Frame {
    /// Record offsets of the loop's `broken` and `continued` flags.
    flags: (u32, u32),
}

/// One thread's state: the records, local memory and masks of the work-group it runs.
struct Worker<'a> {
    p: &'a JitProgram,
    s: &'a Shared<'a>,
    lanes: usize,
    records: Vec<u64>,
    locals: Vec<Vec<u64>>,
    _local_args: Vec<MemArg>,
    fault: Box<Fault>,
    panic: Box<Option<String>>,
    env: Box<Env>,
    frames: Vec<Frame>,
    masks: Vec<Vec<u8>>,
    all: Vec<u8>,
}

impl<'a> Worker<'a> {
    fn new(p: &'a JitProgram, s: &'a Shared<'a>) -> Worker<'a> {
        let lanes: usize = s.local.iter().product();
        let mut locals = Vec::new();
        let mut local_args = Vec::new();
        for (i, (elem, _, _)) in p.decls.locals.iter().enumerate() {
            let n = p.decls.local_len(i, s.args);
            let mut v = vec![0u64; (n as usize * elem.size()).div_ceil(8).max(1)];
            local_args.push(MemArg {
                base: v.as_mut_ptr() as *mut u8,
                len: n,
            });
            locals.push(v);
        }
        let mut records = vec![0u64; (lanes * p.plan.record).div_ceil(8).max(1)];
        let mut fault = Box::new(Fault::default());
        let mut panic = Box::new(None);
        let env = Box::new(Env {
            bufs: s.bufs,
            scalars: s.scalars.as_ptr(),
            locals: local_args.as_ptr(),
            records: records.as_mut_ptr() as *mut u8,
            local: s.local.map(|x| x as u32),
            group: [0; 3],
            groups: s.groups.map(|x| x as u32),
            _pad: 0,
            fault: &mut *fault,
            stop: s.stop,
            cancel: s.cancel,
            program: p,
            panic: &mut *panic,
        });
        Worker {
            p,
            s,
            lanes,
            records,
            locals,
            _local_args: local_args,
            fault,
            panic,
            env,
            frames: Vec::new(),
            masks: Vec::new(),
            all: vec![1; lanes],
        }
    }

    fn item(&self, l: usize) -> WorkItem {
        super::work_item(l, self.s.local, self.env.group)
    }

    fn fault(&self, l: usize, message: impl Into<String>) -> Error {
        Error::KernelFault {
            kernel: self.p.decls.name.clone(),
            message: message.into(),
            item: self.item(l),
        }
    }

    /// The error a region reported.
    fn region_error(&mut self) -> Error {
        let f = *self.fault;
        let l = f.lane as usize;
        match &self.p.sites[f.site as usize] {
            Site::OutOfBounds { mem, scalar, at } => {
                let index = if *scalar == Scalar::U64 && f.index < 0 {
                    i64::MAX
                } else {
                    f.index
                };
                Error::OutOfBounds {
                    kernel: self.p.decls.name.clone(),
                    memory: self.p.decls.mem_what(*mem),
                    index,
                    len: f.len,
                    item: self.item(l),
                    at: *at,
                }
            }
            Site::DivByZero(div) => self.fault(
                l,
                format!(
                    "integer {} by zero",
                    if *div { "division" } else { "remainder" }
                ),
            ),
            Site::ZeroStep => self.fault(l, "for loop step is 0; the loop would never end"),
            Site::StubPanic(name) => {
                // The interpreter lets the panic reach the queue, which reports it as
                // `Panicked`; the same error here, with the work-item.
                let why = self.panic.take().unwrap_or_default();
                Error::Panicked {
                    backend: "cpu",
                    message: format!(
                        "{why} (in the CPU body of stub function `{name}`, kernel `{}`, {})",
                        self.p.decls.name,
                        self.item(l)
                    ),
                }
            }
            Site::Stopped => self.p.cancelled(),
        }
    }

    fn call(&mut self, region: usize, mask: &[u8]) -> Result<()> {
        self.call_fn(self.p.regions[region], mask)
    }

    fn call_fn(&mut self, f: RegionFn, mask: &[u8]) -> Result<()> {
        // SAFETY: the region was compiled for this program; `env` points at this worker's
        // records, local memory and the launch's buffers, all sized for this launch.
        let status = unsafe { f(&*self.env, mask.as_ptr()) };
        if status == 0 {
            Ok(())
        } else {
            Err(self.region_error())
        }
    }

    fn run_group(&mut self, g: usize) -> Result<()> {
        let [gx, gy, _] = self.s.groups;
        self.env.group = [
            (g % gx) as u32,
            ((g / gx) % gy) as u32,
            (g / (gx * gy)) as u32,
        ];
        self.records.fill(0);
        for l in &mut self.locals {
            l.fill(0);
        }
        let all = std::mem::take(&mut self.all);
        let r = if self.p.plan.simple {
            match self.p.vector {
                Some(v) if self.s.local[0].is_multiple_of(simd::LANES as usize) => {
                    self.call_fn(v, &all)
                }
                _ => self.call(0, &all),
            }
        } else {
            let tree = &self.p.plan.tree;
            self.exec_block(tree, &all)
        };
        self.all = all;
        r
    }

    fn rec(&self, l: usize, off: u32) -> *const u8 {
        // SAFETY (of callers' reads): `l < lanes` and `off` lies inside the record.
        unsafe { (self.records.as_ptr() as *const u8).add(l * self.p.plan.record + off as usize) }
    }

    fn rec_mut(&mut self, l: usize, off: u32) -> *mut u8 {
        let r = self.p.plan.record;
        unsafe { (self.records.as_mut_ptr() as *mut u8).add(l * r + off as usize) }
    }

    fn flag(&self, l: usize, off: u32) -> bool {
        // SAFETY: a flag byte of lane `l`'s record.
        unsafe { *self.rec(l, off) != 0 }
    }

    fn take_mask(&mut self) -> Vec<u8> {
        self.masks.pop().unwrap_or_else(|| vec![0; self.lanes])
    }

    /// Clears in `mask` the work-items that returned, or left (or ended the iteration of) an
    /// enclosing group-level loop.
    fn keep_alive(&self, mask: &mut [u8]) {
        let plan = &self.p.plan;
        for (l, m) in mask.iter_mut().enumerate() {
            if *m == 0 {
                continue;
            }
            let mut gone = self.flag(l, plan.returned);
            for f in &self.frames {
                let (b, c) = f.flags;
                gone |= self.flag(l, b) | self.flag(l, c);
            }
            if gone {
                *m = 0;
            }
        }
    }

    fn exec_block(&mut self, nodes: &'a [Node], entry: &[u8]) -> Result<()> {
        let mut mask = self.take_mask();
        mask.copy_from_slice(entry);
        let mut r = Ok(());
        for n in nodes {
            if !mask.iter().any(|&m| m != 0) {
                break;
            }
            r = self.exec(n, &mask);
            if r.is_err() {
                break;
            }
            if self.p.plan.may_exit(n) {
                self.keep_alive(&mut mask);
            }
        }
        self.masks.push(mask);
        r
    }

    fn check_uniform(&self, mask: &[u8], what: &str) -> Result<()> {
        let reached = mask.iter().filter(|&&m| m != 0).count();
        if reached != self.lanes {
            return Err(Error::BarrierDivergence {
                kernel: self.p.decls.name.clone(),
                what: what.into(),
                reached,
                size: self.lanes,
                group: self.env.group,
            });
        }
        Ok(())
    }

    /// The column (component-major, as the interpreter keeps it) of a record slot.
    fn column(&self, s: Slot) -> Column {
        let n = self.lanes;
        let size = s.ty.scalar.size();
        let mut c = Column::zeroed(n * s.ty.size());
        let out = c.bytes_mut();
        for l in 0..n {
            for k in 0..s.ty.width as usize {
                // SAFETY: component `k` of the slot in lane `l`'s record.
                let src =
                    unsafe { std::slice::from_raw_parts(self.rec(l, s.off).add(k * size), size) };
                let to = (k * n + l) * size;
                out[to..to + size].copy_from_slice(src);
            }
        }
        c
    }

    fn set_column(&mut self, s: Slot, c: &Column, mask: &[u8]) {
        let n = self.lanes;
        let size = s.ty.scalar.size();
        for l in (0..n).filter(|&l| mask[l] != 0) {
            for k in 0..s.ty.width as usize {
                let from = (k * n + l) * size;
                let dst = self.rec_mut(l, s.off);
                // SAFETY: component `k` of the slot in lane `l`'s record.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        c.bytes()[from..].as_ptr(),
                        dst.add(k * size),
                        size,
                    )
                };
            }
        }
    }

    fn clear_flags(&mut self, id: LoopId, broken: bool) {
        let (b, c) = self.p.plan.loop_flags[&id];
        for l in 0..self.lanes {
            if broken {
                // SAFETY: flag bytes of lane `l`'s record.
                unsafe { *self.rec_mut(l, b) = 0 };
            }
            unsafe { *self.rec_mut(l, c) = 0 };
        }
    }

    fn exec(&mut self, node: &'a Node, mask: &[u8]) -> Result<()> {
        let n = self.lanes;
        match node {
            Node::Region(i) => self.call(*i, mask),
            Node::Barrier => self.check_uniform(mask, "barrier"),
            Node::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => {
                self.check_uniform(mask, op.name(*scope))?;
                let a = self.column(*arg);
                let src = source.map(|s| self.column(s));
                let mut out = Column::default();
                let r = collective(
                    *op,
                    *scope,
                    arg.ty,
                    n,
                    &a,
                    src.as_ref().map(|c| c.slice::<u32>(n)),
                    &mut out,
                );
                if let Err((l, message)) = r {
                    return Err(self.fault(l, message));
                }
                self.set_column(*value, &out, mask);
                Ok(())
            }
            Node::If { cond, then, els } => {
                let (mut yes, mut no) = (self.take_mask(), self.take_mask());
                for l in 0..n {
                    let c = self.flag(l, cond.off);
                    yes[l] = (mask[l] != 0 && c) as u8;
                    no[l] = (mask[l] != 0 && !c) as u8;
                }
                let mut r = Ok(());
                if yes.iter().any(|&m| m != 0) {
                    r = self.exec_block(then, &yes);
                }
                if r.is_ok() && no.iter().any(|&m| m != 0) {
                    r = self.exec_block(els, &no);
                }
                self.masks.push(yes);
                self.masks.push(no);
                r
            }
            Node::Loop { id, body } => {
                self.frames.push(Frame {
                    flags: self.p.plan.loop_flags[id],
                });
                self.clear_flags(*id, true);
                let mut iter = self.take_mask();
                let r = (|| -> Result<()> {
                    loop {
                        iter.copy_from_slice(mask);
                        self.keep_alive(&mut iter);
                        if !iter.iter().any(|&m| m != 0) {
                            return Ok(());
                        }
                        if self.s.stop.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        if self.s.cancel.load(Ordering::Acquire) {
                            return Err(self.p.cancelled());
                        }
                        self.exec_block(body, &iter)?;
                        self.clear_flags(*id, false);
                    }
                })();
                self.masks.push(iter);
                self.frames.pop();
                r
            }
            Node::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let s = var.ty.scalar;
                for l in (0..n).filter(|&l| mask[l] != 0) {
                    let size = s.size();
                    let src = self.rec(l, start.off);
                    let dst = self.rec_mut(l, var.off);
                    // SAFETY: two slots of the same scalar type in lane `l`'s record.
                    unsafe { std::ptr::copy_nonoverlapping(src, dst, size) };
                }
                with_int!(s, T => {
                    for l in (0..n).filter(|&l| mask[l] != 0) {
                        // SAFETY: the step slot holds a `T`.
                        let st: T = unsafe { std::ptr::read_unaligned(self.rec(l, step.off) as *const T) };
                        if st.is_zero() {
                            return Err(self.fault(l, "for loop step is 0; the loop would never end"));
                        }
                    }
                }, _ => unreachable!("validated: integer counter"));
                self.frames.push(Frame {
                    flags: self.p.plan.loop_flags[id],
                });
                self.clear_flags(*id, true);
                let mut iter = self.take_mask();
                let (broken, _) = self.p.plan.loop_flags[id];
                let r = (|| -> Result<()> {
                    loop {
                        iter.copy_from_slice(mask);
                        self.keep_alive(&mut iter);
                        let mut any = false;
                        with_int!(s, T => {
                            for l in 0..n {
                                if iter[l] == 0 {
                                    continue;
                                }
                                // SAFETY: the counter, bound and step slots hold `T`s.
                                let (v, e, st): (T, T, T) = unsafe {
                                    (
                                        std::ptr::read_unaligned(self.rec(l, var.off) as *const T),
                                        std::ptr::read_unaligned(self.rec(l, end.off) as *const T),
                                        std::ptr::read_unaligned(self.rec(l, step.off) as *const T),
                                    )
                                };
                                let go = if st > T::zero() { v < e } else { v > e };
                                if go {
                                    any = true;
                                } else {
                                    iter[l] = 0;
                                    // SAFETY: the flag byte of lane `l`.
                                    unsafe { *self.rec_mut(l, broken) = 1 };
                                }
                            }
                        }, _ => unreachable!());
                        if !any {
                            return Ok(());
                        }
                        self.exec_block(body, &iter)?;
                        self.clear_flags(*id, false);
                        with_int!(s, T => {
                            for l in (0..n).filter(|&l| mask[l] != 0) {
                                let p = self.rec_mut(l, var.off) as *mut T;
                                // SAFETY: the counter and step slots hold `T`s.
                                unsafe {
                                    let st: T = std::ptr::read_unaligned(self.rec(l, step.off) as *const T);
                                    std::ptr::write_unaligned(p, std::ptr::read_unaligned(p).add(st));
                                }
                            }
                        }, _ => unreachable!());
                    }
                })();
                self.masks.push(iter);
                self.frames.pop();
                r
            }
        }
    }
}

// ---- helpers called from compiled code ----

/// `f(x)` for a one-argument `f32` built-in, with the evaluator's implementation.
extern "C" fn math1_f32(f: u32, x: f32) -> f32 {
    <f32 as ir::eval::Float>::math1(ir::MathFn::ALL[f as usize], x)
}
extern "C" fn math2_f32(f: u32, x: f32, y: f32) -> f32 {
    <f32 as ir::eval::Float>::math2(ir::MathFn::ALL[f as usize], x, y)
}
extern "C" fn math3_f32(f: u32, x: f32, y: f32, z: f32) -> f32 {
    <f32 as ir::eval::Float>::math3(ir::MathFn::ALL[f as usize], x, y, z)
}
extern "C" fn math1_f64(f: u32, x: f64) -> f64 {
    <f64 as ir::eval::Float>::math1(ir::MathFn::ALL[f as usize], x)
}
extern "C" fn math2_f64(f: u32, x: f64, y: f64) -> f64 {
    <f64 as ir::eval::Float>::math2(ir::MathFn::ALL[f as usize], x, y)
}
extern "C" fn math3_f64(f: u32, x: f64, y: f64, z: f64) -> f64 {
    <f64 as ir::eval::Float>::math3(ir::MathFn::ALL[f as usize], x, y, z)
}

extern "C" fn math_int_f32(f: u32, x: f32, n: i32) -> f32 {
    <f32 as ir::eval::Float>::math_int(ir::MathFn::ALL[f as usize], x, n)
}
extern "C" fn math_int_f64(f: u32, x: f64, n: i32) -> f64 {
    <f64 as ir::eval::Float>::math_int(ir::MathFn::ALL[f as usize], x, n)
}
extern "C" fn to_int_f32(f: u32, x: f32) -> i32 {
    <f32 as ir::eval::Float>::to_int(ir::MathFn::ALL[f as usize], x)
}
extern "C" fn to_int_f64(f: u32, x: f64) -> i32 {
    <f64 as ir::eval::Float>::to_int(ir::MathFn::ALL[f as usize], x)
}

/// An integer built-in on bits (zero-extended), through the evaluator's folding.
extern "C" fn int_math(f: u32, s: u32, a: u64, b: u64, c: u64) -> u64 {
    let f = ir::MathFn::ALL[f as usize];
    let s = Scalar::ALL[s as usize];
    let args = [a, b, c].map(|x| ir::Literal::from_bits(s, x));
    ir::eval::fold_math(f, &args[..f.arity()]).bits
}

/// A conversion on bits, through the evaluator's folding.
extern "C" fn cast_bits(from: u32, to: u32, bits: u64) -> u64 {
    let from = Scalar::ALL[from as usize];
    let to = Scalar::ALL[to as usize];
    ir::eval::fold_cast(ir::Literal::from_bits(from, bits), to).bits
}

/// An atomic read-modify-write of the element at `ptr` (of scalar `s`); returns the old bits.
///
/// # Safety
/// `ptr` points at a bounds-checked element of a buffer or local array.
unsafe extern "C" fn atomic(ptr: *mut u8, s: u32, op: u32, v: u64, cmp: u64) -> u64 {
    use super::semantics::{apply_atomic, atomic_rmw};
    let s = Scalar::ALL[s as usize];
    let op = ATOMIC_OPS[op as usize];
    crate::ir::eval::with_scalar!(s, T => {
        let v = T::from_lit(ir::Literal::from_bits(s, v));
        let c = T::from_lit(ir::Literal::from_bits(s, cmp));
        let old: T = unsafe { atomic_rmw::<T>(ptr, 0, |x| apply_atomic(op, x, v, Some(c))) };
        old.to_lit().bits
    })
}

const ATOMIC_OPS: [ir::AtomicOp; 9] = [
    ir::AtomicOp::Add,
    ir::AtomicOp::Sub,
    ir::AtomicOp::Min,
    ir::AtomicOp::Max,
    ir::AtomicOp::And,
    ir::AtomicOp::Or,
    ir::AtomicOp::Xor,
    ir::AtomicOp::Exchange,
    ir::AtomicOp::CompareExchange,
];

/// Calls stub `n`'s CPU body on `args` (bits); writes the result's bits to `out`. Returns 0,
/// or 1 when the body panicked (the message is kept in `env.panic`).
///
/// # Safety
/// `env` is the launch's environment; `args` holds one word per parameter of the stub.
unsafe extern "C" fn stub(env: *const Env, n: u32, args: *const u64, out: *mut u64) -> u32 {
    let env = unsafe { &*env };
    let p = unsafe { &*env.program };
    let s = &p.stubs[n as usize];
    let lits: Vec<ir::Literal> = s
        .params
        .iter()
        .enumerate()
        .map(|(i, t)| ir::Literal::from_bits(t.scalar, unsafe { *args.add(i) }))
        .collect();
    let body = s.cpu.as_ref().expect("checked by JitProgram::compile");
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&lits))) {
        Ok(r) => {
            unsafe { *out = r.bits };
            0
        }
        Err(p) => {
            unsafe { *env.panic = Some(crate::error::panic_message(&*p).to_string()) };
            1
        }
    }
}
