//! Cranelift code for the regions of a [`Plan`]: one function per region, a loop over the
//! work-items of the group with the region's statements as its body, one work-item at a time
//! with its values in registers (vectors as one register per component).
//!
//! This file holds the code generator's state ([`Gen`]), a region function's frame (the
//! work-item loop, the fault exit, the record), its scopes (memoized and hoisted expressions)
//! and its statements; [`super::expr`] lowers the expressions, [`super::simd`] the statements
//! and expressions of the four-lane variant.
//!
//! **The work-item loop** is one loop over the group's work-items in local-linear-id order
//! (`x` by the lanes, then the next row, then the next plane; issue 31), not three nested
//! ones: Cranelift's loop-invariant code motion then takes what does not change in the group
//! (a proof's preconditions, the constants they pin) out of the whole loop, where with nested
//! loops it stayed in the row loop, about 100 instructions a row of four work-items in the
//! tiled matmul's regions.
//!
//! **Loops.** Integer divisions whose operands do not change in a loop are computed once
//! before it ([`Gen::hoist_divisions`]), their zero-divisor tests left at the first use, where
//! the unhoisted division would have faulted (in vector code, only where a lane entering the
//! loop has a zero divisor, which is tested once before it); Cranelift's own loop-invariant
//! code motion moves the pure rest. Loads from the tables a region reads (buffer bases and
//! lengths, scalars, ids) are marked read-only and movable, so they leave loops too. A `loop`
//! polls the launch's cancel flag and the flag another work-group's failure sets.
//!
//! **Atomics** ([`Gen::atomic_inline`], issue 31) are Cranelift instructions, no call: on a
//! buffer a sequentially consistent `atomic_rmw` (`lock xadd`, `lock add` where the old
//! value is unused, a `cmpxchg` loop for min and max) or `atomic_cas`, a float add a loop of
//! `fadd` and `atomic_cas` on the bits; on local memory, which only its work-group's thread
//! ever touches, a plain load, operation and store. Float min and max still call
//! [`super::helpers::atomic`] (`Num::min_`'s NaN and signed-zero rules). On a buffer that no
//! work-item reads ([`super::privatize`]: a histogram's bins), both, behind a test of the
//! launch's bit for it ([`Gen::on_kept`]): the plain operation where the launch gave each
//! thread a copy of the buffer.
//!
//! **Bounds.** An access [`crate::ir::ranges`] proves in bounds has no test. A loop (not
//! inside another such one) with accesses proven under preconditions on the launch's
//! arguments ([`Verdict::ProvenIf`]: `local_size(0) <= 8` for `counts[d * 8 +
//! local_id(0)]`) is emitted twice ([`Gen::split_loop`]): the preconditions tested once on
//! entry, then a copy whose accesses have no test and, for the launches that fail them, one
//! that tests every access, with the interpreter's error (the radix sort's count and scatter
//! loops: a digit's counter without a test, issue 31).

use super::expr::from_bits;
use super::plan::{Plan, RegionPlan};
use super::{Env, Fault, MemArg, RegionFn, Site};
use crate::ir::ranges::{Factor, Limit, Precondition, Proof, Term, Verdict};
use crate::ir::{
    BinaryOp, Expr, ExprId, Function, Literal, LoopId, Mem, PrivateId, Scalar, Stmt, Type, ValueId,
};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{self as cl, types, AbiParam, BlockArg, InstBuilder, MemFlags, Value};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};
use std::collections::{HashMap, HashSet};
use std::mem::offset_of;

/// Compiles every region of `plan`, one work-item at a time (`lanes` 1) or as the four- or
/// eight-lane variant ([`super::simd`], `lanes` 4 or 8), into a module of its own; fault
/// sites are appended to `sites`; `dump` prints each region's Cranelift IR and machine code.
pub(super) fn compile(
    f: &Function,
    plan: &Plan,
    isa: OwnedTargetIsa,
    sites: &mut Vec<Site>,
    dump: bool,
    lanes: u32,
) -> Result<(JITModule, Vec<RegionFn>), String> {
    let vector = lanes > 1;
    let builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    let mut module = JITModule::new(builder);
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(types::I32));
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let mut ids = Vec::new();
    let proof = Proof::of(f);
    for i in 0..plan.regions.len() {
        let r = &plan.regions[i];
        let id = module
            .declare_function(
                &format!(
                    "region{i}{}",
                    if vector {
                        format!("_x{lanes}")
                    } else {
                        String::new()
                    }
                ),
                Linkage::Local,
                &sig,
            )
            .map_err(|e| e.to_string())?;
        ctx.func.signature = sig.clone();
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        Gen::emit(b, f, &proof, plan, r, sites, ptr, lanes);
        ctx.set_disasm(dump);
        module
            .define_function(id, &mut ctx)
            .map_err(|e| format!("{e:?}"))?;
        if let Some(code) = ctx
            .compiled_code()
            .and_then(|c| c.vcode.as_ref())
            .filter(|_| dump)
        {
            eprintln!(
                "; kernel `{}`, region {i}{}\n{}\n{code}",
                f.name,
                if vector {
                    format!(" ({lanes} lanes)")
                } else {
                    String::new()
                },
                ctx.func.display()
            );
        }
        module.clear_context(&mut ctx);
        ids.push(id);
    }
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let fns = ids
        .iter()
        .map(|&id| {
            let p = module.get_finalized_function(id);
            // SAFETY: the function was compiled with `RegionFn`'s signature.
            unsafe { std::mem::transmute::<*const u8, RegionFn>(p) }
        })
        .collect();
    Ok((module, fns))
}

/// The Cranelift type of a scalar (`bool` is a byte, 0 or 1; `f16` its bits: kernels reach
/// the backend with their `f16` arithmetic lowered to `f32` by `ir::passes::lower_f16`, so an
/// `f16` is only loaded, stored, selected and converted).
pub(super) fn cl_ty(s: Scalar) -> cl::Type {
    match s {
        Scalar::Bool | Scalar::I8 | Scalar::U8 => types::I8,
        Scalar::I16 | Scalar::U16 | Scalar::F16 => types::I16,
        Scalar::I32 | Scalar::U32 => types::I32,
        Scalar::I64 | Scalar::U64 => types::I64,
        Scalar::F32 => types::F32,
        Scalar::F64 => types::F64,
    }
}

pub(super) fn scalar_index(s: Scalar) -> i64 {
    Scalar::ALL
        .iter()
        .position(|&x| x == s)
        .expect("every scalar") as i64
}

fn atomic_index(op: crate::ir::AtomicOp) -> i64 {
    super::helpers::ATOMIC_OPS
        .iter()
        .position(|&x| x == op)
        .expect("every atomic") as i64
}

pub(super) const MEM: MemFlags = MemFlags::new().with_notrap();

/// Loads of the launch's tables (buffers, scalars, ids), which never change during a call:
/// free to move, so loop-invariant code motion takes them out of the work-item loop.
pub(super) const TABLE: MemFlags = MemFlags::new()
    .with_notrap()
    .with_readonly()
    .with_can_move();

/// What a Cranelift variable holds (one per component): an IR value, or a private variable
/// kept in registers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum VarOf {
    Value(ValueId),
    Private(PrivateId),
    /// Vector mode: lane 0 of a `let` of 32-bit integers, as a scalar ([`super::simd`]'s
    /// `lane0_expr`).
    Lane0(ValueId),
}

