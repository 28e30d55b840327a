//! The IR as users and backends see it: its text form, the validator, the optimization passes
//! (constant folding through the shared evaluator, dead-code elimination, unrolling), interning,
//! and staging (Rust values captured by a kernel body are compile-time constants, and the
//! device compiles each distinct kernel once).

use std::sync::{Mutex, MutexGuard};
use strata::builder::{ScalarType, Value};
use strata::ir::{self, passes, Literal, ParamKind, Scalar, Stmt, Type};
use strata::prelude::*;

/// Tests of this file that launch kernels take this lock, so that `compile_count` deltas are
/// not disturbed by compilations of other tests running in parallel.
static DEVICE: Mutex<()> = Mutex::new(());

fn cpu() -> (MutexGuard<'static, ()>, Device, Queue) {
    let guard = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let d = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&d).unwrap();
    (guard, d, q)
}

fn lines_with(text: &str, pat: &str) -> usize {
    text.lines().filter(|l| l.contains(pat)).count()
}

// ---------------------------------------------------------------------------------------------
// Text form

#[test]
fn text_form_of_saxpy() {
    let k = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y").expect_len(8);
        let i = global_id(0).named("i");
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .unwrap();
    let t = k.ir_text();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0], "kernel saxpy(a: f32, x: global read [f32], y: global read_write [f32; 8]) {",
        "{t}"
    );
    assert_eq!(lines.last(), Some(&"}"), "{t}");
    assert!(t.contains("  let i_0: u32 = global_id(0)\n"), "{t}");
    assert!(t.contains("  if (i_0 < len(x)) {\n"), "{t}");
    assert_eq!(lines_with(t, "load "), 2, "{t}");
    assert!(t.contains(": f32 = x[i_0]"), "{t}");
    assert!(t.contains(": f32 = y[i_0]"), "{t}");
    let store = lines.iter().find(|l| l.contains("store")).expect(t);
    assert!(
        store.trim_start().starts_with("store y[i_0] = ((a * "),
        "{store}"
    );
    // The store is nested inside the if.
    assert!(store.starts_with("    store"), "{t}");
    // The text is the kernel's Display and its cache key.
    assert_eq!(k.ir().to_string(), t);
}

#[test]
fn text_form_of_loops_locals_and_collectives() {
    let k = Kernel::build("misc", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 64);
        let l = local_id(0);
        tile.set(l, l);
        barrier_local();
        let mut acc = var_named("acc", 0u32);
        for_range(0u32, l, |j| acc += tile.at(j));
        let s = group_reduce_add(acc.get());
        out.set(global_id(0), s);
    })
    .unwrap();
    let t = k.ir_text();
    for want in [
        "  local tile: [u32; 64]\n",
        "  private acc: u32\n",
        "barrier(local)",
        "for'0 i_",
        " in 0u32..local_id(0) step 1u32 {",
        "group_reduce_add(",
        "store out[global_id(0)] = ",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
}

// ---------------------------------------------------------------------------------------------
// Validator

fn lit_u32(f: &mut ir::Function, v: u32) -> ir::ExprId {
    f.exprs.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::U32, v as u64)),
        Type::U32,
    )
}

