//! Checked mode's instrumentation ([`instrument`]): the one rewrite of a kernel that makes every
//! backend (generated OpenCL C and CUDA C++, the compiled CPU code, the interpreter) test each
//! access to a buffer, local array or private array against its length, skip an access out of
//! bounds, and record the first one in a hidden buffer that the runtime reads after the launch
//! and turns into [`crate::Error::OutOfBounds`].
//!
//! The hidden buffer holds [`FAULT_WORDS`] `u32` words: word 0 counts the faults (each faulting
//! work-item adds 1 atomically); the work-item that found it 0 writes the rest: the access's
//! site (an index into [`Instrumented::sites`]), the index and the length (64 bits each, low
//! word first), and its global id (the host derives the local and group ids from the launch's
//! work-group size). A load out of bounds gives 0 (it reads a
//! private variable set to 0 at the kernel's start), an atomic out of bounds returns 0.
//!
//! Every load, store, atomic and atomic load of a buffer, field view, local array or private
//! array becomes `if index < len { access } else { record }`. A launch-sized local array's
//! length comes in as one more hidden `u32` parameter, since an expression cannot read a
//! [`ParamKind::LocalLen`] parameter. The runtime instruments a kernel once, when it is first
//! launched on a checked device, then validates and optimizes the result like any kernel, so
//! the generated OpenCL C, CUDA C++ and compiled CPU code are checked by construction (the
//! golden files of the checked variants are in `crates/strata-cli/tests/golden/*-checked/`).
//!
//! **Barrier divergence.** Before every `if` whose branches hold a barrier or a collective, the
//! work-group counts the work-items taking the `then` branch (a `group_reduce_add`, where every
//! work-item is present: the enclosing `if`s were checked the same way); when some but not all
//! take it, the fault is recorded (its site says which barrier, the index word holds how many
//! work-items reach it, the length word the work-group's size) and the whole group returns,
//! so the divergent barrier never runs: on a GPU it would hang or be undefined. The same count
//! guards:
//! - every `if` whose branches leave early where a barrier or collective may run that the
//!   work-items leaving would miss: after a `return`, any later in the kernel (or in a later
//!   iteration of a loop around it); after a `break`, any in the loop's body (its later
//!   iterations; after the loop the work-items are together again); after a `continue`, any
//!   later in the same iteration of the loop's body;
//! - every iteration of a `for` loop holding a barrier or collective: the loop becomes an
//!   endless loop over a private counter that counts the work-items whose counter is still
//!   in range before each iteration, so trip counts that differ between work-items are found
//!   before the barrier runs.
//!
//! Counts are taken only where the whole work-group is present, and not for conditions and
//! loop bounds that read only literals, parameters, buffer lengths and the work-group's ids
//! and sizes (the same in every work-item); a `return` inside a loop that holds no barrier
//! and whose trip counts may differ is not checked.
//!
//! **Other faults.** A `for` loop whose step is not a literal tests it first: a zero step (the
//! loop would never end) is recorded and the loop skipped. Every integer division and
//! remainder whose divisor is not a non-zero literal tests it before the statement that
//! computes it: a zero is recorded (the statement then runs with the IR's defined value). The
//! runtime reports both as [`crate::Error::KernelFault`], with the CPU backends' messages.

use super::{
    Access, AtomicOp, AtomicOrder, BinaryOp, Block, Builtin, Elem, Expr, ExprId, Function,
    HiddenParam, HiddenRole, Literal, Mem, Param, ParamId, ParamKind, PrivateDecl, PrivateId,
    Scalar, SourceLoc, Stmt, Type, ValueId,
};
use std::collections::HashMap;

mod cuts;
mod own;
mod races;

pub use cuts::LOOP_CUT;

pub use own::OwnIndex;
pub(crate) use races::orders_memory;
pub use races::SHADOW_WORDS;

/// Words of the hidden fault buffer.
pub const FAULT_WORDS: usize = 9;

/// An instrumented access, or an `if` holding a barrier.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSite {
    /// How errors name the memory, e.g. "buffer `x`"; for a divergence site, the barrier or
    /// collective (`barrier`, `group_reduce_add`, ...).
    pub memory: String,
    /// The user's line.
    pub at: SourceLoc,
    /// What the site checks.
    pub kind: SiteKind,
}

/// What a [`CheckSite`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// An access against its memory's length.
    Bounds,
    /// That all or none of the work-group take a branch holding a barrier or collective.
    Divergence,
    /// Any other fault (a zero loop step, an integer division by zero): [`CheckSite::memory`]
    /// holds the message of the error.
    Fault,
    /// A load or store checked for data races (`races`): the fault words name the other
    /// access (see the module docs of `races`).
    Access {
        /// Whether the access writes.
        write: bool,
        /// Whether it is an access to a buffer (else to local memory).
        global: bool,
    },
    /// A read of memory nobody wrote; the reason, as [`crate::Error::UninitializedRead`]
    /// gives it.
    Uninit(&'static str),
}

/// The message of a fault for a `for` loop whose step is 0 (the CPU backends' message).
pub const ZERO_STEP: &str = "for loop step is 0; the loop would never end";