pub(super) struct Gen<'a, 'b> {
    pub(super) b: FunctionBuilder<'b>,
    pub(super) f: &'a Function,
    pub(super) plan: &'a Plan,
    pub(super) sites: &'a mut Vec<Site>,
    pub(super) ptr: cl::Type,
    pub(super) env: Value,
    /// The tables of buffer and local arrays and the scalar arguments: what a work-item
    /// reads of them is loaded where it is used, which keeps few values live across the
    /// work-item loop (fewer spills than loading everything up front).
    pub(super) bufs_p: Value,
    pub(super) scal_p: Value,
    pub(super) locs_p: Value,
    pub(super) local: [Value; 3],
    pub(super) stop: Value,
    pub(super) cancel: Value,
    pub(super) lid: [Variable; 3],
    pub(super) lane: Variable,
    /// The work-item's record, per scalar size (1, 2, 4, 8 bytes): the base that a slot of
    /// that size is addressed from ([`Gen::rec_at`]; see [`super::plan`] for the layout).
    pub(super) lrec: [Value; 4],
    /// The group's records (before them the group level's words, `super::plan::LIMIT` and
    /// `super::plan::EXITED`).
    pub(super) records: Value,
    /// Vector mode: the lanes active when the region started.
    pub(super) entry_mask: Option<Value>,
    /// Vector mode: whether the four bytes of [`Gen::entry_mask`] are all 1 (an `i8`), taken
    /// by [`Gen::vector_body`] for its first test for four active lanes.
    pub(super) entry_all: Option<Value>,
    pub(super) vars: HashMap<(VarOf, u8), Variable>,
    pub(super) memo: Vec<HashMap<ExprId, Vec<Value>>>,
    pub(super) loops: Vec<(LoopId, cl::Block, cl::Block)>,
    pub(super) lane_next: cl::Block,
    pub(super) fault: cl::Block,
    pub(super) defined: HashSet<ValueId>,
    /// Vector mode ([`super::simd`]): the active lanes, and per enclosing loop the lanes that
    /// left it and the lanes that ended the iteration.
    pub(super) cur: Option<Variable>,
    /// Vector mode: eight lanes ([`super::simd`]'s eight-lane variant: every 32-bit value two
    /// registers, the mask and a `bool` one `i16x8`), not four.
    pub(super) wide: bool,
    /// The loop iterations left until the next poll of the stop and cancel flags
    /// ([`Gen::poll_stop`]).
    pub(super) polls: Variable,
    /// Vector mode: the private variables whose stores need no mask here (the top level of
    /// the body of a loop that only it reads them in, [`super::simd`]'s `Stmt::Loop`).
    pub(super) loop_private: Vec<PrivateId>,
    /// Eight-lane mode, while an access is lowered: the half (lanes 0–3 or 4–7) it is
    /// lowered for, as four lanes ([`super::simd`]).
    pub(super) half: Option<u8>,
    pub(super) vloops: Vec<(LoopId, Variable, Variable)>,
    /// Vector mode: the enclosing `loop`s whose lanes leave only by their own `break`
    /// ([`super::simd`]'s `Stmt::Loop`): their breaks are not recorded (the mask after the
    /// loop is the one before it).
    pub(super) quiet_breaks: Vec<LoopId>,
    /// Vector mode: the private variables that count the iterations of an enclosing `loop`
    /// ([`super::simd`]'s `trip_counters`), each with that loop and the scalar that is its
    /// value in every lane active there.
    pub(super) trips: HashMap<PrivateId, (LoopId, Variable)>,
    /// Vector mode: whether the active lanes are known to be all four here (then accesses,
    /// private variables and record slots need no mask).
    pub(super) full: bool,
    /// The tests of four active lanes enclosing the code being lowered ([`super::simd`]'s
    /// `vblock_split`); in the scalar code, of a loop's preconditions ([`Gen::split_loop`]).
    pub(super) splits: u32,
    /// Whether the preconditions of the proofs of the accesses being lowered were tested on
    /// entry to this copy of them (then [`Gen::in_bounds`] needs no test; in the scalar
    /// code, a loop's copy, [`Gen::split_loop`]).
    pub(super) pre_ok: bool,
    /// Vector mode: the preconditions the enclosing copy for four lanes tested on entry, each
    /// the strongest of those with its terms and limit ([`super::simd`]'s `vblock_split`).
    /// The other copy tests them in place of its accesses' own (which they imply): the same
    /// values, computed once, rather than one test per access.
    pub(super) pres: Vec<Precondition>,
    /// The stack slot that the vector variant's scheduled runs store each update to, so
    /// that it is computed where it was scheduled ([`super::simd::Gen::anchor`]).
    pub(super) anchor_slot: Option<cl::StackSlot>,
    /// The values stored to [`Gen::anchor_slot`] so far (`simd.rs`' `anchor_values`): where
    /// Cranelift computes them is settled.
    pub(super) anchored: HashSet<Value>,
    /// The work-item a fault names, where it is not `lane` (a lane of a vector).
    pub(super) fault_lane: Option<Value>,
    /// Integer divisions computed before a loop that uses them ([`Gen::hoist_divisions`]):
    /// their values, their zero-divisor tests (with whether each is a division), and the
    /// depth of the scope they belong to.
    pub(super) hoisted: HashMap<ExprId, Hoisted>,
    /// While hoisting: the zero-divisor tests deferred so far, and those of each expression.
    pub(super) nofault: Option<Vec<(Value, bool)>>,
    pub(super) checks_of: HashMap<ExprId, Vec<(Value, bool)>>,
    /// The user's line of the access being lowered, for out-of-bounds faults.
    pub(super) at: crate::ir::SourceLoc,
    /// Which accesses are in bounds ([`crate::ir::ranges`]): those proven get no test.
    pub(super) proof: &'a Proof,
    /// Vector mode: the `for` counters' starts and steps ([`super::simd::counters`]).
    pub(super) counters: super::simd::Counters,
    /// Vector mode, in a copy of a tiled loop's body ([`super::simd`]'s `vfor_tiled`): the
    /// loads that are a column of the tiles read for it, with their lanes.
    pub(super) tiled: HashMap<ValueId, Value>,
    /// Vector mode, in the body of a loop whose stores are rows (`vfor_rows`): the stores
    /// written as tiles after the body, with the lanes of the value each stores once lowered.
    pub(super) deferred: HashMap<(Mem, ExprId), Option<Value>>,
    /// Vector mode, in the copy of a region for blocks where no clamp of its stencil loads
    /// binds ([`super::simd`]'s `vregion_clamps`): the indices of those loads.
    pub(super) free_clamps: Vec<ExprId>,
    /// Scalar code, in the body of a loop that reads more of the launch's tables than
    /// registers hold ([`table_demand`] above [`RELOAD_ABOVE`]): its table loads stay in
    /// the body ([`Gen::table_flags`]). Hoisted, they are live across the loop; regalloc2
    /// spills them and stores them back to their slots every iteration (four stores a key
    /// in the sorts' `Parts` scatter: its loop read four buffers and five arguments), where
    /// loads from the tables cost no store.
    pub(super) reload_tables: bool,
}

/// The [`table_demand`] above which a scalar loop loads the tables in its body: of the
/// general registers Cranelift allocates (14 on x86-64; about 26 on AArch64, `x0`–`x15` and
/// `x19`–`x28`), the loop's counter and end, a private array's record and lane, and the
/// body's temporaries take about five. (Measured on x86-64 only.)
const RELOAD_ABOVE: usize = if cfg!(target_arch = "aarch64") { 21 } else { 9 };

/// How many table entries the statements of `body` read: two for each buffer or local array
/// they access (base and length), one for each scalar argument.
fn table_demand(f: &Function, body: &[Stmt]) -> usize {
    let mut mems: HashSet<Mem> = HashSet::new();
    let mut params: HashSet<crate::ir::ParamId> = HashSet::new();
    crate::ir::walk_block(body, &mut |s| {
        if let Stmt::Load { mem, .. }
        | Stmt::Store { mem, .. }
        | Stmt::Atomic { mem, .. }
        | Stmt::AtomicLoad { mem, .. } = s
        {
            match *mem {
                Mem::Buffer(_) | Mem::Local(_) => {
                    mems.insert(*mem);
                }
                Mem::Field(v) => {
                    mems.insert(Mem::Buffer(f.fields[v].buffer));
                }
                Mem::Private(_) => {}
            }
        }
    });
    crate::ir::walk_exprs(&f.exprs, body, &mut |e| {
        if let Expr::Param(p) = e {
            params.insert(*p);
        }
    });
    2 * mems.len() + params.len()
}

/// Loop iterations between two polls of the stop and cancel flags ([`Gen::poll_stop`]).
pub(super) const POLL_EVERY: u32 = 64;

/// An expression computed ahead of the loop that uses it.
#[derive(Clone)]
pub(super) struct Hoisted {
    vals: Vec<Value>,
    checks: Vec<(Value, bool)>,
    /// Vector mode: whether a test of `checks` holds for a lane active where the division
    /// was hoisted (an `i8`, computed there). Only those lanes can be active in the loop, so
    /// where it is 0 the tests at the uses cannot fault and are skipped (one scalar branch).
    any: Option<Value>,
    depth: usize,
}