#[test]
fn validator_collects_every_error_with_its_location() {
    let mut f = ir::Function::new("bad kernel");
    f.params.push(ir::Param {
        name: "out".into(),
        kind: ParamKind::Buffer {
            elem: strata::ir::Elem::Value(Type::F32),
            access: ir::Access::Write,
            len: None,
        },
    });
    let zero = lit_u32(&mut f, 0);
    let one = lit_u32(&mut f, 1);
    let half = f.exprs.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::F32, 0.5f32.to_bits() as u64)),
        Type::F32,
    );
    // u32 + f32: operands of different types.
    let mixed = f
        .exprs
        .intern(ir::Expr::Binary(ir::BinaryOp::Add, one, half), Type::U32);
    let cond = f
        .exprs
        .intern(ir::Expr::Binary(ir::BinaryOp::Lt, zero, one), Type::BOOL);
    // A value defined inside an `if` and used after it.
    let inner = f.new_value(Type::U32, Some("inner".into()));
    let inner_e = f.exprs.intern(ir::Expr::Value(inner), Type::U32);
    let loaded = f.new_value(Type::F32, None);
    let counter = f.new_value(Type::U32, Some("i".into()));
    f.loop_count = 1;
    f.body = vec![
        Stmt::If {
            cond,
            then: vec![Stmt::Let {
                value: inner,
                expr: one,
            }],
            otherwise: vec![Stmt::Continue(ir::LoopId::new(3))],
        },
        Stmt::Store {
            mem: ir::Mem::Buffer(ir::ParamId::new(0)),
            index: inner_e,
            value: half,
            at: strata::ir::SourceLoc::NONE,
        },
        Stmt::Load {
            value: loaded,
            mem: ir::Mem::Buffer(ir::ParamId::new(0)),
            index: zero,
            at: strata::ir::SourceLoc::NONE,
        },
        Stmt::For {
            id: ir::LoopId::new(0),
            var: counter,
            start: zero,
            end: one,
            step: zero,
            body: vec![],
        },
    ];
    let errs = ir::validate(f).unwrap_err();
    let want: Vec<(&str, &str)> = vec![
        ("kernel", "kernel name `bad kernel` is not an identifier"),
        (
            &format!("expression %{mixed}"),
            "operands of `+` have different types u32 and f32",
        ),
        (
            "body[0].else[0]",
            "continue outside of the loop it names (loop 3)",
        ),
        (
            "body[1]",
            "uses value `inner` (%v0) outside the block that defines it",
        ),
        (
            "body[2]",
            "loads from buffer `out`, which is declared write-only",
        ),
        ("body[3]", "for loop step is zero"),
    ]
    .into_iter()
    .map(|(l, m)| (l.to_string().leak() as &str, m))
    .collect();
    let text = errs.to_string();
    assert_eq!(errs.kernel, "bad kernel");
    assert_eq!(errs.errors.len(), want.len(), "{text}");
    for (loc, m) in &want {
        assert!(
            errs.errors
                .iter()
                .any(|e| e.location.starts_with(loc) && e.message.contains(m)),
            "no error at {loc} saying {m:?}:\n{text}"
        );
    }
    assert!(
        text.starts_with("kernel `bad kernel` is invalid (6 errors):"),
        "{text}"
    );
    assert!(
        text.contains("\n  at body[2]: loads from buffer `out`"),
        "{text}"
    );
}

#[test]
fn validator_checks_the_integer_argument_of_ldexp_and_the_result_of_ilogb() {
    let mut f = ir::Function::new("mixed");
    f.params.push(ir::Param {
        name: "out".into(),
        kind: ParamKind::Buffer {
            elem: strata::ir::Elem::Value(Type::F32),
            access: ir::Access::Write,
            len: None,
        },
    });
    let zero = lit_u32(&mut f, 0);
    let x = f.exprs.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::F32, 1.5f32.to_bits() as u64)),
        Type::F32,
    );
    // ldexp(f32, f32): the exponent must be i32.
    let bad = f
        .exprs
        .intern(ir::Expr::Math(ir::MathFn::Ldexp, vec![x, x]), Type::F32);
    // ilogb(f32) typed f32: its result is i32.
    let mistyped = f
        .exprs
        .intern(ir::Expr::Math(ir::MathFn::Ilogb, vec![x]), Type::F32);
    f.body = vec![
        Stmt::Store {
            mem: ir::Mem::Buffer(ir::ParamId::new(0)),
            index: zero,
            value: bad,
            at: strata::ir::SourceLoc::NONE,
        },
        Stmt::Store {
            mem: ir::Mem::Buffer(ir::ParamId::new(0)),
            index: zero,
            value: mistyped,
            at: strata::ir::SourceLoc::NONE,
        },
    ];
    let text = ir::validate(f).unwrap_err().to_string();
    assert!(
        text.contains("argument 2 of ldexp must be i32, got f32"),
        "{text}"
    );
    assert!(text.contains("i32"), "{text}");
    assert!(text.contains("(2 errors)"), "{text}");
}

