//! The Rust functions that compiled code calls: the transcendental and integer built-ins and
//! conversions through the evaluator's own code (so both CPU backends give the same bits),
//! the float atomics that compiled code does not do inline (min and max, through
//! [`semantics`](crate::cpu::semantics); the others are Cranelift instructions,
//! `lower::Gen::atomic_inline`), and stubs' CPU bodies (catching their panics).
//!
//! Each is `extern "C"` and takes and returns plain numbers or bits; compiled code passes a
//! built-in, scalar or atomic operation as its index in `MathFn::ALL`, `Scalar::ALL` or
//! [`ATOMIC_OPS`].

use super::Env;
use crate::ir::{self, eval::Num, Scalar};

/// `f(x)` for a one-argument `f32` built-in, with the evaluator's implementation.
pub(super) extern "C" fn math1_f32(f: u32, x: f32) -> f32 {
    <f32 as ir::eval::Float>::math1(ir::MathFn::ALL[f as usize], x)
}
pub(super) extern "C" fn math2_f32(f: u32, x: f32, y: f32) -> f32 {
    <f32 as ir::eval::Float>::math2(ir::MathFn::ALL[f as usize], x, y)
}
pub(super) extern "C" fn math3_f32(f: u32, x: f32, y: f32, z: f32) -> f32 {
    <f32 as ir::eval::Float>::math3(ir::MathFn::ALL[f as usize], x, y, z)
}
pub(super) extern "C" fn math1_f64(f: u32, x: f64) -> f64 {
    <f64 as ir::eval::Float>::math1(ir::MathFn::ALL[f as usize], x)
}
pub(super) extern "C" fn math2_f64(f: u32, x: f64, y: f64) -> f64 {
    <f64 as ir::eval::Float>::math2(ir::MathFn::ALL[f as usize], x, y)
}
pub(super) extern "C" fn math3_f64(f: u32, x: f64, y: f64, z: f64) -> f64 {
    <f64 as ir::eval::Float>::math3(ir::MathFn::ALL[f as usize], x, y, z)
}

pub(super) extern "C" fn math_int_f32(f: u32, x: f32, n: i32) -> f32 {
    <f32 as ir::eval::Float>::math_int(ir::MathFn::ALL[f as usize], x, n)
}
pub(super) extern "C" fn math_int_f64(f: u32, x: f64, n: i32) -> f64 {
    <f64 as ir::eval::Float>::math_int(ir::MathFn::ALL[f as usize], x, n)
}
pub(super) extern "C" fn to_int_f32(f: u32, x: f32) -> i32 {
    <f32 as ir::eval::Float>::to_int(ir::MathFn::ALL[f as usize], x)
}
pub(super) extern "C" fn to_int_f64(f: u32, x: f64) -> i32 {
    <f64 as ir::eval::Float>::to_int(ir::MathFn::ALL[f as usize], x)
}

/// An integer built-in on bits (zero-extended), through the evaluator's folding.
pub(super) extern "C" fn int_math(f: u32, s: u32, a: u64, b: u64, c: u64) -> u64 {
    let f = ir::MathFn::ALL[f as usize];
    let s = Scalar::ALL[s as usize];
    let args = [a, b, c].map(|x| ir::Literal::from_bits(s, x));
    ir::eval::fold_math(f, &args[..f.arity()]).bits
}

/// A conversion on bits, through the evaluator's folding.
pub(super) extern "C" fn cast_bits(from: u32, to: u32, bits: u64) -> u64 {
    let from = Scalar::ALL[from as usize];
    let to = Scalar::ALL[to as usize];
    ir::eval::fold_cast(ir::Literal::from_bits(from, bits), to).bits
}

/// An atomic read-modify-write of the element at `ptr` (of scalar `s`); returns the old bits.
/// Compiled code calls it for float min and max only; it does every operation.
///
/// # Safety
/// `ptr` points at a bounds-checked element of a buffer or local array.
pub(super) unsafe extern "C" fn atomic(ptr: *mut u8, s: u32, op: u32, v: u64, cmp: u64) -> u64 {
    use crate::cpu::semantics::{apply_atomic, atomic_rmw};
    let s = Scalar::ALL[s as usize];
    let op = ATOMIC_OPS[op as usize];
    crate::ir::eval::with_scalar!(s, T => {
        let v = T::from_lit(ir::Literal::from_bits(s, v));
        let c = T::from_lit(ir::Literal::from_bits(s, cmp));
        let old: T = unsafe { atomic_rmw::<T>(ptr, 0, |x| apply_atomic(op, x, v, Some(c))) };
        old.to_lit().bits
    })
}

pub(super) const ATOMIC_OPS: [ir::AtomicOp; 9] = [
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
pub(super) unsafe extern "C" fn stub(
    env: *const Env,
    n: u32,
    args: *const u64,
    out: *mut u64,
) -> u32 {
    let env = unsafe { &*env };
    let p = unsafe { &*env.program };
    let s = &p.stubs[ir::StubId::from_raw(n)];
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