/// The message of a fault for an integer division (`div`) or remainder by zero (the CPU
/// backends' message).
pub fn div_by_zero(div: bool) -> String {
    format!(
        "integer {} by zero",
        if div { "division" } else { "remainder" }
    )
}

/// Where a statement runs, for the divergence checks.
#[derive(Clone, Debug)]
struct Ctx {
    /// The first barrier or collective that may run after the statement (later in the
    /// kernel, or in a later iteration of an enclosing loop): what a `return` there misses.
    after: Option<String>,
    /// Whether every work-item of the work-group runs the statement (or none does), so a
    /// count over the work-group may be taken there.
    uniform: bool,
    /// The loops around the statement, outermost first: what a `break` or `continue` of
    /// each misses.
    loops: Vec<LoopCtx>,
}

/// An enclosing loop, for the divergence checks of the `break`s and `continue`s that
/// leave it: a work-item that leaves a loop by `break` rejoins the others after it, so it
/// misses only the barriers and collectives of the loop's later iterations (any in its
/// body); one that `continue`s misses those later in the current iteration.
#[derive(Clone, Debug)]
struct LoopCtx {
    id: super::LoopId,
    /// The first barrier or collective in the loop's body.
    body: Option<String>,
    /// The first barrier or collective after the statement, up to the end of the loop's
    /// body.
    rest: Option<String>,
}

impl Ctx {
    /// The context of a loop's body: `self`'s, with the loop `id` (whose body is `body`)
    /// innermost, and `after` what may run after the body's last statement.
    fn enter_loop(
        &self,
        id: super::LoopId,
        body: &[Stmt],
        after: Option<String>,
        uniform: bool,
    ) -> Ctx {
        let mut loops = self.loops.clone();
        loops.push(LoopCtx {
            id,
            body: first_sync(body),
            rest: None,
        });
        Ctx {
            after,
            uniform,
            loops,
        }
    }

    /// The first barrier or collective a work-item misses when it leaves `b` early (a
    /// `return`, or a `break` or `continue` of a loop outside `b`) where this context runs
    /// `b`; `None` when nothing it leaves for can be missed. (`inner`: the loops around the
    /// statement being looked at, inside `b`.)
    fn missed(&self, b: &[Stmt], inner: &mut Vec<super::LoopId>) -> Option<String> {
        let of_loop = |id: &super::LoopId| self.loops.iter().find(|l| l.id == *id);
        b.iter().find_map(|s| match s {
            Stmt::Return => self.after.clone(),
            Stmt::Break(id) if !inner.contains(id) => of_loop(id).and_then(|l| l.body.clone()),
            Stmt::Continue(id) if !inner.contains(id) => of_loop(id).and_then(|l| l.rest.clone()),
            Stmt::If {
                then, otherwise, ..
            } => self
                .missed(then, inner)
                .or_else(|| self.missed(otherwise, inner)),
            Stmt::For { id, body, .. } | Stmt::Loop { id, body } => {
                inner.push(*id);
                let r = self.missed(body, inner);
                inner.pop();
                r
            }
            _ => None,
        })
    }
}

/// A kernel rewritten for checked mode.
#[derive(Clone, Debug)]
pub struct Instrumented {
    /// The kernel with its accesses guarded; its parameters are the original ones, then the
    /// fault buffer, then one `u32` scalar per launch-sized local array (its length), each
    /// listed in [`Function::hidden`] with its role ([`HiddenRole::FaultWords`],
    /// [`HiddenRole::LocalLen`]).
    pub function: Function,
    /// The guarded accesses, by the site number the fault buffer records.
    pub sites: Vec<CheckSite>,
}

/// How an error names `mem` of `f`, e.g. "buffer `x`" or "local array `tile`".
pub fn mem_what(f: &Function, mem: Mem) -> String {
    let kind = match mem {
        Mem::Buffer(_) => "buffer",
        Mem::Local(_) => "local array",
        Mem::Private(_) => "private array",
        Mem::Field(_) => "field",
    };
    format!("{kind} `{}`", f.mem_name(mem))
}

struct Rewriter {
    f: Function,
    sites: Vec<CheckSite>,
    fault: ParamId,
    /// `LocalLen` parameter to its hidden scalar parameter.
    lens: HashMap<ParamId, ParamId>,
    /// The private variable that carries a guarded load's result, per type.
    carriers: HashMap<Type, PrivateId>,
    /// Every check of checked mode, not only the bounds ([`instrument`]).
    full: bool,
    /// Bounds-only mode: the private variables (site + 1, index, length) where a work-item
    /// keeps its first fault until it ends, when it records it (see [`instrument_bounds`]).
    deferred: Option<[PrivateId; 3]>,
    /// Accesses proven in bounds where the statement runs: `(index, buffer)` pairs whose
    /// `index < len(buffer)` is a condition (or a conjunct of one) of an enclosing `if`.
    proven: Vec<(ExprId, ParamId)>,
    /// The accesses [`super::ranges`] proves in bounds: they are not tested.
    proof: super::ranges::Proof,
    /// Whether every loop is followed by the test that the driver did not end it early
    /// ([`instrument_cutting_loops`]).
    cuts: bool,
}