#[test]
fn validator_checks_collective_scopes_and_operands() {
    let mut f = ir::Function::new("collectives");
    let x = lit_u32(&mut f, 7);
    let yes = f.exprs.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::Bool, 1)),
        Type::BOOL,
    );
    let group = |f: &mut ir::Function, op, scope, arg, source, ty| {
        let value = f.new_value(ty, None);
        Stmt::Group {
            value,
            op,
            scope,
            arg,
            source,
        }
    };
    use ir::{GroupOp, GroupScope};
    f.body = vec![
        // A shuffle of the work-group: shuffles are sub-group operations.
        group(
            &mut f,
            GroupOp::Shuffle,
            GroupScope::WorkGroup,
            x,
            Some(x),
            Type::U32,
        ),
        // A shuffle without its lane.
        group(
            &mut f,
            GroupOp::ShuffleXor,
            GroupScope::SubGroup,
            x,
            None,
            Type::U32,
        ),
        // A ballot of a u32, and a ballot whose result is typed bool (it is u32).
        group(
            &mut f,
            GroupOp::Ballot,
            GroupScope::SubGroup,
            x,
            None,
            Type::U32,
        ),
        group(
            &mut f,
            GroupOp::Ballot,
            GroupScope::SubGroup,
            yes,
            None,
            Type::BOOL,
        ),
        // A well-formed one.
        group(
            &mut f,
            GroupOp::ShuffleDown,
            GroupScope::SubGroup,
            yes,
            Some(x),
            Type::BOOL,
        ),
    ];
    let text = ir::validate(f).unwrap_err().to_string();
    for want in [
        "at body[0]: group_shuffle exists for sub-groups only",
        "at body[1]: a second operand is given exactly for broadcast and the shuffles, not sub_group_shuffle_xor",
        "at body[2]: sub_group_ballot does not take a u32",
        "(4 errors)",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    assert!(!text.contains("body[4]"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Constant folding

#[test]
fn folding_a_constant_subexpression() {
    let k = Kernel::build("fold", |k| {
        let x = k.scalar::<u32>("x");
        let out = k.write::<u32>("out");
        out.set(0u32, (lit(2u32) + lit(3u32)) * x);
    })
    .unwrap();
    let t = k.ir_text();
    assert!(t.contains("store out[0u32] = (5u32 * x)"), "{t}");
    assert!(!t.contains("2u32") && !t.contains("3u32"), "{t}");

    // The pass on its own, on unoptimized IR built by hand: out[0] = (2 + 3) * x.
    let mut f = ir::Function::new("fold_by_hand");
    f.params.push(ir::Param {
        name: "x".into(),
        kind: ParamKind::Scalar(Type::U32),
    });
    f.params.push(ir::Param {
        name: "out".into(),
        kind: ParamKind::Buffer {
            elem: strata::ir::Elem::Value(Type::U32),
            access: ir::Access::Write,
            len: None,
        },
    });
    let zero = lit_u32(&mut f, 0);
    let two = lit_u32(&mut f, 2);
    let three = lit_u32(&mut f, 3);
    let x = f
        .exprs
        .intern(ir::Expr::Param(ir::ParamId::new(0)), Type::U32);
    let sum = f
        .exprs
        .intern(ir::Expr::Binary(ir::BinaryOp::Add, two, three), Type::U32);
    let prod = f
        .exprs
        .intern(ir::Expr::Binary(ir::BinaryOp::Mul, sum, x), Type::U32);
    f.body = vec![Stmt::Store {
        mem: ir::Mem::Buffer(ir::ParamId::new(1)),
        index: zero,
        value: prod,
        at: strata::ir::SourceLoc::NONE,
    }];
    assert!(f
        .to_string()
        .contains("store out[0u32] = ((2u32 + 3u32) * x)"));
    let folded = passes::fold_constants(f);
    assert!(
        folded.to_string().contains("store out[0u32] = (5u32 * x)"),
        "{folded}"
    );
    // After dead-code elimination the arena holds only what is used: 0, 5, x and 5 * x.
    let compact = passes::eliminate_dead_code(folded);
    assert_eq!(compact.exprs.len(), 4, "{compact}");
    ir::validate(compact).unwrap();
}

/// Builds `f` once over literals (folded at build time) and once over scalar parameters
/// (computed by the backend at run time), and checks that both agree bit for bit with each
/// other and with `host`, computed by Rust.
fn fold_agrees<T, R>(a: T, b: T, f: impl Fn(Expr<T>, Expr<T>) -> Expr<R>, host: R)
where
    T: ScalarType + std::fmt::Debug,
    R: Value + std::fmt::Debug,
{
    let folded = Kernel::build("folded", |k| {
        let out = k.write::<R>("out");
        out.set(0u32, f(lit(a), lit(b)));
    })
    .unwrap();
    // Folding left a literal to store.
    let store = folded
        .ir()
        .body
        .iter()
        .find_map(|s| match s {
            Stmt::Store { value, .. } => Some(*value),
            _ => None,
        })
        .expect("a store");
    let lit = folded.ir().exprs.literal(store);
    assert!(lit.is_some(), "not folded:\n{}", folded.ir_text());

    let runtime = Kernel::build("runtime", |k| {
        let x = k.scalar::<T>("x");
        let y = k.scalar::<T>("y");
        let out = k.write::<R>("out");
        out.set(0u32, f(x, y));
    })
    .unwrap();
    assert!(runtime.ir_text().contains("x"), "{}", runtime.ir_text());

    let (_guard, d, q) = cpu();
    let o1 = Buffer::<R>::new(&d, 1).unwrap();
    let o2 = Buffer::<R>::new(&d, 1).unwrap();
    folded.launch(&q, NdRange::new(1), args![&o1]).unwrap();
    runtime
        .launch(&q, NdRange::new(1), args![a, b, &o2])
        .unwrap();
    let (r1, r2) = (q.read(&o1).unwrap()[0], q.read(&o2).unwrap()[0]);
    let bits = |v: &R| bytemuck::bytes_of(v).to_vec();
    assert_eq!(
        bits(&r1),
        bits(&r2),
        "({a:?}, {b:?}): folded {r1:?}, run time {r2:?}"
    );
    assert_eq!(
        bits(&r1),
        bits(&host),
        "({a:?}, {b:?}): {r1:?}, Rust {host:?}"
    );
    // And the literal in the IR is that value.
    let l = lit.unwrap();
    assert_eq!(
        &l.bits.to_le_bytes()[..std::mem::size_of::<R>()],
        &bits(&host)[..]
    );
}

#[test]
fn folding_agrees_with_the_backend_on_wraparound() {
    fold_agrees(200u8, 100, |x, y| x + y, 200u8.wrapping_add(100));
    fold_agrees(i32::MAX, 1, |x, y| x + y, i32::MAX.wrapping_add(1));
    fold_agrees(i32::MIN, 1, |x, y| x - y, i32::MIN.wrapping_sub(1));
    fold_agrees(i64::MAX, 3, |x, y| x * y, i64::MAX.wrapping_mul(3));
    fold_agrees(i32::MIN, -1, |x, y| x / y, i32::MIN.wrapping_div(-1));
    fold_agrees(i32::MIN, -1, |x, y| x % y, i32::MIN.wrapping_rem(-1));
    fold_agrees(-7i32, 2, |x, y| x / y, -7 / 2);
    fold_agrees(-7i32, 2, |x, y| x % y, -7 % 2);
    fold_agrees(i16::MIN, 0, |x, _| -x, i16::MIN.wrapping_neg());
    fold_agrees(0x0fu8, 0, |x, _| !x, !0x0fu8);
}

#[test]
fn folding_agrees_with_the_backend_on_shifts() {
    fold_agrees(1u32, 33, |x, y| x << y, 1u32.wrapping_shl(33));
    fold_agrees(
        0x8000_0000u32,
        35,
        |x, y| x >> y,
        0x8000_0000u32.wrapping_shr(35),
    );
    fold_agrees(-8i32, 1, |x, y| x >> y, -8i32 >> 1);
    fold_agrees(-1i64, 65, |x, y| x >> y, (-1i64).wrapping_shr(65));
    fold_agrees(1u16, 17, |x, y| x << y, 1u16.wrapping_shl(17));
    fold_agrees(0x81u8, 3, |x, y| x.rotate(y), 0x81u8.rotate_left(3));
}

#[test]
fn folding_agrees_with_the_backend_on_casts() {
    fold_agrees(1e10f32, 0.0, |x, _| x.cast::<i32>(), 1e10f32 as i32);
    fold_agrees(-1e10f32, 0.0, |x, _| x.cast::<u32>(), -1e10f32 as u32);
    fold_agrees(
        f32::NAN,
        0.0,
        |x, _| x.cast::<i32>(),
        std::hint::black_box(f32::NAN) as i32,
    );
    fold_agrees(-2.7f32, 0.0, |x, _| x.cast::<i8>(), -2.7f32 as i8);
    fold_agrees(-1i32, 0, |x, _| x.cast::<u32>(), -1i32 as u32);
    fold_agrees(-3i32, 0, |x, _| x.cast::<u8>(), -3i32 as u8);
    fold_agrees(300u32, 0, |x, _| x.cast::<u8>(), 300u32 as u8);
    fold_agrees(
        16_777_217u32,
        0,
        |x, _| x.cast::<f32>(),
        16_777_217u32 as f32,
    );
    fold_agrees(u64::MAX, 0, |x, _| x.cast::<f64>(), u64::MAX as f64);
    fold_agrees(0.1f64, 0.0, |x, _| x.cast::<f32>(), 0.1f64 as f32);
    fold_agrees(0.1f32, 0.2, |x, y| x + y, 0.1f32 + 0.2f32);
}

#[test]
fn folding_agrees_with_the_backend_on_bitcasts() {
    fold_agrees(
        65535.0f32,
        0.0,
        |x, _| x.bitcast::<i32>(),
        65535.0f32.to_bits() as i32,
    );
    fold_agrees(-0.0f32, 0.0, |x, _| x.bitcast::<u32>(), (-0.0f32).to_bits());
    fold_agrees(
        0x7fc0_0001u32,
        0,
        |x, _| x.bitcast::<f32>(),
        f32::from_bits(0x7fc0_0001),
    );
    fold_agrees(
        -1i64,
        0,
        |x, _| x.bitcast::<f64>(),
        f64::from_bits(u64::MAX),
    );
    fold_agrees(
        2.5f64,
        0.0,
        |x, _| x.bitcast::<i64>(),
        2.5f64.to_bits() as i64,
    );
}

/// Two stubs of one name whose CPU bodies differ make two kernels (the kernel caches must not
/// hand the second the first one's body); the same stub used again is the same kernel.
#[test]
fn stubs_with_other_cpu_bodies_are_other_kernels() {
    let (_guard, d, q) = cpu();
    let src = "uint f(uint x) { return x + 1u; }";
    let plus = Stub::<(u32,), u32>::new("f")
        .source("opencl", src)
        .cpu(|x: u32| x + 1);
    let times = Stub::<(u32,), u32>::new("f")
        .source("opencl", src)
        .cpu(|x: u32| x * 10);
    let run = |s: &Stub<(u32,), u32>| {
        let k = Kernel::build("stub_body", |k| {
            let out = k.write::<u32>("out");
            out.set(0u32, s.call((lit(5u32),)));
        })
        .unwrap();
        let o = Buffer::<u32>::new(&d, 1).unwrap();
        k.launch(&q, NdRange::new(1), args![&o]).unwrap();
        q.read(&o).unwrap()[0]
    };
    assert_eq!(run(&plus), 6);
    assert_eq!(run(&times), 50);
    let before = d.compile_count();
    assert_eq!(run(&plus), 6);
    assert_eq!(
        d.compile_count(),
        before,
        "the same stub again is a cache hit"
    );
}

// ---------------------------------------------------------------------------------------------
// Dead-code elimination

#[test]
fn dead_code_is_removed() {
    let k = Kernel::build("dead", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        let _unused = (i * 3u32 + 7u32).named("unused");
        let used = (i + 1u32).named("used");
        x.set(i, used);
        return_();
        x.set(i, 99u32);
        let _after = (i * 5u32).named("after");
    })
    .unwrap();
    let t = k.ir_text();
    assert!(!t.contains("unused") && !t.contains("after"), "{t}");
    assert!(t.contains("let used_"), "{t}");
    assert_eq!(lines_with(t, "store"), 1, "{t}");
    assert!(!t.contains("99u32"), "{t}");
    let (_guard, d, q) = cpu();
    let x = Buffer::<u32>::new(&d, 8).unwrap();
    k.launch(&q, NdRange::new(8), args![&x]).unwrap();
    assert_eq!(q.read(&x).unwrap(), (1..=8).collect::<Vec<u32>>());
}

#[test]
fn dead_code_pass_on_hand_built_ir() {
    // let a = 1; let b = a + 1 (unused chain); store; return; store (unreachable)
    let mut f = ir::Function::new("dce");
    f.params.push(ir::Param {
        name: "out".into(),
        kind: ParamKind::Buffer {
            elem: strata::ir::Elem::Value(Type::U32),
            access: ir::Access::Write,
            len: None,
        },
    });
    let one = lit_u32(&mut f, 1);
    let zero = lit_u32(&mut f, 0);
    let a = f.new_value(Type::U32, Some("a".into()));
    let ae = f.exprs.intern(ir::Expr::Value(a), Type::U32);
    let b = f.new_value(Type::U32, Some("b".into()));
    let be = f
        .exprs
        .intern(ir::Expr::Binary(ir::BinaryOp::Add, ae, one), Type::U32);
    f.body = vec![
        Stmt::Let {
            value: a,
            expr: one,
        },
        Stmt::Let { value: b, expr: be },
        Stmt::Store {
            mem: ir::Mem::Buffer(ir::ParamId::new(0)),
            index: zero,
            value: one,
            at: strata::ir::SourceLoc::NONE,
        },
        Stmt::Return,
        Stmt::Store {
            mem: ir::Mem::Buffer(ir::ParamId::new(0)),
            index: one,
            value: one,
            at: strata::ir::SourceLoc::NONE,
        },
    ];
    let before = f.to_string();
    let g = passes::eliminate_dead_code(f);
    let after = g.to_string();
    assert!(
        before.contains("let a_0") && before.contains("let b_1"),
        "{before}"
    );
    // `b` is unused, which makes `a` unused: both go (the pass iterates).
    assert!(!after.contains("let "), "{after}");
    assert_eq!(lines_with(&after, "store"), 1, "{after}");
    assert!(after.contains("return"), "{after}");
    ir::validate(g).unwrap();
}

/// Adjacent `if`s on one condition become one (`if c { a } else { b }` then `if c { x } else
/// { y }`: `if c { a; x } else { b; y }`), so that what both compute is computed once (the
/// field operators' guarded writes of one point); after a side that returns, what the second
/// `if` adds to it is unreachable and dropped. A condition that calls a stub is evaluated as
/// often as written: those `if`s stay apart. The results are those of the `if`s as written.
#[test]
fn adjacent_ifs_on_one_condition_become_one() {
    let k = Kernel::build("merged_ifs", |k| {
        let x = k.read_write::<u32>("x");
        let n = k.scalar::<u32>("n");
        let i = global_id(0);
        if_(i.lt(n), || x.set(i, i * 3u32)).else_(|| x.set(i, 7u32));
        if_(i.lt(n), || x.set(i, x.at(i) + 1u32)).else_(|| x.set(i, x.at(i) * 2u32));
        if_(i.lt(n), || {
            x.set(i, x.at(i) + 100u32);
            return_();
        });
        if_(i.lt(n), || x.set(i, 0u32));
        x.set(i, x.at(i) + 1000u32);
    })
    .unwrap();
    let t = k.ir_text();
    assert_eq!(lines_with(t, "if ("), 1, "{t}");
    assert!(
        !t.contains("= 0u32"),
        "the store after the return is dropped: {t}"
    );
    let (_guard, d, q) = cpu();
    let x = Buffer::<u32>::new(&d, 8).unwrap();
    k.launch(&q, NdRange::new(8), args![&x, 5u32]).unwrap();
    let want: Vec<u32> = (0..8u32)
        .map(|i| if i < 5 { i * 3 + 1 + 100 } else { 14 + 1000 })
        .collect();
    assert_eq!(q.read(&x).unwrap(), want);

    let stub = Stub::<(u32,), u32>::new("g")
        .source("opencl", "uint g(uint x) { return x + 1u; }")
        .cpu(|x: u32| x + 1);
    let k = Kernel::build("stub_ifs", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(stub.call((i,)).lt(4u32), || x.set(i, 1u32));
        if_(stub.call((i,)).lt(4u32), || x.set(i, x.at(i) + 1u32));
    })
    .unwrap();
    let t = k.ir_text();
    assert_eq!(lines_with(t, "if ("), 2, "{t}");
}

/// Two `if`s on a condition whose expression shares its operands sixty levels deep (`c = c +
/// c`): merged, and the test for a stub in it visits each expression once (walked as a tree,
/// it took 31 s at 28 levels, and doubled with each level).
#[test]
fn adjacent_ifs_on_a_deeply_shared_condition_merge_at_once() {
    let k = Kernel::build("shared_condition", |k| {
        let x = k.read_write::<u32>("x");
        let n = k.scalar::<u32>("n");
        let i = global_id(0);
        let mut c = n;
        for _ in 0..60 {
            c = c + c;
        }
        if_(i.lt(c), || x.set(i, 1u32));
        if_(i.lt(c), || x.set(i, x.at(i) + 1u32));
    })
    .unwrap();
    let t = k.ir_text();
    assert_eq!(lines_with(t, "if ("), 1, "{t}");
}

// ---------------------------------------------------------------------------------------------
// Unrolling

fn sum4_kernel(with_break: bool) -> Kernel {
    Kernel::build("sum4", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let mut acc = var_named("acc", 0u32);
        for_range(0u32, 4u32, |j| {
            let v = x.at(i * 4u32 + j);
            if with_break {
                if_(v.eq(0u32), break_);
            }
            acc += v;
        });
        out.set(i, acc.get());
    })
    .unwrap()
}