impl<'a, 'b> Gen<'a, 'b> {
    #[allow(clippy::too_many_arguments)]
    fn emit(
        mut b: FunctionBuilder<'b>,
        f: &'a Function,
        proof: &'a Proof,
        plan: &'a Plan,
        r: &'a RegionPlan,
        sites: &'a mut Vec<Site>,
        ptr: cl::Type,
        lanes: u32,
    ) {
        let vector = lanes > 1;
        let wide = lanes == 8;
        debug_assert!(
            !wide || plan.simple,
            "eight lanes in one-region kernels only"
        );
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let env = b.block_params(entry)[0];
        let mask = b.block_params(entry)[1];
        let ro = MEM.with_readonly();
        let ld =
            |b: &mut FunctionBuilder, ty, base, off: usize| b.ins().load(ty, ro, base, off as i32);
        let bufs_p = ld(&mut b, ptr, env, offset_of!(Env, bufs));
        let scal_p = ld(&mut b, ptr, env, offset_of!(Env, scalars));
        let locs_p = ld(&mut b, ptr, env, offset_of!(Env, locals));
        let records = ld(&mut b, ptr, env, offset_of!(Env, records));
        let stop = ld(&mut b, ptr, env, offset_of!(Env, stop));
        let cancel = ld(&mut b, ptr, env, offset_of!(Env, cancel));
        let local = [0, 1, 2].map(|d| ld(&mut b, types::I32, env, offset_of!(Env, local) + 4 * d));
        // A guarded region stops where its condition stops holding (`super::plan::Guard`).
        let xn = if r.guard.is_some() {
            b.ins().load(types::I32, ro, records, super::plan::LIMIT)
        } else {
            local[0]
        };

        // The fault exit: records the site, work-item, index and length; returns 1.
        let fault = b.create_block();
        b.set_cold_block(fault);
        let lane = b.declare_var(types::I32);
        let lid = [0, 1, 2].map(|_| b.declare_var(types::I32));
        // The first loop iteration polls the flags.
        let polls = b.declare_var(types::I32);
        let one = b.ins().iconst(types::I32, 1);
        b.def_var(polls, one);
        let (site_v, lane_v, idx_v, len_v) = (
            b.append_block_param(fault, types::I32),
            b.append_block_param(fault, types::I32),
            b.append_block_param(fault, types::I64),
            b.append_block_param(fault, types::I64),
        );
        let lane_next = b.create_block();
        let done = b.create_block();
        let (xh, xb, body, yn, zn) = (
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
        );
        // The work-items of the group in local-linear-id order, as one loop (not a loop over
        // `z`, `y` and `x` nested): what does not change in the group leaves it whole, where
        // Cranelift's loop-invariant code motion left the nested loops' invariants (a proof's
        // preconditions, the constants they pinned) in the row loop, paid once per row of
        // four work-items in a 16 x 16 group (issue 31). `x` steps by the lanes; past the
        // row's end it goes back to 0 and `y` to the next row (`z` to the next plane), and
        // the row's first linear id steps by `local_size(0)` either way.
        let row = b.declare_var(types::I32);
        let zero = b.ins().iconst(types::I32, 0);
        for v in [lid[0], lid[1], lid[2], row] {
            b.def_var(v, zero);
        }
        b.ins().jump(xh, &[]);
        b.switch_to_block(xh);
        let x = b.use_var(lid[0]);
        let go = b.ins().icmp(IntCC::UnsignedLessThan, x, xn);
        loop_branch(&mut b, go, xb, yn);
        b.switch_to_block(xb);
        let x = b.use_var(lid[0]);
        let l = b.use_var(row);
        let l = b.ins().iadd(l, x);
        b.def_var(lane, l);
        let l64 = b.ins().uextend(ptr, l);
        if plan.simple || vector {
            // One region, nothing at group level: every work-item runs it (vector mode tests
            // its four mask bytes below).
            b.ins().jump(body, &[]);
        } else {
            let ma = b.ins().iadd(mask, l64);
            let active = b.ins().load(types::I8, MEM.with_readonly(), ma, 0);
            b.ins().brif(active, body, &[], lane_next, &[]);
        }
        b.switch_to_block(body);
        // Records in blocks of four work-items (`super::plan`): the block, then the
        // work-item's place in it per scalar size.
        let lrec = if vector {
            // The lanes' first work-item starts a block: `x` steps by the lanes from 0 in
            // rows of a multiple of four (the variant's launches), so `l` is a multiple of
            // four, its block `l * record` bytes on and its place in it 0.
            let off = b.ins().imul_imm(l64, plan.record as i64);
            [b.ins().iadd(records, off); 4]
        } else {
            let quad = b.ins().band_imm(l64, !3);
            let off = b.ins().imul_imm(quad, plan.record as i64);
            let blk = b.ins().iadd(records, off);
            let q = b.ins().band_imm(l64, 3);
            [0, 1, 2, 3].map(|k| {
                let qk = b.ins().ishl_imm(q, k);
                b.ins().iadd(blk, qk)
            })
        };

        let (defined, _) = super::plan::values_of(f, &r.stmts, &[]);
        let cur = vector.then(|| b.declare_var(if wide { types::I16X8 } else { types::I32X4 }));
        let (mut entry_mask, mut entry_all) = (None, None);
        if vector && !plan.simple {
            // The four work-items' mask bytes as lanes; none active: the next four.
            let ma = b.ins().iadd(mask, l64);
            let bytes = b.ins().load(types::I32, MEM.with_readonly(), ma, 0);
            // Tested as a word: any byte set, and all four set (the group level's mask bytes
            // are 0 or 1), for the region's split into the copy for four active lanes
            // ([`Gen::vector_body`]); the lane mask is only built where the other copy uses it.
            let go = b.create_block();
            b.ins().brif(bytes, go, &[], lane_next, &[]);
            b.switch_to_block(go);
            let m = super::simd::bytes_to_lanes(&mut b, bytes);
            entry_mask = Some(m);
            entry_all = Some(b.ins().icmp_imm(IntCC::Equal, bytes, 0x0101_0101));
        }
        let mut g = Gen {
            b,
            f,
            plan,
            sites,
            ptr,
            env,
            bufs_p,
            scal_p,
            locs_p,
            local,
            stop,
            cancel,
            lid,
            lane,
            lrec,
            records,
            entry_mask,
            entry_all,
            vars: HashMap::new(),
            memo: vec![HashMap::new()],
            loops: Vec::new(),
            lane_next,
            fault,
            defined,
            cur,
            wide,
            polls,
            loop_private: Vec::new(),
            half: None,
            vloops: Vec::new(),
            quiet_breaks: Vec::new(),
            trips: HashMap::new(),
            full: false,
            splits: 0,
            pre_ok: false,
            pres: Vec::new(),
            anchor_slot: None,
            anchored: HashSet::new(),
            fault_lane: None,
            hoisted: HashMap::new(),
            at: crate::ir::SourceLoc::NONE,
            proof,
            counters: if vector {
                super::simd::counters(f)
            } else {
                Default::default()
            },
            nofault: None,
            checks_of: HashMap::new(),
            tiled: HashMap::new(),
            deferred: HashMap::new(),
            free_clamps: Vec::new(),
            reload_tables: false,
        };
        // Private variables kept in registers start at zero, like every private.
        for (i, d) in f.privates.iter_enumerated() {
            if plan.privates[i].is_none() && !vector {
                for c in 0..d.elem.width {
                    let z = g.zero(d.elem.scalar);
                    let v = g.var(VarOf::Private(i), c, d.elem.scalar);
                    g.b.def_var(v, z);
                }
            }
        }
        // Private variables kept in the record between regions live in registers inside
        // one: loaded when the work-item starts the region, stored when it leaves it.
        let mut synced = Vec::new();
        crate::ir::walk_block(&r.stmts, &mut |s| {
            if let Stmt::Load { mem, .. } | Stmt::Store { mem, .. } = s {
                if let Some(p) = g.private_var(*mem) {
                    if let Some(off) = plan.privates[p] {
                        if !synced.iter().any(|&(q, _)| q == p) {
                            synced.push((p, off));
                        }
                    }
                }
            }
        });
        let lane_end = g.b.create_block();
        g.lane_next = lane_end;
        if vector {
            // With the values the next group-level statement reads, for the lanes that
            // reach the end of the region, and the private variables kept in the record.
            g.vector_body(&r.stmts, &synced, &r.exports);
            g.b.ins().jump(lane_end, &[]);
            g.b.switch_to_block(lane_end);
        } else {
            for &(p, off) in &synced {
                let elem = f.privates[p].elem;
                let vals = g.load_rec(off, elem);
                for (c, x) in vals.into_iter().enumerate() {
                    let v = g.var(VarOf::Private(p), c as u8, elem.scalar);
                    g.b.def_var(v, x);
                }
            }
            g.block(&r.stmts);
            for (e, slot) in &r.exports {
                let vals = g.expr(*e);
                g.store_rec(slot.off, slot.ty, &vals);
            }
            g.b.ins().jump(lane_end, &[]);
            g.b.switch_to_block(lane_end);
            for &(p, off) in &synced {
                let elem = f.privates[p].elem;
                let vals: Vec<Value> = (0..elem.width)
                    .map(|c| {
                        let v = g.var(VarOf::Private(p), c, elem.scalar);
                        g.b.use_var(v)
                    })
                    .collect();
                g.store_rec(off, elem, &vals);
            }
        }
        g.b.ins().jump(lane_next, &[]);
        let mut b = g.b;

        b.switch_to_block(lane_next);
        let x = b.use_var(lid[0]);
        let x1 = b.ins().iadd_imm(x, lanes as i64);
        b.def_var(lid[0], x1);
        b.ins().jump(xh, &[]);
        // The next row: `x` back to 0, the row's first linear id one row on.
        b.switch_to_block(yn);
        let zero = b.ins().iconst(types::I32, 0);
        b.def_var(lid[0], zero);
        let r = b.use_var(row);
        let r1 = b.ins().iadd(r, local[0]);
        b.def_var(row, r1);
        let y = b.use_var(lid[1]);
        let y1 = b.ins().iadd_imm(y, 1);
        b.def_var(lid[1], y1);
        let go = b.ins().icmp(IntCC::UnsignedLessThan, y1, local[1]);
        loop_branch(&mut b, go, xh, zn);
        // The next plane: `y` back to 0.
        b.switch_to_block(zn);
        b.def_var(lid[1], zero);
        let z = b.use_var(lid[2]);
        let z1 = b.ins().iadd_imm(z, 1);
        b.def_var(lid[2], z1);
        let go = b.ins().icmp(IntCC::UnsignedLessThan, z1, local[2]);
        loop_branch(&mut b, go, xh, done);
        b.switch_to_block(done);
        let ok = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[ok]);

