//! The compiled CPU backend: kernels as native code through Cranelift.
//!
//! Cranelift (`cranelift-codegen`, `-frontend`, `-jit`) compiles in-process, so nothing is
//! installed. It is pinned to 0.125.4, the last release that builds with the workspace's
//! `rust-version` (1.88). Compiled kernels live in the runtime's per-device kernel cache like
//! any backend's; [`Settings::cpu_disasm`](crate::Settings::cpu_disasm) prints each region's
//! Cranelift IR and machine code.
//!
//! **Shape.** A kernel is cut at its barriers and collectives into barrier-free *regions*
//! ([`plan`]). Each region becomes one native function that runs the region's statements for
//! every work-item of a work-group in turn (a loop over the local ids, the region's code in its
//! body, with real branches and loops inside one work-item), so a kernel without barriers is
//! one function and one call per work-group. What sits between regions, the barriers, the
//! collectives and the `if`s and loops that contain them, is run by a `Worker` ([`run`]) once
//! per work-group with the same execution masks as the interpreter ([`super::exec`]): a barrier
//! reached by part of the group is the same error, a collective folds in local-id order with
//! the interpreter's code ([`super::semantics::collective`]), so results agree bit for bit.
//!
//! **State between regions.** Each work-item has a *record*: the values a region defines and
//! another uses, its private variables and arrays, the operands of the next group-level
//! statement (a condition, loop bounds, a collective's operand) and its exit flags (returned;
//! left or continued a group-level loop), kept in blocks of four work-items so that the four
//! lanes of the vector variant ([`simd`]) load and store a slot together. Inside a region,
//! values live in registers.
//!
//! **Semantics.** The IR's rules as the evaluator implements them: wrapping integer
//! arithmetic, masked shift amounts, division by zero an error (`MIN / -1` wraps), saturating
//! float-to-integer casts, and every transcendental built-in through the same Rust function
//! the evaluator calls (`ir::eval::Float`), so the compiled backend and the interpreter give
//! the same bits. Every access is bounds-checked with the interpreter's error, unless
//! [`crate::ir::ranges`] proves it in bounds (then it has no test; proofs that hold given a
//! test of the launch's arguments are taken by a copy of the loop or region that tested it);
//! a `loop` polls the launch's cancel flag.
//!
//! **Files.** This file holds the program and the interface between compiled code and Rust
//! (the [`Env`] a region reads, the [`Fault`] it reports, the fault [`Site`]s). [`plan`] cuts
//! the kernel into regions and lays out the records; [`lower`] emits a region's function and
//! its statements, [`expr`] its expressions, [`simd`] the four-lane variant of every region
//! of a kernel of 32-bit values (of a kernel with vector types, of its [`split`] into
//! components, with its own [`Plan`], which the group level of its launches walks) (and the eight-lane one of a one-region kernel of 32-bit
//! values); [`run`] launches the program and runs the group level, giving each thread its own
//! copy of the buffers that [`privatize`] finds no work-item reads; [`helpers`] holds the Rust
//! functions compiled code calls.
//!
//! **Compile time.** [`JitProgram::compile`] compiles the scalar code only. The vector
//! variant costs several times as much (matmul's tiled kernel: every region again, each access
//! with its lane-by-lane fallback), so it is compiled by the first launch whose work-groups
//! can use it, once (a `OnceLock` on the program; concurrent launches wait for it), into a
//! module and fault-site list of its own.

mod expr;
mod helpers;
mod lower;
mod plan;
mod privatize;
mod run;
mod sched;
mod simd;
mod split;

use crate::error::{Error, Result};
use crate::ir::{self, Mem, Scalar, ValidFunction};
use plan::Plan;
use std::sync::atomic::AtomicBool;
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
    /// Index into the sites of the variant that ran ([`Variant`]).
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
    /// The buffer parameters (a bit each) this worker keeps a copy of ([`privatize`]): their
    /// atomics are plain loads and stores on the copy.
    private: u32,
    fault: *mut Fault,
    stop: *const crate::cpu::Stop,
    cancel: *const AtomicBool,
    program: *const JitProgram,
    /// A panic of a stub's body, kept until the launch reports it.
    panic: *mut Option<String>,
    /// The work-group's index in `0..total` (what [`crate::cpu::Stop`] compares).
    index: usize,
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