#[test]
fn literal_loops_are_unrolled() {
    let xs: Vec<u32> = (0..32).map(|i| (i * 7) % 5).collect();
    for with_break in [false, true] {
        let k = sum4_kernel(with_break);
        let t = k.ir_text();
        if with_break {
            // A loop with a break of its own stays a loop.
            assert!(t.contains("for'"), "{t}");
            assert!(t.contains("break'"), "{t}");
            assert_eq!(lines_with(t, "= x["), 1, "{t}");
        } else {
            assert!(!t.contains("for'"), "{t}");
            assert_eq!(lines_with(t, "= x["), 4, "{t}");
            // The counter became the literals 0..4.
            for j in 1..4 {
                assert!(t.contains(&format!("{j}u32")), "{t}");
            }
        }
        let (_guard, d, q) = cpu();
        let x = Buffer::from_slice(&q, &xs).unwrap();
        let out = Buffer::<u32>::new(&d, 8).unwrap();
        k.launch(&q, NdRange::new(8), args![&x, &out]).unwrap();
        let want: Vec<u32> = xs
            .chunks(4)
            .map(|c| {
                if with_break {
                    c.iter().take_while(|&&v| v != 0).sum()
                } else {
                    c.iter().sum()
                }
            })
            .collect();
        assert_eq!(q.read(&out).unwrap(), want, "with_break = {with_break}");
    }
}