/// Rewrites `f` for checked mode (see the module docs). The result is valid IR when `f` is.
pub fn instrument(f: &Function) -> Instrumented {
    rewrite(f, true, false)
}

/// Rewrites `f` with its accesses bounds-checked, and nothing else (no divergence, loop step
/// or division checks): what a device that runs kernels in the host's memory (PoCL, any
/// OpenCL device of type CPU) launches outside checked mode, so that an index out of bounds
/// is an error, not a write into the host's memory or a crash of the process. Accesses the
/// optimizer proves in bounds (literal indices into fixed-size arrays) lose their test, as
/// do (in both modes) those [`super::ranges`] proves in bounds.
pub fn instrument_bounds(f: &Function) -> Instrumented {
    rewrite(f, false, false)
}

/// [`instrument`] (`full`) or [`instrument_bounds`], with every loop followed by a test that
/// it ended by its own condition or a `break`, recording the fault [`LOOP_CUT`] when the
/// driver left it early: what a device whose driver ends loops after a number of iterations
/// ([`crate::DeviceInfo::loop_iteration_limit`]) launches (see the module `cuts`).
pub fn instrument_cutting_loops(f: &Function, full: bool) -> Instrumented {
    rewrite(f, full, true)
}

fn rewrite(f: &Function, full: bool, cuts: bool) -> Instrumented {
    let proof = super::ranges::Proof::of(f);
    let mut f = f.clone();
    let (user_locals, user_privates) = (f.locals.len(), f.privates.len());
    let body = std::mem::take(&mut f.body);
    let name = unique_name(&f, "strata_fault");
    let fault = f.params.push(Param {
        name,
        kind: ParamKind::Buffer {
            elem: Elem::Value(Type::U32),
            access: Access::ReadWrite,
            len: Some(FAULT_WORDS as u64),
        },
    });
    f.hidden.push(HiddenParam {
        param: fault,
        role: HiddenRole::FaultWords,
    });
    let mut lens = HashMap::new();
    let dynamic: Vec<(ParamId, String)> = f
        .locals
        .iter()
        .filter_map(|l| match l.len {
            super::ArrayLen::Param(p) => Some((p, l.name.clone())),
            super::ArrayLen::Fixed(_) => None,
        })
        .collect();
    for (p, local) in dynamic {
        let name = unique_name(&f, &format!("strata_{local}_count"));
        let q = f.params.push(Param {
            name,
            kind: ParamKind::Scalar(Type::U32),
        });
        f.hidden.push(HiddenParam {
            param: q,
            role: HiddenRole::LocalLen { len_param: p },
        });
        lens.insert(p, q);
    }
    let mut r = Rewriter {
        f,
        sites: Vec::new(),
        fault,
        lens,
        carriers: HashMap::new(),
        full,
        deferred: None,
        proven: Vec::new(),
        proof,
        cuts,
    };
    if !full {
        let names = [
            "strata_fault_site",
            "strata_fault_index",
            "strata_fault_len",
        ];
        let types = [Type::U32, Type::U64, Type::U64];
        let vars = [0, 1, 2].map(|k| {
            let name = unique_name(&r.f, names[k]);
            r.f.privates.push(PrivateDecl {
                name,
                elem: types[k],
                len: None,
            })
        });
        r.deferred = Some(vars);
    }
    let top = Ctx {
        after: None,
        // Bounds only: no counts are taken anywhere.
        uniform: full,
        loops: Vec::new(),
    };
    let mut body = r.block(body, &top);
    r.flush(&mut body);
    // Races and uninitialized reads (`races`), checked at the guarded accesses.
    let mut shadow_init = Vec::new();
    if full {
        (shadow_init, body) = r.races(body, user_locals, user_privates);
    }
    // The carriers start at 0: what a load out of bounds gives.
    let mut init: Block = Vec::new();
    if let Some([site, _, _]) = r.deferred {
        let (zero, index) = (r.lit(Scalar::U32, 0), r.lit(Scalar::U32, 0));
        init.push(Stmt::Store {
            mem: Mem::Private(site),
            index,
            value: zero,
            at: SourceLoc::NONE,
        });
    }
    let mut carriers: Vec<(Type, PrivateId)> = r.carriers.iter().map(|(t, p)| (*t, *p)).collect();
    carriers.sort_by_key(|&(_, p)| p);
    for (ty, p) in carriers {
        let zero = r.zero(ty);
        let index = r.lit(Scalar::U32, 0);
        init.push(Stmt::Store {
            mem: Mem::Private(p),
            index,
            value: zero,
            at: SourceLoc::NONE,
        });
    }
    init.append(&mut shadow_init);
    init.append(&mut body);
    r.f.body = init;
    Instrumented {
        function: r.f,
        sites: r.sites,
    }
}

/// `base`, or `base_2`, `base_3` ... : a name no parameter, local or private has.
fn unique_name(f: &Function, base: &str) -> String {
    let taken = |n: &str| {
        f.params.iter().any(|p| p.name == n)
            || f.locals.iter().any(|l| l.name == n)
            || f.privates.iter().any(|p| p.name == n)
    };
    let mut name = base.to_string();
    let mut k = 2;
    while taken(&name) {
        name = format!("{base}_{k}");
        k += 1;
    }
    name
}