// Here, not in `runtime/kernel.rs`: `runtime` may not use `cpu` (`tests/layers.rs`), and an
// inherent `impl` may live in any module of the crate.
impl crate::Kernel {
    /// Whether the compiled CPU backend (`cpu`) has a vector variant of this kernel, which
    /// runs four work-items per iteration in SIMD lanes (on launches whose work-groups' size
    /// in dimension 0 is a multiple of four; others run the scalar code): `Ok(())`, or the
    /// first reason it runs one work-item at a time, in words (`"a private array `acc`"`,
    /// `"a local atomic in a kernel with barriers or collectives"`, `"the buffer `x` of f16"`). A
    /// kernel that is slow on `cpu` may be so for this reason.
    pub fn cpu_vector_variant(&self) -> std::result::Result<(), String> {
        let s = vector_kernel(self.ir())?;
        vector_reason(s.as_ref().map_or(self.ir(), |s| &s.g))
    }

    /// Whether the compiled CPU backend (`cpu`) has an eight-lane variant of this kernel,
    /// which runs eight work-items per iteration as two SIMD vectors, so that their
    /// dependency chains overlap (on launches whose work-groups' size in dimension 0 is a
    /// multiple of eight; a multiple of four runs the four-lane variant): `Ok(())`, or the
    /// first reason it has not, in words (`"barriers or collectives"`, `"a value of f64"`).
    pub fn cpu_eight_lane_variant(&self) -> std::result::Result<(), String> {
        let s = vector_kernel(self.ir())?;
        let g = s.as_ref().map_or(self.ir(), |s| &s.g);
        vector_reason(g)?;
        match simd::wide_reason(g) {
            None => Ok(()),
            Some(why) => Err(why),
        }
    }
}

/// Whether the kernel the vector variant compiles (`g`, [`vector_kernel`]'s) has it, or why
/// not ([`simd::scalar_reason`]).
fn vector_reason(g: &ir::Function) -> std::result::Result<(), String> {
    match simd::scalar_reason(g) {
        None => Ok(()),
        Some(why) => Err(why),
    }
}

/// The kernel the vector variant compiles: `None` for `f` itself, or `f` with its vector
/// types split into components ([`split`]) where it has any; or why it cannot be split.
fn vector_kernel(f: &ir::Function) -> std::result::Result<Option<split::Split>, String> {
    if split::has_vectors(f) {
        split::split(f).map(Some)
    } else {
        Ok(None)
    }
}

/// A kernel compiled to native code.
pub(crate) struct JitProgram {
    decls: super::Decls,
    plan: Plan,
    /// The scalar code: one function per region, and its fault sites.
    scalar: Variant,
    /// The four-lane variant ([`simd`]) of a kernel that has one (and its eight-lane one, where
    /// it has that too), compiled at the first launch
    /// that can use it ([`JitProgram::variant`]).
    vector: Option<LazyVector>,
    stubs: ir::IdVec<ir::StubId, ir::StubDecl>,
}

/// One compiled variant of a kernel's regions: their functions, the fault sites their code
/// names (site 0 is [`Site::Stopped`]) and the module that owns the code.
struct Variant {
    regions: Vec<RegionFn>,
    sites: Vec<Site>,
    _code: Code,
}

/// The vector variant of a kernel, compiled once, by the first launch whose work-groups it
/// fits (a kernel launched only with other sizes, or compiled and never launched, does not
/// pay for it: it costs several times the scalar code's compile time).
struct LazyVector {
    /// The kernel it compiles: the program's, or that with its vector types split
    /// ([`split`]).
    f: ir::Function,
    /// The regions and records of a split kernel (`None`: the program's).
    plan: Option<Plan>,
    disasm: bool,
    code: OnceLock<std::result::Result<Variant, String>>,
    /// Whether the kernel has the eight-lane variant too ([`simd::wide_reason`]).
    wide: bool,
    /// The eight-lane variant, compiled by the first launch whose work-groups' size in
    /// dimension 0 is a multiple of eight.
    code8: OnceLock<std::result::Result<Variant, String>>,
}