#[test]
fn long_or_dynamic_loops_are_not_unrolled() {
    let opts = passes::PassOptions::default();
    let trips = opts.unroll_max_trips as u32 + 1;
    let k = Kernel::build("long", |k| {
        let out = k.write::<u32>("out");
        let n = k.scalar::<u32>("n");
        let mut a = var(0u32);
        for_range(0u32, trips, |j| a += j);
        for_range(0u32, n, |j| a += j);
        out.set(global_id(0), a.get());
    })
    .unwrap();
    assert_eq!(lines_with(k.ir_text(), "for'"), 2, "{}", k.ir_text());
}

// ---------------------------------------------------------------------------------------------
// Interning

#[test]
fn identical_expressions_share_one_id() {
    let mut arena = ir::ExprArena::new();
    let a = arena.intern(ir::Expr::Builtin(ir::Builtin::GlobalId(0)), Type::U32);
    let two = arena.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::U32, 2)),
        Type::U32,
    );
    let p1 = arena.intern(ir::Expr::Binary(ir::BinaryOp::Mul, a, two), Type::U32);
    let len = arena.len();
    let p2 = arena.intern(ir::Expr::Binary(ir::BinaryOp::Mul, a, two), Type::U32);
    assert_eq!(p1, p2);
    assert_eq!(arena.len(), len);

    // Through the builder: rebuilding an expression gives the same id (Debug shows it), and a
    // new expression after the rebuild gets the next id, so the arena did not grow.
    Kernel::build("interning", |k| {
        let x = k.scalar::<u32>("x");
        let out = k.write::<u32>("out");
        let build = || (x * 2u32 + global_id(0)) ^ 5u32;
        let e1 = build();
        let probe1 = lit(123_456u32);
        let e2 = build();
        let probe2 = lit(654_321u32);
        assert_eq!(format!("{e1:?}"), format!("{e2:?}"));
        let id = |e: Expr<u32>| -> u32 {
            let s = format!("{e:?}");
            s.trim_start_matches("Expr(%")
                .trim_end_matches(')')
                .parse()
                .unwrap()
        };
        assert_eq!(id(probe2), id(probe1) + 1);
        out.set(0u32, e1 + e2 + probe1 + probe2);
    })
    .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Staging