impl Rewriter {
    fn e(&mut self, e: Expr, ty: Type) -> ExprId {
        self.f.exprs.intern(e, ty)
    }

    fn lit(&mut self, s: Scalar, bits: u64) -> ExprId {
        self.e(Expr::Literal(Literal::from_bits(s, bits)), Type::scalar(s))
    }

    fn zero(&mut self, ty: Type) -> ExprId {
        let z = self.lit(ty.scalar, 0);
        if ty.width == 1 {
            z
        } else {
            self.e(Expr::Splat(z, ty.width), ty)
        }
    }

    fn cast(&mut self, x: ExprId, s: Scalar) -> ExprId {
        if self.f.exprs.ty(x).scalar == s {
            x
        } else {
            self.e(Expr::Cast(x, s), Type::scalar(s))
        }
    }

    /// The element count of `mem` as a `u64` expression; `None` for a private variable (not
    /// an array: always index 0).
    fn len(&mut self, mem: Mem) -> Option<ExprId> {
        let n = match mem {
            Mem::Buffer(p) => self.e(Expr::BufferLen(p), Type::U32),
            Mem::Field(v) => {
                let p = self.f.fields[v].buffer;
                self.e(Expr::BufferLen(p), Type::U32)
            }
            Mem::Local(l) => match self.f.locals[l].len {
                super::ArrayLen::Fixed(n) => self.lit(Scalar::U64, n as u64),
                super::ArrayLen::Param(p) => {
                    let q = self.lens[&p];
                    self.e(Expr::Param(q), Type::U32)
                }
            },
            Mem::Private(p) => match self.f.privates[p].len {
                Some(n) => self.lit(Scalar::U64, n as u64),
                None => return None,
            },
        };
        Some(self.cast(n, Scalar::U64))
    }

    fn new_value(&mut self, ty: Type) -> ValueId {
        self.f.new_value(ty, None)
    }

    fn carrier(&mut self, ty: Type) -> PrivateId {
        if let Some(&p) = self.carriers.get(&ty) {
            return p;
        }
        let name = unique_name(&self.f, &format!("strata_loaded{}", self.carriers.len()));
        let p = self.f.privates.push(PrivateDecl {
            name,
            elem: ty,
            len: None,
        });
        self.carriers.insert(ty, p);
        p
    }

    /// The test that `index` is inside `mem`, and the statements recording a fault, or `None`
    /// where nothing needs testing.
    fn guard(&mut self, mem: Mem, index: ExprId, at: SourceLoc) -> Option<(ExprId, Block)> {
        let buffer = match mem {
            Mem::Buffer(p) => Some(p),
            Mem::Field(v) => Some(self.f.fields[v].buffer),
            _ => None,
        };
        if buffer.is_some_and(|p| self.proven.contains(&(index, p)))
            || self.proof.proven(mem, index)
        {
            return None;
        }
        let len = self.len(mem)?;
        let wide = self.cast(index, Scalar::U64);
        let ok = self.e(Expr::Binary(BinaryOp::Lt, wide, len), Type::BOOL);
        let site = self.sites.len() as u64;
        self.sites.push(CheckSite {
            memory: mem_what(&self.f, mem),
            at,
            kind: SiteKind::Bounds,
        });
        if let Some(vars) = self.deferred {
            return Some((ok, self.defer(vars, site, wide, len)));
        }
        let site = self.lit(Scalar::U32, site);
        Some((ok, self.record(site, wide, len)))
    }

    /// Bounds-only mode: the statements keeping a fault at `site` in the work-item's private
    /// variables `vars`, unless it has one already (a few stores, where [`Rewriter::record`]
    /// writes the fault words: PoCL's compile times grew manyfold with that at every access).
    fn defer(&mut self, vars: [PrivateId; 3], site: u64, wide: ExprId, len: ExprId) -> Block {
        let [s, i, l] = vars;
        let index = self.lit(Scalar::U32, 0);
        let zero = self.lit(Scalar::U32, 0);
        let had = self.new_value(Type::U32);
        let had_e = self.e(Expr::Value(had), Type::U32);
        let none = self.e(Expr::Binary(BinaryOp::Eq, had_e, zero), Type::BOOL);
        let site = self.lit(Scalar::U32, site + 1);
        let store = |mem: PrivateId, value: ExprId| Stmt::Store {
            mem: Mem::Private(mem),
            index,
            value,
            at: SourceLoc::NONE,
        };
        vec![
            Stmt::Load {
                value: had,
                mem: Mem::Private(s),
                index,
                at: SourceLoc::NONE,
            },
            Stmt::If {
                cond: none,
                then: vec![store(s, site), store(i, wide), store(l, len)],
                otherwise: Vec::new(),
            },
        ]
    }