/// The host's instruction set, detected once.
fn isa() -> std::result::Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
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
}

impl JitProgram {
    /// Compiles a validated function's scalar code (the vector variant, where the kernel has
    /// one, waits for a launch that uses it); `disasm` prints each region's Cranelift IR and
    /// machine code ([`crate::Settings::cpu_disasm`]).
    pub(crate) fn compile(vf: &ValidFunction, disasm: bool) -> Result<JitProgram> {
        let f = vf.function();
        let decls = super::Decls::new(f)?;
        let plan = Plan::new(f);
        let scalar = Variant::compile(f, &plan, disasm, 1).map_err(|message| Error::Backend {
            backend: "cpu",
            message,
        })?;
        // The kernel the vector variant compiles (with its own plan where it is the split),
        // where it has the variant.
        let kernel = match vector_kernel(f) {
            Ok(None) => simd::scalar_reason(f).is_none().then(|| (f.clone(), None)),
            Ok(Some(s)) => simd::scalar_reason(&s.g).is_none().then(|| {
                let mut plan = Plan::new(&s.g);
                plan.local_parts = s.locals;
                plan.private_parts = s.privates;
                (s.g, Some(plan))
            }),
            Err(_) => None,
        };
        let vector = kernel.map(|(g, plan)| LazyVector {
            wide: simd::wide_reason(&g).is_none(),
            f: g,
            plan,
            disasm,
            code: OnceLock::new(),
            code8: OnceLock::new(),
        });
        Ok(JitProgram {
            decls,
            vector,
            plan,
            scalar,
            stubs: f.stubs.clone(),
        })
    }

    /// Whether the kernel has a four-lane variant ([`simd`]), used by launches whose
    /// work-groups' first dimension is a multiple of four.
    #[cfg(test)]
    pub(crate) fn has_vector_variant(&self) -> bool {
        self.vector.is_some()
    }

    /// The variant a launch with work-groups of `local` runs, with the plan its group level
    /// walks: the eight-lane variant when the
    /// kernel has one and `local[0]` is a multiple of eight, else the four-lane variant when
    /// the kernel has one and `local[0]` is a multiple of four (each compiled here by the
    /// first such launch; concurrent launches wait for it), else the scalar code.
    fn variant(&self, local: [usize; 3]) -> Result<(&Variant, &Plan)> {
        let (v, code, lanes) = match &self.vector {
            Some(v) if v.wide && local[0].is_multiple_of(2 * simd::LANES as usize) => {
                (v, &v.code8, 2 * simd::LANES)
            }
            Some(v) if local[0].is_multiple_of(simd::LANES as usize) => (v, &v.code, simd::LANES),
            _ => return Ok((&self.scalar, &self.plan)),
        };
        let plan = v.plan.as_ref().unwrap_or(&self.plan);
        code.get_or_init(|| Variant::compile(&v.f, plan, v.disasm, lanes))
            .as_ref()
            .map(|x| (x, plan))
            .map_err(|message| Error::Backend {
                backend: "cpu",
                message: message.clone(),
            })
    }
}

impl Variant {
    fn compile(
        f: &ir::Function,
        plan: &Plan,
        disasm: bool,
        lanes: u32,
    ) -> std::result::Result<Variant, String> {
        let mut sites = vec![Site::Stopped];
        let (code, regions) = lower::compile(f, plan, isa()?, &mut sites, disasm, lanes)
            .map_err(|message| format!("compiling kernel `{}`: {message}", f.name))?;
        // A split kernel's component arrays are the user's arrays to the user.
        for s in &mut sites {
            if let Site::OutOfBounds { mem, .. } = s {
                *mem = split::Split::site_mem(&plan.local_parts, &plan.private_parts, *mem);
            }
        }
        Ok(Variant {
            regions,
            sites,
            _code: Code(Some(code)),
        })
    }
}

/// Which kernels get the four-lane variant ([`simd`]), and when it is compiled: at the first
/// launch whose work-groups can use it, not with the scalar code (here, not in a file of its own:
/// `tests/layers.rs` lets a file's last `mod tests` use the builder).
#[cfg(test)]
mod tests {
    use super::JitProgram;
    use crate::prelude::*;