/// A kernel that sums `factor` consecutive elements per work-item; the loop over `factor` is
/// plain Rust, run when the kernel is built, so each factor gives different IR.
fn staged(factor: u32, offset: f32) -> Kernel {
    Kernel::build("staged_sum", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let i = global_id(0);
        let mut acc = var::<f32>(offset);
        for u in 0..factor {
            acc += x.at(i * factor + u);
        }
        out.set(i, acc.get());
    })
    .unwrap()
}

/// A kernel whose expression DAG shares each step three times (the look-back scan's shape):
/// building and launching it is linear in its size. Keyed or printed as a tree it would be
/// 3^60 nodes (the look-back scan's 16 steps cost a second per launch that way, 2026-11-22).
#[test]
fn deeply_shared_expressions_build_and_run() {
    let (_guard, d, q) = cpu();
    let k = Kernel::build("shared_chain", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let mut a = x.at(i);
        for step in 0..60u32 {
            // `a` three times per step, never named.
            a = select::<u32>(a.gt(step), a + 1u32, a ^ step) + (a & 1u32);
        }
        out.set(i, a);
    })
    .unwrap();
    let xs: Vec<u32> = (0..64).map(|i| i * 37 % 101).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let out = Buffer::<u32>::new(&d, xs.len()).unwrap();
    k.launch(&q, NdRange::new(xs.len()), args![&x, &out])
        .unwrap();
    let want: Vec<u32> = xs
        .iter()
        .map(|&v| {
            let mut a = v;
            for step in 0..60u32 {
                a = (if a > step { a + 1 } else { a ^ step }) + (a & 1);
            }
            a
        })
        .collect();
    assert_eq!(q.read(&out).unwrap(), want);
    // The same recording again is the same kernel for the device's cache.
    let before = d.compile_count();
    let again = Kernel::build("shared_chain", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let mut a = x.at(i);
        for step in 0..60u32 {
            a = select::<u32>(a.gt(step), a + 1u32, a ^ step) + (a & 1u32);
        }
        out.set(i, a);
    })
    .unwrap();
    again
        .launch(&q, NdRange::new(xs.len()), args![&x, &out])
        .unwrap();
    assert_eq!(d.compile_count(), before, "found in the cache");
    // Its text names the shared steps once each (`$eN = ...` after the body) instead of
    // repeating them: short, and every named expression is defined.
    let text = k.ir_text();
    assert!(text.len() < 20_000, "{} bytes:\n{text}", text.len());
    assert!(text.contains("  where\n    $e"), "{text}");
    for r in text.split("$e").skip(1) {
        let n: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
        assert!(
            text.contains(&format!("    $e{n} = ")),
            "$e{n} undefined:\n{text}"
        );
    }
}