    /// Bounds-only mode: appends to `out` the recording of the work-item's kept fault, if
    /// any (at the end of the kernel and before every `return`).
    fn flush(&mut self, out: &mut Block) {
        let Some([s, i, l]) = self.deferred else {
            return;
        };
        let index = self.lit(Scalar::U32, 0);
        let zero = self.lit(Scalar::U32, 0);
        let one = self.lit(Scalar::U32, 1);
        let [sv, iv, lv] = [Type::U32, Type::U64, Type::U64].map(|t| self.new_value(t));
        for (v, p) in [(sv, s), (iv, i), (lv, l)] {
            out.push(Stmt::Load {
                value: v,
                mem: Mem::Private(p),
                index,
                at: SourceLoc::NONE,
            });
        }
        let site1 = self.e(Expr::Value(sv), Type::U32);
        let some = self.e(Expr::Binary(BinaryOp::Ne, site1, zero), Type::BOOL);
        let site = self.e(Expr::Binary(BinaryOp::Sub, site1, one), Type::U32);
        let wide = self.e(Expr::Value(iv), Type::U64);
        let len = self.e(Expr::Value(lv), Type::U64);
        let record = self.record(site, wide, len);
        out.push(Stmt::If {
            cond: some,
            then: record,
            otherwise: Vec::new(),
        });
    }

    /// The statements recording a fault at `site` with `index` and `len` (`u64`).
    fn record(&mut self, site: ExprId, wide: ExprId, len: ExprId) -> Block {
        let fault = Mem::Buffer(self.fault);
        let count = self.new_value(Type::U32);
        let zero = self.lit(Scalar::U32, 0);
        let one = self.lit(Scalar::U32, 1);
        let mut record: Block = Vec::new();
        let mut put = |r: &mut Rewriter, word: u64, v: ExprId| {
            let index = r.lit(Scalar::U32, word);
            let value = r.cast(v, Scalar::U32);
            record.push(Stmt::Store {
                mem: fault,
                index,
                value,
                at: SourceLoc::NONE,
            });
        };
        put(self, 1, site);
        let k32 = self.lit(Scalar::U64, 32);
        for (word, x) in [(2, wide), (4, len)] {
            put(self, word, x);
            let hi = self.e(Expr::Binary(BinaryOp::Shr, x, k32), Type::U64);
            put(self, word + 1, hi);
        }
        for d in 0..3u8 {
            let id = self.e(Expr::Builtin(Builtin::GlobalId(d)), Type::U32);
            put(self, 6 + d as u64, id);
        }
        let counted = self.e(Expr::Value(count), Type::U32);
        let first = self.e(Expr::Binary(BinaryOp::Eq, counted, zero), Type::BOOL);
        vec![
            Stmt::Atomic {
                result: Some(count),
                mem: fault,
                index: zero,
                op: AtomicOp::Add,
                operand: one,
                compare: None,
                order: AtomicOrder::RELAXED,
                at: SourceLoc::NONE,
            },
            Stmt::If {
                cond: first,
                then: record,
                otherwise: Vec::new(),
            },
        ]
    }

    /// The count of the work-items for which `cond` holds (where every work-item of the
    /// work-group is present), and, when some but not all of them do, the fault recorded by
    /// the first work-item of the group (a divergence at the barrier or collective `what`,
    /// reached by the work-items for which `cond` holds when `reached_if` is true, else by the
    /// others) and a `return` of the whole group.
    fn vote(&mut self, what: String, cond: ExprId, reached_if: bool, out: &mut Block) {
        let site = self.sites.len() as u64;
        self.sites.push(CheckSite {
            memory: what,
            at: SourceLoc::NONE,
            kind: SiteKind::Divergence,
        });
        let (one, zero) = (self.lit(Scalar::U32, 1), self.lit(Scalar::U32, 0));
        let vote = self.e(Expr::Select(cond, one, zero), Type::U32);
        let taken = self.new_value(Type::U32);
        out.push(Stmt::Group {
            value: taken,
            op: super::GroupOp::ReduceAdd,
            scope: super::GroupScope::WorkGroup,
            arg: vote,
            source: None,
        });
        let taken = self.e(Expr::Value(taken), Type::U32);
        let mut size = self.e(Expr::Builtin(Builtin::LocalSize(0)), Type::U32);
        for d in 1..3 {
            let s = self.e(Expr::Builtin(Builtin::LocalSize(d)), Type::U32);
            size = self.e(Expr::Binary(BinaryOp::Mul, size, s), Type::U32);
        }
        let some = self.e(Expr::Binary(BinaryOp::Ne, taken, zero), Type::BOOL);
        let not_all = self.e(Expr::Binary(BinaryOp::Ne, taken, size), Type::BOOL);
        let divergent = self.e(Expr::Binary(BinaryOp::And, some, not_all), Type::BOOL);
        let reached = if reached_if {
            taken
        } else {
            self.e(Expr::Binary(BinaryOp::Sub, size, taken), Type::U32)
        };
        let (reached, size64) = (
            self.cast(reached, Scalar::U64),
            self.cast(size, Scalar::U64),
        );
        // One work-item records it: the first of the work-group.
        let lid = self.e(Expr::Builtin(Builtin::LocalLinearId), Type::U32);
        let first = self.e(Expr::Binary(BinaryOp::Eq, lid, zero), Type::BOOL);
        let site = self.lit(Scalar::U32, site);
        let record = self.record(site, reached, size64);
        out.push(Stmt::If {
            cond: divergent,
            then: vec![
                Stmt::If {
                    cond: first,
                    then: record,
                    otherwise: Vec::new(),
                },
                Stmt::Return,
            ],
            otherwise: Vec::new(),
        });
    }