    /// A tiled matrix product with two local arrays and barriers in a loop (the `matmul`
    /// benchmark's shape, 8x8 tiles).
    fn tiled() -> Kernel {
        Kernel::build("tiled", |k| {
            let a = k.read::<f32>("a");
            let b = k.read::<f32>("b");
            let c = k.write::<f32>("c");
            let n = k.scalar::<u32>("n");
            let at = k.local_array::<f32>("at", 64);
            let bt = k.local_array::<f32>("bt", 64);
            let (tx, ty) = (local_id(0), local_id(1));
            let col = group_id(0) * 8u32 + tx;
            let row = group_id(1) * 8u32 + ty;
            let mut acc = var_named("acc", 0.0f32);
            for_range(0u32, (n + 7u32) / 8u32, |t| {
                at.set(ty * 8u32 + tx, a.at(row * n + t * 8u32 + tx));
                bt.set(ty * 8u32 + tx, b.at((t * 8u32 + ty) * n + col));
                barrier_local();
                for p in 0..8u32 {
                    acc += at.at(ty * 8u32 + p) * bt.at(p * 8u32 + tx);
                }
                barrier_local();
            });
            c.set(row * n + col, acc.get());
        })
        .unwrap()
    }

    /// A group-level loop yields its thread only where it may wait for another work-group:
    /// where it reads or updates a buffer atomically, not a local array.
    #[test]
    fn only_loops_that_poll_a_buffer_may_be_waits() {
        let waits = |global: bool| {
            let k = Kernel::build("waits", |k| {
                let flags = k.read_write::<u32>("flags");
                let tile = k.local_array::<u32>("tile", 8);
                loop_(|| {
                    barrier_local();
                    let seen = if global {
                        flags.atomic_load(0u32)
                    } else {
                        tile.atomic_load(0u32)
                    };
                    if_(seen.eq(1u32), break_);
                });
            })
            .unwrap();
            let body = &k.ir().body;
            let crate::ir::Stmt::Loop { body, .. } = &body[body.len() - 1] else {
                panic!("no loop last in {}", k.ir());
            };
            super::plan::polls_buffers(body)
        };
        assert!(waits(true));
        assert!(!waits(false));
    }

    fn compile(k: &Kernel) -> JitProgram {
        JitProgram::compile(k.valid_function(), false).unwrap()
    }

    #[test]
    fn the_vector_variant_waits_for_a_launch_that_uses_it() {
        let p = compile(&tiled());
        assert!(p.has_vector_variant());
        let v = p.vector.as_ref().unwrap();
        assert!(v.code.get().is_none(), "compiled with the scalar code");
        // Work-groups of 6 run the scalar code and compile nothing.
        assert!(std::ptr::eq(p.variant([6, 8, 1]).unwrap().0, &p.scalar));
        assert!(v.code.get().is_none());
        let x = p.variant([8, 8, 1]).unwrap().0 as *const _;
        assert!(!std::ptr::eq(x, &p.scalar));
        assert_eq!(
            x,
            p.variant([4, 2, 1]).unwrap().0 as *const _,
            "compiled once"
        );
    }

    #[test]
    fn the_vector_variant_is_compiled_once_by_concurrent_launches() {
        let p = compile(&tiled());
        let ptrs: Vec<usize> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| p.variant([8, 8, 1]).unwrap().0 as *const _ as usize))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ptrs.iter().all(|&x| x == ptrs[0]));
    }

    /// The compile times of the two variants of the tiled kernel (printed, not asserted: run with
    /// `--nocapture` in a release build to see what a launch that vectorizes adds).
    #[test]
    fn compile_times_of_the_two_variants() {
        let k = tiled();
        let t = std::time::Instant::now();
        let p = compile(&k);
        let scalar = t.elapsed();
        let t = std::time::Instant::now();
        p.variant([8, 8, 1]).unwrap();
        let vector = t.elapsed();
        eprintln!("tiled: scalar code {scalar:?}, vector variant {vector:?}");
    }
}