#[test]
fn staged_values_compile_once_per_value() {
    let (_guard, d, q) = cpu();
    let xs: Vec<f32> = (0..48).map(|i| i as f32 * 0.5).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let check = |k: &Kernel, factor: usize, offset: f32| {
        let n = xs.len() / factor;
        let out = Buffer::<f32>::new(&d, n).unwrap();
        k.launch(&q, NdRange::new(n), args![&x, &out]).unwrap();
        let want: Vec<f32> = xs
            .chunks(factor)
            .map(|c| c.iter().fold(offset, |a, &v| a + v))
            .collect();
        assert_eq!(q.read(&out).unwrap(), want, "factor {factor}");
    };

    let before = d.compile_count();
    let a = staged(4, 1.0);
    let b = staged(4, 1.0);
    assert_eq!(a.ir_text(), b.ir_text());
    check(&a, 4, 1.0);
    check(&b, 4, 1.0);
    check(&a, 4, 1.0);
    assert_eq!(
        d.compile_count() - before,
        1,
        "same staged value: one compile"
    );

    let c = staged(3, 1.0);
    assert_ne!(a.ir_text(), c.ir_text());
    check(&c, 3, 1.0);
    assert_eq!(
        d.compile_count() - before,
        2,
        "another factor: compiled again"
    );

    let e = staged(4, 2.5);
    check(&e, 4, 2.5);
    assert_eq!(
        d.compile_count() - before,
        3,
        "another constant: compiled again"
    );

    // Building the first one again hits the cache.
    check(&staged(4, 1.0), 4, 1.0);
    assert_eq!(d.compile_count() - before, 3);
}