        b.switch_to_block(fault);
        let fp = b.ins().load(ptr, MEM, env, offset_of!(Env, fault) as i32);
        b.ins()
            .store(MEM, site_v, fp, offset_of!(Fault, site) as i32);
        b.ins()
            .store(MEM, lane_v, fp, offset_of!(Fault, lane) as i32);
        b.ins()
            .store(MEM, idx_v, fp, offset_of!(Fault, index) as i32);
        b.ins().store(MEM, len_v, fp, offset_of!(Fault, len) as i32);
        let one = b.ins().iconst(types::I32, 1);
        b.ins().return_(&[one]);
        b.seal_all_blocks();
        b.finalize();
    }

    // ---- small helpers ----

    pub(super) fn var(&mut self, of: VarOf, comp: u8, s: Scalar) -> Variable {
        if let Some(v) = self.vars.get(&(of, comp)) {
            return *v;
        }
        let v = self.b.declare_var(cl_ty(s));
        self.vars.insert((of, comp), v);
        v
    }

    pub(super) fn zero(&mut self, s: Scalar) -> Value {
        self.lit(Literal::from_bits(s, 0))
    }

    pub(super) fn iconst(&mut self, ty: cl::Type, v: i64) -> Value {
        let bits = ty.bits();
        let v = if bits == 64 {
            v
        } else {
            v & ((1i64 << bits) - 1)
        };
        self.b.ins().iconst(ty, v)
    }

    pub(super) fn lit(&mut self, l: Literal) -> Value {
        match l.scalar {
            Scalar::F32 => self.b.ins().f32const(Ieee32::with_bits(l.bits as u32)),
            Scalar::F64 => self.b.ins().f64const(Ieee64::with_bits(l.bits)),
            s => self.b.ins().iconst(cl_ty(s), l.bits as i64),
        }
    }

    /// Jumps to the fault exit with `site` when `bad` is set. In the scalar code, through a
    /// cold block of its own that names the site, so that the hot path only tests and
    /// branches (no register holds the site's number, no move sets it before every test: the
    /// radix sort's scatter loop ran out of registers). The vector variant branches to the
    /// exit directly: there the cold blocks made the Mandelbrot loop 2.4x slower (its
    /// deferred division tests), measured on a 2-core AMD EPYC VM (issue 31, session 13).
    pub(super) fn fault_if(&mut self, bad: Value, site: Site, index: Value, len: Value) {
        self.sites.push(site);
        let lane = match self.fault_lane {
            Some(l) => l,
            None => self.b.use_var(self.lane),
        };
        let cont = self.b.create_block();
        let cold = self.cur.is_none();
        if cold {
            let block = self.b.create_block();
            self.b.set_cold_block(block);
            self.b.ins().brif(bad, block, &[], cont, &[]);
            self.b.switch_to_block(block);
        }
        let s = self.b.ins().iconst(types::I32, self.sites.len() as i64 - 1);
        let args = [
            BlockArg::Value(s),
            BlockArg::Value(lane),
            BlockArg::Value(index),
            BlockArg::Value(len),
        ];
        if cold {
            self.b.ins().jump(self.fault, &args);
        } else {
            self.b.ins().brif(bad, self.fault, &args, cont, &[]);
        }
        self.b.switch_to_block(cont);
    }

    /// Continues in a fresh block after a jump that ends the current one (what follows is
    /// unreachable, but the statements after a `break` still need a block to go in).
    pub(super) fn after_jump(&mut self) {
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    /// The address of the work-item's record byte `off` holding a scalar of `size` bytes,
    /// as a base and an offset (records are kept in blocks of four work-items,
    /// [`super::plan`]); in vector mode, the first of the four lanes' scalars.
    pub(super) fn rec_at(&self, off: u32, size: usize) -> (Value, i32) {
        (
            self.lrec[size.trailing_zeros() as usize],
            (off as usize * super::plan::QUAD) as i32,
        )
    }

    /// A shared counter ([`super::plan::Plan::shared`]) of integer type `s`, from the first
    /// bytes of its word `at` bytes from the records. The group level writes it between
    /// region calls, never during one: a load that may leave loops (the work-item loop among
    /// them) like the tables' ([`Gen::table_flags`]).
    pub(super) fn load_shared(&mut self, at: i32, s: Scalar) -> Value {
        let fl = self.table_flags();
        self.b.ins().load(cl_ty(s), fl, self.records, at)
    }

    fn store_rec(&mut self, off: u32, ty: Type, vals: &[Value]) {
        let size = ty.scalar.size();
        for (c, v) in vals.iter().enumerate() {
            let (base, at) = self.rec_at(off + (c * size) as u32, size);
            self.b.ins().store(MEM, *v, base, at);
        }
    }

    pub(super) fn load_rec(&mut self, off: u32, ty: Type) -> Vec<Value> {
        let size = ty.scalar.size();
        (0..ty.width as usize)
            .map(|c| {
                let (base, at) = self.rec_at(off + (c * size) as u32, size);
                self.b.ins().load(cl_ty(ty.scalar), MEM, base, at)
            })
            .collect()
    }

    /// Stores flag byte `off` (1) of the work-item.
    fn set_flag(&mut self, off: u32) {
        let one = self.b.ins().iconst(types::I8, 1);
        let (base, at) = self.rec_at(off, 1);
        self.b.ins().store(MEM, one, base, at);
        self.mark_exit(off);
    }

    /// Tells the group level that a work-item set exit flag `off` (`super::plan::EXITED`,
    /// `super::plan::RETURNED`): until then it neither reads nor clears the flags.
    pub(super) fn mark_exit(&mut self, off: u32) {
        let one = self.b.ins().iconst(types::I8, 1);
        let at = if off == self.plan.returned {
            super::plan::RETURNED
        } else {
            super::plan::EXITED
        };
        self.b.ins().store(MEM, one, self.records, at);
    }

    /// The flags of a load of the launch's tables: [`TABLE`] (hoisted out of loops), or in
    /// the body of a loop with [`Gen::reload_tables`] set, flags that keep the load in the
    /// body (loaded again each iteration).
    pub(super) fn table_flags(&self) -> MemFlags {
        if self.reload_tables {
            MemFlags::new().with_notrap()
        } else {
            TABLE
        }
    }

    /// Base and length (`i64`) of entry `i` of a [`MemArg`] table.
    pub(super) fn mem_arg(&mut self, table: Value, i: usize) -> (Value, Value) {
        let m = std::mem::size_of::<MemArg>() as i32;
        let ro = self.table_flags();
        let base = self.b.ins().load(
            self.ptr,
            ro,
            table,
            i as i32 * m + offset_of!(MemArg, base) as i32,
        );
        let len = self.b.ins().load(
            types::I64,
            ro,
            table,
            i as i32 * m + offset_of!(MemArg, len) as i32,
        );
        (base, len)
    }

    /// Base and length of local array `l`: in a kernel with its vector types split
    /// ([`super::split`]), component `c` of a user's array of `n` elements starts `c * n`
    /// elements into the user's array.
    pub(super) fn local_arg(&mut self, l: crate::ir::LocalId) -> (Value, Value) {
        let Some(&(user, c)) = self.plan.local_parts.get(l.index()) else {
            return self.mem_arg(self.locs_p, l.index());
        };
        let (base, len) = self.mem_arg(self.locs_p, user.index());
        if c == 0 {
            return (base, len);
        }
        let size = self.f.locals[l].elem.size() as i64 * c as i64;
        let off = match self.f.locals[l].len {
            crate::ir::ArrayLen::Fixed(n) => self.b.ins().iconst(types::I64, n as i64 * size),
            crate::ir::ArrayLen::Param(_) => self.b.ins().imul_imm(len, size),
        };
        let base = self.b.ins().iadd(base, off);
        (base, len)
    }

    /// Component `d` of a `[u32; 3]` of the environment.
    pub(super) fn env_dim(&mut self, off: usize, d: usize) -> Value {
        self.b
            .ins()
            .load(types::I32, TABLE, self.env, (off + 4 * d) as i32)
    }

    /// The value of an expression computed earlier in scope. While hoisting, the deferred
    /// zero-divisor tests of what it reuses join the current expression's; outside, a hoisted
    /// expression's tests run here, at its first use in this scope (where the unhoisted
    /// division would have run them).
    pub(super) fn lookup(&mut self, e: ExprId) -> Option<Vec<Value>> {
        if let Some(v) = self.memo.iter().rev().find_map(|m| m.get(&e).cloned()) {
            if let (Some(acc), Some(c)) = (self.nofault.as_mut(), self.checks_of.get(&e)) {
                acc.extend(c.iter().copied());
            }
            return Some(v);
        }
        let h = self.hoisted.get(&e)?.clone();
        match self.nofault.as_mut() {
            Some(acc) => acc.extend(h.checks.iter().copied()),
            None => {
                match h.any {
                    Some(any) => {
                        // Only when a lane active before the loop has a zero divisor.
                        let (cold, ok) = (self.b.create_block(), self.b.create_block());
                        self.b.set_cold_block(cold);
                        self.b.ins().brif(any, cold, &[], ok, &[]);
                        self.b.switch_to_block(cold);
                        self.emit_checks(&h.checks);
                        self.b.ins().jump(ok, &[]);
                        self.b.switch_to_block(ok);
                    }
                    None => self.emit_checks(&h.checks),
                }
                self.memo
                    .last_mut()
                    .expect("a scope")
                    .insert(e, h.vals.clone());
            }
        }
        Some(h.vals)
    }

    /// Records the value of `e` in the current scope (and, while hoisting, its deferred tests:
    /// those added since `start`).
    pub(super) fn remember(&mut self, e: ExprId, vals: Vec<Value>, start: usize) {
        if let Some(acc) = &self.nofault {
            self.checks_of.insert(e, acc[start..].to_vec());
        }
        self.memo.last_mut().expect("a scope").insert(e, vals);
    }

    pub(super) fn deferred_len(&self) -> usize {
        self.nofault.as_ref().map_or(0, |a| a.len())
    }

    /// Faults when a deferred zero-divisor test holds (for an active lane, in vector mode).
    fn emit_checks(&mut self, checks: &[(Value, bool)]) {
        for &(zero, div) in checks {
            if self.cur.is_some() {
                self.lanes_fault_plain(zero, Site::DivByZero(div));
            } else {
                let zi = self.b.ins().iconst(types::I64, 0);
                self.fault_if(zero, Site::DivByZero(div), zi, zi);
            }
        }
    }

    /// Computes the integer divisions and remainders that `body` (a loop's) uses and that do
    /// not depend on anything the loop defines, once before the loop, with their zero-divisor
    /// tests deferred to where the loop uses them: faults stay where and when they were, and
    /// the division (which Cranelift does not move, as it may trap) leaves the loop.
    ///
    /// Returns the expressions hoisted (for [`Gen::hoisted_may_fault`]).
    pub(super) fn hoist_divisions(
        &mut self,
        body: &[Stmt],
        counter: Option<ValueId>,
    ) -> Vec<ExprId> {
        let (mut inner, _) = super::plan::values_of(self.f, body, &[]);
        inner.extend(counter);
        let mut roots = Vec::new();
        crate::ir::walk_block(body, &mut |s| roots.extend(crate::ir::stmt_operands(s)));
        let mut variant: HashMap<ExprId, bool> = HashMap::new();
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        while let Some(e) = roots.pop() {
            if !seen.insert(e) {
                continue;
            }
            let expr = self.f.exprs.get(e);
            if let Expr::Binary(BinaryOp::Div | BinaryOp::Rem, ..) = expr {
                let s = self.f.exprs.ty(e).scalar;
                if s.is_int() && !depends(self.f, e, &inner, &mut variant) {
                    found.push(e);
                }
            }
            roots.extend(crate::ir::expr_operands(expr));
        }
        if found.is_empty() {
            return found;
        }
        found.sort();
        self.memo.push(HashMap::new());
        self.nofault = Some(Vec::new());
        let mut done = Vec::new();
        for e in found {
            let vals = if self.cur.is_some() {
                self.vexprs(e)
            } else {
                self.expr(e)
            };
            let checks = self.checks_of.get(&e).cloned().unwrap_or_default();
            done.push((e, vals, checks));
        }
        self.nofault = None;
        self.checks_of.clear();
        self.memo.pop();
        let depth = self.memo.len();
        let hoisted = done.iter().map(|d| d.0).collect();
        for (e, vals, checks) in done {
            // Vector mode: whether any test can hold for a lane of the loop (those active
            // here), tested once here; the uses test the active lanes only then.
            let any = match (self.cur.is_some(), checks.is_empty()) {
                (true, false) => {
                    let m = self.mask();
                    let mut bad = self.b.ins().band(checks[0].0, m);
                    for &(z, _) in &checks[1..] {
                        let z = self.b.ins().band(z, m);
                        bad = self.b.ins().bor(bad, z);
                    }
                    let any = self.b.ins().vany_true(bad);
                    // Kept as a byte here: a `vany_true` used once would be sunk into the
                    // branch at the use, in the loop.
                    Some(self.b.ins().band_imm(any, 1))
                }
                _ => None,
            };
            self.hoisted.insert(
                e,
                Hoisted {
                    vals,
                    checks,
                    any,
                    depth,
                },
            );
        }
        hoisted
    }

    /// Vector mode: whether a lane active before the loop has a zero divisor in one of the
    /// divisions `hoisted` ahead of it ([`Gen::hoist_divisions`]): their flags or'ed (an
    /// `i8`), `None` where none of them has a test.
    pub(super) fn hoisted_may_fault(&mut self, hoisted: &[ExprId]) -> Option<Value> {
        let anys: Vec<Value> = hoisted
            .iter()
            .filter_map(|e| self.hoisted.get(e).and_then(|h| h.any))
            .collect();
        let (&first, rest) = anys.split_first()?;
        Some(rest.iter().fold(first, |a, &b| self.b.ins().bor(a, b)))
    }

    /// Where [`Gen::hoisted_may_fault`] said no, the divisions `hoisted` cannot fault: their
    /// tests go; returns what [`Gen::restore_hoisted`] puts back.
    pub(super) fn hoisted_without_tests(&mut self, hoisted: &[ExprId]) -> Vec<(ExprId, Hoisted)> {
        hoisted
            .iter()
            .filter_map(|&e| {
                let h = self.hoisted.get_mut(&e)?;
                let old = h.clone();
                h.checks.clear();
                h.any = None;
                Some((e, old))
            })
            .collect()
    }

    /// Puts back the hoisted divisions [`Gen::hoisted_without_tests`] took the tests of.
    pub(super) fn restore_hoisted(&mut self, saved: Vec<(ExprId, Hoisted)>) {
        self.hoisted.extend(saved);
    }

    /// Leaves a scope: its memoized and hoisted expressions go out of scope.
    pub(super) fn pop_scope(&mut self) {
        self.memo.pop();
        let depth = self.memo.len();
        self.hoisted.retain(|_, h| h.depth <= depth);
    }

    pub(super) fn call(
        &mut self,
        func: usize,
        params: &[cl::Type],
        ret: Option<cl::Type>,
        args: &[Value],
    ) -> Option<Value> {
        let mut sig = cl::Signature::new(self.b.func.signature.call_conv);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.extend(ret.map(AbiParam::new));
        let sr = self.b.import_signature(sig);
        let fp = self.b.ins().iconst(self.ptr, func as i64);
        let call = self.b.ins().call_indirect(sr, fp, args);
        self.b.inst_results(call).first().copied()
    }

    /// Leaves with the `Stopped` fault when the launch was cancelled, or another work-group
    /// failed and [`Stop::stops`](crate::cpu::Stop::stops) would stop this one; else
    /// continues in `next`. Called once per loop iteration, it reads the flags
    /// once every [`POLL_EVERY`] calls (a counter, one decrement and branch per iteration):
    /// a loop that never ends still stops, after at most that many more iterations.
    pub(super) fn poll_stop(&mut self, next: cl::Block) {
        let c = self.b.use_var(self.polls);
        let c = self.b.ins().iadd_imm(c, -1);
        self.b.def_var(self.polls, c);
        let poll = self.b.create_block();
        self.b.set_cold_block(poll);
        self.b.ins().brif(c, next, &[], poll, &[]);
        self.b.switch_to_block(poll);
        let every = self.b.ins().iconst(types::I32, POLL_EVERY as i64);
        self.b.def_var(self.polls, every);
        use crate::cpu::Stop;
        let flag = |g: &mut Self, off: usize| g.b.ins().load(types::I8, MEM, g.stop, off as i32);
        let s = flag(self, offset_of!(Stop, flag));
        let c = self.b.ins().load(types::I8, MEM, self.cancel, 0);
        let any = self.b.ins().bor(s, c);
        // A flag is set: cancelled, or this work-group comes after the first that failed, or
        // the grace period of the work-groups before it is over (`Stop::stops`, inline: no
        // call in a loop, whose registers a call would clobber).
        // Both ways back to `next` from the cold blocks go through one cold block of their
        // own: were they edges into `next` from blocks with two successors, the register
        // moves each edge needs would sit in blocks of their own between the hot ones (a
        // taken jump more an iteration).
        let resume = self.b.create_block();
        self.b.set_cold_block(resume);
        let ask = self.b.create_block();
        self.b.set_cold_block(ask);
        self.b.ins().brif(any, ask, &[], resume, &[]);
        self.b.switch_to_block(ask);
        let first = self
            .b
            .ins()
            .load(self.ptr, MEM, self.stop, offset_of!(Stop, first) as i32);
        let index = self.b.ins().load(
            self.ptr,
            MEM.with_readonly(),
            self.env,
            offset_of!(super::Env, index) as i32,
        );
        let after = self.b.ins().icmp(IntCC::UnsignedGreaterThan, index, first);
        let expired = flag(self, offset_of!(Stop, expired));
        let expired = self.b.ins().icmp_imm(IntCC::NotEqual, expired, 0);
        let cancelled = self.b.ins().icmp_imm(IntCC::NotEqual, c, 0);
        let stops = self.b.ins().bor(after, expired);
        let stops = self.b.ins().bor(stops, cancelled);
        let stopped = self.b.ins().iconst(types::I32, 0);
        let lane = self.b.use_var(self.lane);
        let zi = self.b.ins().iconst(types::I64, 0);
        let args = [
            BlockArg::Value(stopped),
            BlockArg::Value(lane),
            BlockArg::Value(zi),
            BlockArg::Value(zi),
        ];
        self.b.ins().brif(stops, self.fault, &args, resume, &[]);
        self.b.switch_to_block(resume);
        self.b.ins().jump(next, &[]);
    }

    // ---- statements ----

    fn block(&mut self, stmts: &[Stmt]) {
        self.memo.push(HashMap::new());
        for s in stmts {
            self.stmt(s);
        }
        self.pop_scope();
    }

    /// Defines IR value `v` as `vals`, in registers and, if another region reads it, in the
    /// record.
    pub(super) fn define(&mut self, v: ValueId, vals: &[Value]) {
        let ty = self.f.values[v].ty;
        for (c, &x) in vals.iter().enumerate() {
            let var = self.var(VarOf::Value(v), c as u8, ty.scalar);
            self.b.def_var(var, x);
        }
        if let Some(slot) = self.plan.values.get(&v).copied() {
            self.store_rec(slot.off, ty, vals);
        }
    }

    /// The index as `i64` (negative for negative signed indices), checked against `len`;
    /// returns the address of element `index` of `mem` and the distance from one of its
    /// components to the next.
    fn address(&mut self, mem: Mem, index: ExprId) -> (Value, i32) {
        let is = self.f.exprs.ty(index).scalar;
        let i = self.expr(index)[0];
        let i = match is.size() {
            8 => i,
            _ if is.is_signed() => self.b.ins().sextend(types::I64, i),
            _ => self.b.ins().uextend(types::I64, i),
        };
        let elem = self.f.mem_elem(mem).expect("validated memory");
        // A field of a buffer of structs: the struct's size from one element to the next,
        // then the field's offset.
        let (mut stride, field_offset) = match mem {
            Mem::Field(v) => {
                let v = &self.f.fields[v];
                let size = self.f.buffer_elem_size(v.buffer).expect("validated");
                (size, v.offset as i64)
            }
            _ => (elem.size(), 0),
        };
        let mut comp = elem.scalar.size() as i32;
        let (base, len) = match mem {
            Mem::Buffer(p) => self.mem_arg(self.bufs_p, p.index()),
            Mem::Field(v) => self.mem_arg(self.bufs_p, self.f.fields[v].buffer.index()),
            Mem::Local(l) => self.local_arg(l),
            Mem::Private(p) => {
                let off = self.plan.privates[p].expect("private array in the record");
                // In the record's four-work-item blocks, every byte is four apart.
                let (rb, at) = self.rec_at(off, elem.scalar.size());
                let base = self.b.ins().iadd_imm(rb, at as i64);
                stride *= super::plan::QUAD;
                comp *= super::plan::QUAD as i32;
                let n = self.f.privates[p].count();
                let len = self.b.ins().iconst(types::I64, n as i64);
                (base, len)
            }
        };
        if !self.proven_here(mem, index) {
            let bad = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, len);
            let at = self.at;
            self.fault_if(
                bad,
                Site::OutOfBounds {
                    mem,
                    scalar: is,
                    at,
                },
                i,
                len,
            );
        }
        let off = self.b.ins().imul_imm(i, stride as i64);
        let at = self.b.ins().iadd(base, off);
        let at = match field_offset {
            0 => at,
            o => self.b.ins().iadd_imm(at, o),
        };
        (at, comp)
    }

    /// Whether the access at `index` of `mem` is in bounds by [`Gen::proof`]: `Some(true)`
    /// (a constant) where proven, the test of its preconditions (an `i8`, computed from the
    /// launch's tables, so it leaves the work-item loop) where it has some, `None` where it
    /// is not proven.
    pub(super) fn in_bounds(&mut self, mem: Mem, index: ExprId) -> Option<Value> {
        match self.proof.verdict(mem, index).clone() {
            Verdict::Proven => Some(self.b.ins().iconst(types::I8, 1)),
            Verdict::ProvenIf(_) if self.pre_ok => Some(self.b.ins().iconst(types::I8, 1)),
            Verdict::Unproven => None,
            Verdict::ProvenIf(pre) => {
                let mut all: Option<Value> = None;
                for p in &pre {
                    let p = self
                        .pres
                        .iter()
                        .find(|q| q.implies(p))
                        .cloned()
                        .unwrap_or_else(|| p.clone());
                    let ok = self.precondition(&p);
                    all = Some(match all {
                        None => ok,
                        Some(a) => self.b.ins().band(a, ok),
                    });
                }
                all
            }
        }
    }

    /// Whether the access at `index` of `mem` needs no bounds test here: proven, or proven
    /// under preconditions tested on entry ([`Gen::pre_ok`]).
    pub(super) fn proven_here(&self, mem: Mem, index: ExprId) -> bool {
        match self.proof.verdict(mem, index) {
            Verdict::Proven => true,
            Verdict::ProvenIf(_) => self.pre_ok,
            Verdict::Unproven => false,
        }
    }

    /// `sum(terms) + offset <= len(buffer)`, in 64 bits (no term exceeds 32, at most 64 of
    /// them; a term repeated `k` times is multiplied by `k`), in 128 where a term is a
    /// product.
    pub(super) fn precondition(&mut self, p: &Precondition) -> Value {
        let mut sum = self.b.ins().iconst(types::I64, p.offset);
        // Products ([`Term::Product`], up to 64 bits each): summed in 128 bits after the rest.
        let mut products: Vec<(Factor, Factor, usize)> = Vec::new();
        let mut i = 0;
        while i < p.terms.len() {
            let t = &p.terms[i];
            let k = p.terms[i..].iter().take_while(|&u| u == t).count();
            i += k;
            let v = match *t {
                Term::Product(x, y) => {
                    products.push((x, y, k));
                    continue;
                }
                Term::LocalSize(d) => self.factor(Factor::LocalSize(d)),
                Term::Len(q) => self.factor(Factor::Len(q)),
                Term::Param(q) => self.factor(Factor::Param(q)),
            };
            let v = match k {
                1 => v,
                k => self.b.ins().imul_imm(v, k as i64),
            };
            sum = self.b.ins().iadd(sum, v);
        }
        let len = match p.limit {
            Limit::Len(q) => self.mem_arg(self.bufs_p, q.index()).1,
            Limit::Fixed(n) => self.b.ins().iconst(types::I64, n as i64),
        };
        // Lengths are below 2^63. A negative sum passes: then no work-item reaches the
        // access (its index is at least 0 and below the sum).
        if products.is_empty() {
            return self.b.ins().icmp(IntCC::SignedLessThanOrEqual, sum, len);
        }
        let mut sum = self.b.ins().sextend(types::I128, sum);
        for (x, y, k) in products {
            let x = self.factor(x);
            let y = self.factor(y);
            let x = self.b.ins().sextend(types::I128, x);
            let y = self.b.ins().sextend(types::I128, y);
            let mut v = self.b.ins().imul(x, y);
            if k > 1 {
                let kk = self.b.ins().iconst(types::I64, k as i64);
                let kk = self.b.ins().sextend(types::I128, kk);
                v = self.b.ins().imul(v, kk);
            }
            sum = self.b.ins().iadd(sum, v);
        }
        let len = self.b.ins().sextend(types::I128, len);
        self.b.ins().icmp(IntCC::SignedLessThanOrEqual, sum, len)
    }

    /// A precondition's factor, as an `i64` (sign- or zero-extended as its type says).
    fn factor(&mut self, t: Factor) -> Value {
        match t {
            Factor::LocalSize(d) => self.b.ins().uextend(types::I64, self.local[d as usize]),
            Factor::Len(q) => {
                // As `Expr::BufferLen` gives it: the low 32 bits.
                let len = self.mem_arg(self.bufs_p, q.index()).1;
                let len = self.b.ins().ireduce(types::I32, len);
                self.b.ins().uextend(types::I64, len)
            }
            Factor::Param(q) => {
                let bits = self
                    .b
                    .ins()
                    .load(types::I64, TABLE, self.scal_p, q.index() as i32 * 8);
                let s = match self.f.params[q].kind {
                    crate::ir::ParamKind::Scalar(t) => t.scalar,
                    _ => unreachable!("preconditions sum integer scalars"),
                };
                let x = from_bits(&mut self.b, bits, s);
                match s.size() {
                    8 => x,
                    _ if s.is_signed() => self.b.ins().sextend(types::I64, x),
                    _ => self.b.ins().uextend(types::I64, x),
                }
            }
        }
    }

    pub(super) fn private_var(&self, mem: Mem) -> Option<PrivateId> {
        match mem {
            Mem::Private(p) if self.f.privates[p].len.is_none() => Some(p),
            _ => None,
        }
    }

    /// The preconditions of the proofs ([`Verdict::ProvenIf`]) of the accesses in `stmts`
    /// that go through memory (not a private variable in registers), each the strongest of
    /// those with its terms and limit.
    pub(super) fn preconditions_in(&self, stmts: &[Stmt]) -> Vec<Precondition> {
        let mut pres: Vec<Precondition> = Vec::new();
        crate::ir::walk_block(stmts, &mut |s| {
            if let Stmt::Load { mem, index, .. }
            | Stmt::Store { mem, index, .. }
            | Stmt::Atomic { mem, index, .. }
            | Stmt::AtomicLoad { mem, index, .. } = s
            {
                if self.private_var(*mem).is_some() {
                    return;
                }
                if let Verdict::ProvenIf(ps) = self.proof.verdict(*mem, *index) {
                    for p in ps {
                        p.add_to(&mut pres);
                    }
                }
            }
        });
        pres
    }

    /// Atomic `op` through [`super::helpers::atomic`] (what [`Gen::atomic_inline`] leaves).
    pub(super) fn atomic_call(
        &mut self,
        s: Scalar,
        op: crate::ir::AtomicOp,
        a: Value,
        v: Value,
        c: Option<Value>,
    ) -> Value {
        let v = self.bits_of(v, s);
        let c = match c {
            Some(c) => self.bits_of(c, s),
            None => self.b.ins().iconst(types::I64, 0),
        };
        let si = self.b.ins().iconst(types::I32, scalar_index(s));
        let oi = self.b.ins().iconst(types::I32, atomic_index(op));
        let old = self
            .call(
                super::helpers::atomic as *const () as usize,
                &[self.ptr, types::I32, types::I32, types::I64, types::I64],
                Some(types::I64),
                &[a, si, oi, v, c],
            )
            .expect("a result");
        from_bits(&mut self.b, old, s)
    }

    /// Atomic `op` on the element of scalar `s` at `a` with operand `v` (and `c`, the value
    /// compare-exchange expects) in Cranelift code; returns the old value, or `None` where the
    /// [`super::helpers::atomic`] call stays (float min and max: `Num::min_` and `max_`, Rust's
    /// `f32::min`, have NaN and signed-zero rules that no inline sequence is proven to match).
    ///
    /// On buffers, a sequentially consistent `atomic_rmw` (integers; a float's exchange on its
    /// bits) or `atomic_cas` (compare-exchange, which compares bits as `semantics::apply_atomic`
    /// does), and for a float's add a loop of `fadd` and `atomic_cas` on the bits, as
    /// `semantics::atomic_rmw`'s loop.
    ///
    /// On local memory (`local`), a plain load, operation and store. A work-group's local
    /// memory is its worker's own (`run::Scratch::locals`, allocated per thread and filled
    /// with zeros per group by `Worker::run_group`), and a work-group runs on one thread from
    /// start to end (its regions and the group level between them): nothing else reads or
    /// writes that memory while the operation runs, so the result is the atomic's, in the
    /// order this code runs the work-items (one after the other through a region, as with the
    /// helper's call before; the interpreter runs a statement for every work-item in turn,
    /// so a region with two atomics on one element can see another interleaving, which
    /// atomics allow).
    pub(super) fn atomic_inline(
        &mut self,
        local: bool,
        s: Scalar,
        op: crate::ir::AtomicOp,
        a: Value,
        v: Value,
        c: Option<Value>,
    ) -> Option<Value> {
        use crate::ir::AtomicOp as A;
        use cl::AtomicRmwOp as R;
        let ty = cl_ty(s);
        let flags = MemFlags::trusted();
        if s.is_float() {
            let ity = types::Type::int(ty.bits() as u16).expect("32 or 64 bits");
            return match (op, local) {
                (A::Add, true) => {
                    let old = self.b.ins().load(ty, MEM, a, 0);
                    let new = self.b.ins().fadd(old, v);
                    self.b.ins().store(MEM, new, a, 0);
                    Some(old)
                }
                (A::Add, false) => {
                    let first = self.b.ins().atomic_load(ity, flags, a);
                    let (again, done) = (self.b.create_block(), self.b.create_block());
                    self.b.append_block_param(again, ity);
                    self.b.append_block_param(done, ity);
                    self.b.ins().jump(again, &[BlockArg::Value(first)]);
                    self.b.switch_to_block(again);
                    let cur = self.b.block_params(again)[0];
                    let f = self.b.ins().bitcast(ty, MemFlags::new(), cur);
                    let sum = self.b.ins().fadd(f, v);
                    let new = self.b.ins().bitcast(ity, MemFlags::new(), sum);
                    let got = self.b.ins().atomic_cas(flags, a, cur, new);
                    let same = self.b.ins().icmp(IntCC::Equal, got, cur);
                    self.b.ins().brif(
                        same,
                        done,
                        &[BlockArg::Value(got)],
                        again,
                        &[BlockArg::Value(got)],
                    );
                    self.b.switch_to_block(done);
                    let old = self.b.block_params(done)[0];
                    Some(self.b.ins().bitcast(ty, MemFlags::new(), old))
                }
                (A::Exchange, true) => {
                    let old = self.b.ins().load(ty, MEM, a, 0);
                    self.b.ins().store(MEM, v, a, 0);
                    Some(old)
                }
                (A::Exchange, false) => {
                    let v = self.b.ins().bitcast(ity, MemFlags::new(), v);
                    let old = self.b.ins().atomic_rmw(ity, flags, R::Xchg, a, v);
                    Some(self.b.ins().bitcast(ty, MemFlags::new(), old))
                }
                _ => None,
            };
        }
        if !matches!(ty, types::I32 | types::I64) {
            return None;
        }
        let signed = s.is_signed();
        if local {
            let old = self.b.ins().load(ty, MEM, a, 0);
            let new = match op {
                A::Add => self.b.ins().iadd(old, v),
                A::Sub => self.b.ins().isub(old, v),
                A::Min if signed => self.b.ins().smin(old, v),
                A::Min => self.b.ins().umin(old, v),
                A::Max if signed => self.b.ins().smax(old, v),
                A::Max => self.b.ins().umax(old, v),
                A::And => self.b.ins().band(old, v),
                A::Or => self.b.ins().bor(old, v),
                A::Xor => self.b.ins().bxor(old, v),
                A::Exchange => v,
                A::CompareExchange => {
                    let c = c.expect("validated compare value");
                    let same = self.b.ins().icmp(IntCC::Equal, old, c);
                    self.b.ins().select(same, v, old)
                }
            };
            self.b.ins().store(MEM, new, a, 0);
            return Some(old);
        }
        let rmw = match op {
            A::Add => R::Add,
            A::Sub => R::Sub,
            A::Min if signed => R::Smin,
            A::Min => R::Umin,
            A::Max if signed => R::Smax,
            A::Max => R::Umax,
            A::And => R::And,
            A::Or => R::Or,
            A::Xor => R::Xor,
            A::Exchange => R::Xchg,
            A::CompareExchange => {
                let c = c.expect("validated compare value");
                return Some(self.b.ins().atomic_cas(flags, a, c, v));
            }
        };
        Some(self.b.ins().atomic_rmw(ty, flags, rmw, a, v))
    }

    /// The buffer parameter behind `mem` where a launch may keep it per thread
    /// ([`super::privatize`]).
    pub(super) fn kept(&self, mem: Mem) -> Option<crate::ir::ParamId> {
        match mem {
            Mem::Buffer(p) => self.plan.private.iter().any(|x| x.param == p).then_some(p),
            _ => None,
        }
    }

    /// Code for a buffer a launch may keep per thread: branches on the launch's bit for `p`
    /// in [`Env::private`](super::Env) to `emit(self, true)` (the buffer is the worker's own
    /// copy: plain loads and stores) or `emit(self, false)` (atomics); returns what the one
    /// that ran returns (values of types `tys`).
    pub(super) fn on_kept(
        &mut self,
        p: crate::ir::ParamId,
        tys: &[cl::Type],
        emit: &mut dyn FnMut(&mut Self, bool) -> Vec<Value>,
    ) -> Vec<Value> {
        let bits = self
            .b
            .ins()
            .load(types::I32, TABLE, self.env, offset_of!(Env, private) as i32);
        let bit = self.b.ins().band_imm(bits, 1i64 << p.index());
        let (plain, locked, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let out: Vec<Value> = tys
            .iter()
            .map(|&t| self.b.append_block_param(join, t))
            .collect();
        self.b.ins().brif(bit, plain, &[], locked, &[]);
        for (blk, own) in [(plain, true), (locked, false)] {
            self.b.switch_to_block(blk);
            let x: Vec<BlockArg> = emit(self, own).into_iter().map(BlockArg::Value).collect();
            self.b.ins().jump(join, &x);
        }
        self.b.switch_to_block(join);
        out
    }

    /// Atomic `op` as [`Gen::atomic_inline`] emits it (`local`: the plain load, operation and
    /// store), or the helper's call where that leaves it; returns the old value.
    pub(super) fn atomic_or_call(
        &mut self,
        local: bool,
        s: Scalar,
        op: crate::ir::AtomicOp,
        a: Value,
        v: Value,
        c: Option<Value>,
    ) -> Value {
        match self.atomic_inline(local, s, op, a, v, c) {
            Some(old) => old,
            None => self.atomic_call(s, op, a, v, c),
        }
    }

    /// Atomic `op` on the element of `mem` (of scalar `s`) at `a` ([`Gen::atomic_or_call`]);
    /// on a buffer a launch may keep per thread, both the plain operation of local memory and
    /// the atomic ([`Gen::on_kept`]).
    pub(super) fn atomic(
        &mut self,
        mem: Mem,
        s: Scalar,
        op: crate::ir::AtomicOp,
        a: Value,
        v: Value,
        c: Option<Value>,
    ) -> Value {
        match self.kept(mem) {
            Some(p) => self.on_kept(p, &[cl_ty(s)], &mut |g, own| {
                vec![g.atomic_or_call(own, s, op, a, v, c)]
            })[0],
            None => self.atomic_or_call(matches!(mem, Mem::Local(_)), s, op, a, v, c),
        }
    }

    /// The start of code lowered twice: branches on `all` (an `i8`) to a fast copy (taken
    /// where it is set) or a general one, and counts the split (at most two on a path, so
    /// that nested copies do not multiply the code); returns the two copies' blocks and the
    /// block where they join (the caller ends the split: `splits -= 1` there).
    pub(super) fn split_on(&mut self, all: Value) -> (cl::Block, cl::Block, cl::Block) {
        let (fast, general, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(all, fast, &[], general, &[]);
        self.splits += 1;
        (fast, general, join)
    }

    /// A loop (`s`, a `for` or `loop` not inside another such copy) with accesses proven in
    /// bounds under preconditions on the launch's arguments: the preconditions tested once
    /// on entry (launch-uniform, so the test leaves the work-item loop), then one copy of the
    /// loop whose accesses take the proofs ([`Gen::pre_ok`]: no bounds test) and one, for
    /// launches that fail them, that tests every access as before. Returns false (nothing
    /// emitted) where the loop has no such access.
    fn split_loop(&mut self, s: &Stmt) -> bool {
        if self.pre_ok || self.splits > 0 {
            return false;
        }
        let pres = self.preconditions_in(std::slice::from_ref(s));
        if pres.is_empty() {
            return false;
        }
        let mut all: Option<Value> = None;
        for p in &pres {
            let ok = self.precondition(p);
            all = Some(match all {
                None => ok,
                Some(a) => self.b.ins().band(a, ok),
            });
        }
        let all = all.expect("a precondition");
        let (fast, general, join) = self.split_on(all);
        for (blk, ok) in [(fast, true), (general, false)] {
            self.b.switch_to_block(blk);
            self.pre_ok = ok;
            self.memo.push(HashMap::new());
            self.stmt_here(s);
            self.pop_scope();
            self.b.ins().jump(join, &[]);
        }
        self.pre_ok = false;
        self.splits -= 1;
        self.b.switch_to_block(join);
        true
    }

    /// The body of a scalar loop, with [`Gen::reload_tables`] set where it reads many table
    /// entries.
    fn loop_body(&mut self, body: &[Stmt]) {
        let outer = self.reload_tables;
        self.reload_tables = outer || table_demand(self.f, body) > RELOAD_ABOVE;
        self.block(body);
        self.reload_tables = outer;
    }

    fn stmt(&mut self, s: &Stmt) {
        if matches!(s, Stmt::For { .. } | Stmt::Loop { .. }) && self.split_loop(s) {
            return;
        }
        self.stmt_here(s);
    }

    fn stmt_here(&mut self, s: &Stmt) {
        if let Stmt::Load { at, .. }
        | Stmt::Store { at, .. }
        | Stmt::Atomic { at, .. }
        | Stmt::AtomicLoad { at, .. } = s
        {
            self.at = *at;
        }
        match s {
            Stmt::Let { value, expr } => {
                let vals = self.expr(*expr);
                self.define(*value, &vals);
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                let elem = self.f.mem_elem(*mem).expect("validated memory");
                let vals: Vec<Value> = if let Some(p) = self.private_var(*mem) {
                    // In registers (synchronized with the record at the region's edges).
                    (0..elem.width)
                        .map(|c| {
                            let v = self.var(VarOf::Private(p), c, elem.scalar);
                            self.b.use_var(v)
                        })
                        .collect()
                } else {
                    let (a, comp) = self.address(*mem, *index);
                    (0..elem.width as i32)
                        .map(|c| self.b.ins().load(cl_ty(elem.scalar), MEM, a, c * comp))
                        .collect()
                };
                self.define(*value, &vals);
            }
            Stmt::Store {
                mem, index, value, ..
            } => {
                let elem = self.f.mem_elem(*mem).expect("validated memory");
                let vals = self.expr(*value);
                if let Some(p) = self.private_var(*mem) {
                    for (c, &x) in vals.iter().enumerate() {
                        let v = self.var(VarOf::Private(p), c as u8, elem.scalar);
                        self.b.def_var(v, x);
                    }
                } else {
                    let (a, comp) = self.address(*mem, *index);
                    for (c, &x) in vals.iter().enumerate() {
                        self.b.ins().store(MEM, x, a, c as i32 * comp);
                    }
                }
            }
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                // Sequentially consistent whatever the order (`semantics::atomic_rmw`).
                ..
            } => {
                let s = self.f.mem_elem(*mem).expect("validated memory").scalar;
                let v = self.expr(*operand)[0];
                let c = compare.map(|c| self.expr(c)[0]);
                let (a, _) = self.address(*mem, *index);
                let old = self.atomic(*mem, s, *op, a, v, c);
                if let Some(r) = result {
                    self.define(*r, &[old]);
                }
            }
            // Cranelift's atomic loads are sequentially consistent, whatever the order asked.
            Stmt::AtomicLoad {
                value, mem, index, ..
            } => {
                let s = self.f.mem_elem(*mem).expect("validated memory").scalar;
                let (a, _) = self.address(*mem, *index);
                let v = self.b.ins().atomic_load(cl_ty(s), MemFlags::new(), a);
                self.define(*value, &[v]);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.anchor_reads(&[then, otherwise]);
                let c = self.expr(*cond)[0];
                let (t, e, merge) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().brif(c, t, &[], e, &[]);
                self.b.switch_to_block(t);
                self.block(then);
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(e);
                self.block(otherwise);
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(merge);
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let s = self.f.values[*var].ty.scalar;
                let (v0, e, st) = (
                    self.expr(*start)[0],
                    self.expr(*end)[0],
                    self.expr(*step)[0],
                );
                let z = self.iconst(cl_ty(s), 0);
                let is_zero = self.b.ins().icmp(IntCC::Equal, st, z);
                let zi = self.b.ins().iconst(types::I64, 0);
                self.fault_if(is_zero, Site::ZeroStep, zi, zi);
                let up = if s.is_signed() {
                    self.b.ins().icmp(IntCC::SignedGreaterThan, st, z)
                } else {
                    self.b.ins().iconst(types::I8, 1)
                };
                self.hoist_divisions(body, Some(*var));
                self.define(*var, &[v0]);
                let (hdr, bodyb, latch, exit) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(hdr);
                let vv = self.var(VarOf::Value(*var), 0, s);
                let cur = self.b.use_var(vv);
                let (lt, gt) = if s.is_signed() {
                    (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
                } else {
                    (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
                };
                let below = self.b.ins().icmp(lt, cur, e);
                let above = self.b.ins().icmp(gt, cur, e);
                let go = self.b.ins().select(up, below, above);
                loop_branch(&mut self.b, go, bodyb, exit);
                self.b.switch_to_block(bodyb);
                self.loops.push((*id, latch, exit));
                self.loop_body(body);
                self.loops.pop();
                self.b.ins().jump(latch, &[]);
                self.b.switch_to_block(latch);
                let cur = self.b.use_var(vv);
                let next = self.b.ins().iadd(cur, st);
                self.define(*var, &[next]);
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(exit);
            }
            Stmt::Loop { id, body } => {
                self.hoist_divisions(body, None);
                let (hdr, bodyb, exit) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(hdr);
                // A loop may spin on memory another work-group writes: poll the stop flags.
                self.poll_stop(bodyb);
                self.b.switch_to_block(bodyb);
                self.loops.push((*id, hdr, exit));
                self.loop_body(body);
                self.loops.pop();
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(exit);
            }
            Stmt::Break(id) | Stmt::Continue(id) => {
                let brk = matches!(s, Stmt::Break(_));
                if let Some(&(_, cont, exit)) = self.loops.iter().rev().find(|l| l.0 == *id) {
                    self.b.ins().jump(if brk { exit } else { cont }, &[]);
                } else {
                    // A group-level loop: the work-item leaves the region and the group-level
                    // code sees its flag.
                    let (b, c) = self.plan.loop_flags[id];
                    self.set_flag(if brk { b } else { c });
                    self.b.ins().jump(self.lane_next, &[]);
                }
                self.after_jump();
            }
            Stmt::Return => {
                if !self.plan.simple {
                    self.set_flag(self.plan.returned);
                }
                self.b.ins().jump(self.lane_next, &[]);
                self.after_jump();
            }
            Stmt::MemFence { .. } => {
                self.b.ins().fence();
            }
            Stmt::Barrier(_) | Stmt::Group { .. } => {
                unreachable!("barriers and collectives are between regions")
            }
        }
    }
}

/// Whether `e` reads a value in `inner` (memoized in `memo`).
fn depends(
    f: &Function,
    e: ExprId,
    inner: &HashSet<ValueId>,
    memo: &mut HashMap<ExprId, bool>,
) -> bool {
    if let Some(&d) = memo.get(&e) {
        return d;
    }
    let expr = f.exprs.get(e);
    let d = match expr {
        Expr::Value(v) => inner.contains(v),
        _ => crate::ir::expr_operands(expr)
            .into_iter()
            .any(|o| depends(f, o, inner, memo)),
    };
    memo.insert(e, d);
    d
}

/// A loop header's branch: to `body` while `go` is non-zero, else to `exit`, with the exit as
/// the branch's first target. Cranelift's loop-invariant code motion (in its e-graph
/// elaboration, 0.125) walks the dominator tree in the CFG's reverse post-order and forgets
/// the loops it is in once it has visited a block outside them (it pops them and never pushes
/// them again); with the body as the first target, the exit came first, and nothing in the
/// body left the loop: in the vector variant an invariant `u32` to `f32` conversion, lane by
/// lane, and the loads of parameters ran on every iteration of a loop.
pub(super) fn loop_branch(b: &mut FunctionBuilder, go: Value, body: cl::Block, exit: cl::Block) {
    let stop = b.ins().icmp_imm(IntCC::Equal, go, 0);
    b.ins().brif(stop, exit, &[], body, &[]);
}