    /// The statements recording the fault `message` when `cond` holds, else running
    /// `otherwise`.
    fn fault_if(&mut self, cond: ExprId, message: String, otherwise: Block, out: &mut Block) {
        let site = self.sites.len() as u64;
        self.sites.push(CheckSite {
            memory: message,
            at: SourceLoc::NONE,
            kind: SiteKind::Fault,
        });
        let zero = self.lit(Scalar::U64, 0);
        let site = self.lit(Scalar::U32, site);
        let record = self.record(site, zero, zero);
        out.push(Stmt::If {
            cond,
            then: record,
            otherwise,
        });
    }

    /// Tests every integer divisor in the expressions `roots` (that is not a non-zero
    /// literal) against 0, before the statement that computes them.
    fn check_divisors(&mut self, roots: &[ExprId], out: &mut Block) {
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<ExprId> = roots.to_vec();
        let mut divisors: Vec<(ExprId, bool)> = Vec::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match self.f.exprs.get(e) {
                Expr::Binary(op @ (BinaryOp::Div | BinaryOp::Rem), a, b) => {
                    let (op, a, b) = (*op, *a, *b);
                    let ty = self.f.exprs.ty(b);
                    let nonzero = self.f.exprs.literal(b).is_some_and(|l| l.as_i128() != 0);
                    if ty.scalar.is_int() && !nonzero && !divisors.iter().any(|d| d.0 == b) {
                        divisors.push((b, op == BinaryOp::Div));
                    }
                    stack.extend([a, b]);
                }
                Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => stack.push(*a),
                Expr::Splat(a, _) | Expr::Extract(a, _) => stack.push(*a),
                Expr::Binary(_, a, b) => stack.extend([*a, *b]),
                Expr::Select(c, a, b) => stack.extend([*c, *a, *b]),
                Expr::Math(_, xs) | Expr::Compose(xs) | Expr::Stub(_, xs) => {
                    stack.extend(xs.iter().copied())
                }
                Expr::Literal(_)
                | Expr::Param(_)
                | Expr::BufferLen(_)
                | Expr::Value(_)
                | Expr::Builtin(_) => {}
            }
        }
        for (d, div) in divisors {
            let ty = self.f.exprs.ty(d);
            let zero = self.lit(ty.scalar, 0);
            let mut any: Option<ExprId> = None;
            for c in 0..ty.width {
                let x = if ty.width == 1 {
                    d
                } else {
                    self.e(Expr::Extract(d, c), Type::scalar(ty.scalar))
                };
                let is0 = self.e(Expr::Binary(BinaryOp::Eq, x, zero), Type::BOOL);
                any = Some(match any {
                    None => is0,
                    Some(a) => self.e(Expr::Binary(BinaryOp::Or, a, is0), Type::BOOL),
                });
            }
            if let Some(cond) = any {
                self.fault_if(cond, div_by_zero(div), Vec::new(), out);
            }
        }
    }

    /// Adds the accesses `cond` (true) proves in bounds to [`Rewriter::proven`]: each
    /// conjunct `index < len(buffer)`.
    fn prove(&mut self, cond: ExprId) {
        // Each conjunct once (conditions share operands: `g && g`).
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![cond];
        while let Some(cond) = todo.pop() {
            if !seen.insert(cond) {
                continue;
            }
            match *self.f.exprs.get(cond) {
                Expr::Binary(BinaryOp::And, a, b) => todo.extend([b, a]),
                Expr::Binary(BinaryOp::Lt, index, len) => {
                    if let Expr::BufferLen(p) = *self.f.exprs.get(len) {
                        self.proven.push((index, p));
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether `e` has the same value in every work-item of a work-group: it reads only
    /// literals, scalar parameters, buffer lengths and the work-group's ids and sizes.
    fn same_in_group(&self, e: ExprId) -> bool {
        super::all_exprs(&self.f.exprs, e, |x| match x {
            Expr::Builtin(b) => b.same_in_group(),
            Expr::Value(_) | Expr::Stub(..) => false,
            _ => true,
        })
    }

    /// Whether a `for` loop whose counter (of scalar type `s`) is `v` runs an iteration: as
    /// the writers test it, the step's sign decides the comparison with the bound.
    fn for_goes(&mut self, v: ExprId, end: ExprId, step: ExprId, s: Scalar) -> ExprId {
        let up = self.e(Expr::Binary(BinaryOp::Lt, v, end), Type::BOOL);
        let down = self.e(Expr::Binary(BinaryOp::Gt, v, end), Type::BOOL);
        match self.f.exprs.literal(step) {
            Some(l) if l.as_i128() > 0 => up,
            Some(_) => down,
            None if !s.is_signed() => up,
            None => {
                let z = self.lit(s, 0);
                let pos = self.e(Expr::Binary(BinaryOp::Gt, step, z), Type::BOOL);
                self.e(Expr::Select(pos, up, down), Type::BOOL)
            }
        }
    }

    /// A `for` loop holding a barrier or collective, as an endless loop over a private
    /// counter with a count of the work-items still iterating before each iteration (see the
    /// module docs). `body` is rewritten already.
    #[allow(clippy::too_many_arguments)]
    fn counted_for(
        &mut self,
        (id, var): (super::LoopId, ValueId),
        (start, end, step): (ExprId, ExprId, ExprId),
        what: String,
        body: Block,
        out: &mut Block,
    ) {
        let ty = self.f.values[var].ty;
        let s = ty.scalar;
        let name = unique_name(&self.f, "strata_counter");
        let p = self.f.privates.push(PrivateDecl {
            name,
            elem: ty,
            len: None,
        });
        let zero = self.lit(Scalar::U32, 0);
        out.push(Stmt::Store {
            mem: Mem::Private(p),
            index: zero,
            value: start,
            at: SourceLoc::NONE,
        });
        let v = self.e(Expr::Value(var), ty);
        let go = self.for_goes(v, end, step, s);
        let mut b: Block = vec![Stmt::Load {
            value: var,
            mem: Mem::Private(p),
            index: zero,
            at: SourceLoc::NONE,
        }];
        self.vote(what, go, true, &mut b);
        let stop = self.e(Expr::Unary(super::UnaryOp::Not, go), Type::BOOL);
        b.push(Stmt::If {
            cond: stop,
            then: vec![Stmt::Break(id)],
            otherwise: Vec::new(),
        });
        let next = self.e(Expr::Binary(BinaryOp::Add, v, step), ty);
        b.push(Stmt::Store {
            mem: Mem::Private(p),
            index: zero,
            value: next,
            at: SourceLoc::NONE,
        });
        b.extend(body);
        out.push(Stmt::Loop { id, body: b });
    }

    /// Rewrites block `b`, run in context `ctx` (whose `after` is what may follow the block).
    fn block(&mut self, b: Block, ctx: &Ctx) -> Block {
        // What may run after each statement in the block: the first sync later in it.
        let mut later: Vec<Option<String>> = vec![None; b.len()];
        for i in (0..b.len().saturating_sub(1)).rev() {
            later[i] = first_sync(std::slice::from_ref(&b[i + 1])).or(later[i + 1].clone());
        }
        let mut out = Vec::with_capacity(b.len());
        for (s, later) in b.into_iter().zip(later) {
            // After the statement: the sync later in the block, else what follows the block
            // (in the kernel, and up to the end of each enclosing loop's body).
            let c = Ctx {
                after: later.clone().or(ctx.after.clone()),
                uniform: ctx.uniform,
                loops: ctx
                    .loops
                    .iter()
                    .map(|l| LoopCtx {
                        rest: later.clone().or(l.rest.clone()),
                        ..l.clone()
                    })
                    .collect(),
            };
            self.stmt(s, &mut out, &c);
        }
        out
    }

    /// Guards `access` (which defines `value`, if any) and pushes the result.
    fn guarded(
        &mut self,
        mem: Mem,
        index: ExprId,
        at: SourceLoc,
        access: Stmt,
        value: Option<(ValueId, Type)>,
        out: &mut Block,
    ) {
        let Some((ok, fault)) = self.guard(mem, index, at) else {
            out.push(access);
            return;
        };
        match value {
            None => out.push(Stmt::If {
                cond: ok,
                then: vec![access],
                otherwise: fault,
            }),
            Some((v, ty)) => {
                // The access defines a fresh value inside the `if`; the carrier takes it out.
                let inner = self.new_value(ty);
                let access = redefine(access, inner);
                let carrier = self.carrier(ty);
                let zero = self.lit(Scalar::U32, 0);
                let value = self.e(Expr::Value(inner), ty);
                out.push(Stmt::If {
                    cond: ok,
                    then: vec![
                        access,
                        Stmt::Store {
                            mem: Mem::Private(carrier),
                            index: zero,
                            value,
                            at: SourceLoc::NONE,
                        },
                    ],
                    otherwise: fault,
                });
                out.push(Stmt::Load {
                    value: v,
                    mem: Mem::Private(carrier),
                    index: zero,
                    at: SourceLoc::NONE,
                });
            }
        }
    }

    fn stmt(&mut self, s: Stmt, out: &mut Block, ctx: &Ctx) {
        if self.full {
            let operands = super::stmt::stmt_operands(&s);
            self.check_divisors(&operands, out);
        }
        match s {
            Stmt::Load {
                value,
                mem,
                index,
                at,
            }
            | Stmt::AtomicLoad {
                value,
                mem,
                index,
                at,
                ..
            } => {
                let ty = self.f.values[value].ty;
                self.guarded(mem, index, at, s, Some((value, ty)), out);
            }
            Stmt::Store { mem, index, at, .. } => self.guarded(mem, index, at, s, None, out),
            Stmt::Atomic {
                result,
                mem,
                index,
                at,
                ..
            } => {
                let value = result.map(|v| (v, self.f.values[v].ty));
                self.guarded(mem, index, at, s, value, out);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                // A count where a branch holds a barrier or leaves early before one (that
                // the work-items leaving would miss: [`Ctx::missed`]).
                let missed = |b: &Block| ctx.missed(b, &mut Vec::new());
                let what = match (first_sync(&then), first_sync(&otherwise)) {
                    (Some(w), _) => Some((w, true)),
                    (None, Some(w)) => Some((w, false)),
                    (None, None) => match (missed(&then), missed(&otherwise)) {
                        (Some(w), _) => Some((w, false)),
                        (None, Some(w)) => Some((w, true)),
                        (None, None) => None,
                    },
                };
                let what = what.filter(|_| ctx.uniform);
                // A condition the same for the whole work-group needs no count.
                let same = self.same_in_group(cond);
                let inner = Ctx {
                    uniform: ctx.uniform && (what.is_some() || same),
                    ..ctx.clone()
                };
                let known = self.proven.len();
                self.prove(cond);
                let then = self.block(then, &inner);
                self.proven.truncate(known);
                let otherwise = self.block(otherwise, &inner);
                if let Some((name, reached_if)) = what.filter(|_| !same) {
                    self.vote(name, cond, reached_if, out);
                }
                out.push(Stmt::If {
                    cond,
                    then,
                    otherwise,
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
                // A zero step is recorded and the loop skipped (not a `return`: PoCL runs
                // the code after the last barrier of a kernel holding a `return` before it
                // with local id 0 in every work-item).
                let zero_step = (self.full && self.f.exprs.literal(step).is_none()).then(|| {
                    let z = self.lit(self.f.exprs.ty(step).scalar, 0);
                    self.e(Expr::Binary(BinaryOp::Eq, step, z), Type::BOOL)
                });
                let mut looped = Vec::new();
                let out_for = out;
                let out = &mut looped;
                let sync = first_sync(&body).filter(|_| ctx.uniform);
                // Trip counts the same for the whole work-group need no count.
                let same = [start, end, step].iter().all(|&e| self.same_in_group(e));
                let inner = ctx.enter_loop(
                    id,
                    &body,
                    sync.clone().or(ctx.after.clone()),
                    ctx.uniform && (sync.is_some() || same),
                );
                let body = self.block(body, &inner);
                let mut lp = Vec::new();
                match sync.filter(|_| !same) {
                    Some(what) => {
                        self.counted_for((id, var), (start, end, step), what, body, &mut lp)
                    }
                    None => lp.push(Stmt::For {
                        id,
                        var,
                        start,
                        end,
                        step,
                        body,
                    }),
                }
                let lp_stmt = lp.pop().expect("the loop");
                out.extend(lp);
                if self.cuts {
                    self.cut_checked(lp_stmt, out);
                } else {
                    out.push(lp_stmt);
                }
                match zero_step {
                    Some(is0) => self.fault_if(is0, ZERO_STEP.to_string(), looped, out_for),
                    None => out_for.extend(looped),
                }
            }
            Stmt::Loop { id, body } => {
                let sync = first_sync(&body).filter(|_| ctx.uniform);
                let inner = ctx.enter_loop(
                    id,
                    &body,
                    sync.clone().or(ctx.after.clone()),
                    sync.is_some(),
                );
                let body = self.block(body, &inner);
                if self.cuts {
                    self.cut_checked(Stmt::Loop { id, body }, out);
                } else {
                    out.push(Stmt::Loop { id, body });
                }
            }
            Stmt::Return => {
                self.flush(out);
                out.push(Stmt::Return);
            }
            s @ (Stmt::Let { .. }
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. }
            | Stmt::Group { .. }) => out.push(s),
        }
    }
}

/// The name of the first barrier or collective in `b`, at any depth.
fn first_sync(b: &[Stmt]) -> Option<String> {
    b.iter().find_map(|s| match s {
        Stmt::Barrier(_) => Some("barrier".to_string()),
        Stmt::Group { op, scope, .. } => Some(op.name(*scope).to_string()),
        Stmt::If {
            then, otherwise, ..
        } => first_sync(then).or_else(|| first_sync(otherwise)),
        Stmt::For { body, .. } | Stmt::Loop { body, .. } => first_sync(body),
        _ => None,
    })
}

/// `s` (a load, atomic load or atomic with a result) defining `v` instead.
fn redefine(s: Stmt, v: ValueId) -> Stmt {
    match s {
        Stmt::Load { mem, index, at, .. } => Stmt::Load {
            value: v,
            mem,
            index,
            at,
        },
        Stmt::AtomicLoad {
            mem,
            index,
            order,
            at,
            ..
        } => Stmt::AtomicLoad {
            value: v,
            mem,
            index,
            order,
            at,
        },
        Stmt::Atomic {
            mem,
            index,
            op,
            operand,
            compare,
            order,
            at,
            ..
        } => Stmt::Atomic {
            result: Some(v),
            mem,
            index,
            op,
            operand,
            compare,
            order,
            at,
        },
        s => s,
    }
}
