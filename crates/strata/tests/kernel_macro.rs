//! `#[kernel]`: kernels written as plain Rust functions, run on the CPU backend and compared
//! with the same kernels written with the builder.

use strata::builder::Float;
use strata::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] += a * x[i];
    }
}

#[kernel]
fn sq(x: f32) -> f32 {
    x * x
}

#[kernel]
fn map_f32(x: &[f32], #[write] out: &mut [f32], f: impl Fn(f32) -> f32) {
    let i = global_id(0);
    if i < x.len() {
        out[i] = f(x[i]);
    }
}

#[kernel]
fn sum_rows(#[stage] n: u32, x: &[f32], #[write] out: &mut [f32]) {
    let i = global_id(0);
    let mut acc = 0.0f32;
    for k in 0..n {
        acc += x[i * n + k];
    }
    out[i] = acc;
}

fn cpu() -> (Device, Queue) {
    let d = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&d).unwrap();
    (d, q)
}

#[test]
fn saxpy_runs_and_matches_builder_ir() {
    let (_d, q) = cpu();
    let k = saxpy::build().unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0]).unwrap();
    let y = Buffer::from_slice(&q, &[10.0f32, 20.0, 30.0]).unwrap();
    k.launch(&q, NdRange::new(3), 2.0, &x, &y).unwrap();
    assert_eq!(q.read(&y).unwrap(), vec![12.0, 24.0, 36.0]);
    let b = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .unwrap();
    assert_eq!(k.kernel().ir_text(), b.ir_text());
}

#[test]
fn generic_closure_stage() {
    let (_d, q) = cpu();
    let k32 = axpy::<f32>::build().unwrap();
    let k64 = axpy::<f64>::build().unwrap();
    let x = Buffer::from_slice(&q, &[1.0f64, 2.0]).unwrap();
    let y = Buffer::from_slice(&q, &[1.0f64, 1.0]).unwrap();
    k64.launch(&q, NdRange::new(2), 3.0, &x, &y).unwrap();
    assert_eq!(q.read(&y).unwrap(), vec![4.0, 7.0]);
    assert!(k32.kernel().ir_text().contains("f32"));
    let m = map_f32::build(sq).unwrap();
    let m2 = map_f32::build(|v| v * 2.0 + 1.0).unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0]).unwrap();
    let o = Buffer::<f32>::new(q.device(), 3).unwrap();
    m.launch(&q, NdRange::new(3), &x, &o).unwrap();
    assert_eq!(q.read(&o).unwrap(), vec![1.0, 4.0, 9.0]);
    m2.launch(&q, NdRange::new(3), &x, &o).unwrap();
    assert_eq!(q.read(&o).unwrap(), vec![3.0, 5.0, 7.0]);
    let s = sum_rows::build(4).unwrap();
    println!("{}", s.kernel().ir_text());
}

#[kernel]
fn swizzled(v: &[[f32; 4]], #[write] out: &mut [[f32; 4]], #[write] halves: &mut [[f32; 2]]) {
    let i = global_id(0);
    if i < v.len() {
        let a = v[i];
        let b = a.wzyx();
        let c = a.zyx();
        out[i] = vec4(
            b.x() + c.z(),
            a.yy().y(),
            a.swizzle([2, 2, 1]).x(),
            a.lo().y(),
        );
        halves[i] = a.odd();
    }
}

/// Swizzles and halves in `#[kernel]` are the builder's methods on values.
#[test]
fn swizzles_in_kernel_functions() {
    let (d, q) = cpu();
    let host: Vec<[f32; 4]> = (0..37)
        .map(|i| [i as f32, 2.0 * i as f32, -(i as f32), 0.5])
        .collect();
    let v = Buffer::from_slice(&q, &host).unwrap();
    let out = Buffer::<[f32; 4]>::new(&d, host.len()).unwrap();
    let halves = Buffer::<[f32; 2]>::new(&d, host.len()).unwrap();
    swizzled::build()
        .unwrap()
        .launch(&q, NdRange::new(host.len()), &v, &out, &halves)
        .unwrap()
        .wait()
        .unwrap();
    let want: Vec<[f32; 4]> = host
        .iter()
        .map(|a| [a[3] + a[0], a[1], a[2], a[1]])
        .collect();
    assert_eq!(q.read(&out).unwrap(), want);
    let want: Vec<[f32; 2]> = host.iter().map(|a| [a[1], a[3]]).collect();
    assert_eq!(q.read(&halves).unwrap(), want);
}

/// A swizzle naming a component the vector lacks is a build error at the caller's line.
#[test]
fn a_swizzle_past_the_vector_is_a_build_error_at_its_line() {
    let line = line!() + 3;
    let e = strata::Kernel::build("bad_swizzle", |_| {
        let v = vec3::<f32>(1.0f32, 2.0f32, 3.0f32);
        let _ = v.xw();
    })
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, strata::Error::InvalidKernel(_))
            && msg.contains("component 3 of a 3-vector")
            && msg.contains(&format!("kernel_macro.rs:{line}")),
        "{msg}"
    );
}

#[kernel]
fn swizzle_write(v: &[[f32; 4]], #[write] out: &mut [[f32; 4]]) {
    let i = global_id(0);
    if i < v.len() {
        let mut a = v[i];
        a.set_wx(a.xy());
        if a.y() > 3.0 {
            a.set_zy(vec2(a.y(), 0.0f32));
        }
        out[i] = a;
    }
}

/// `a.set_wx(..)` on a `let mut` device vector writes those components of the variable.
#[test]
fn swizzle_writes_in_kernel_functions() {
    let (d, q) = cpu();
    let host: Vec<[f32; 4]> = (0..21)
        .map(|i| [i as f32, 0.5 * i as f32, 7.0, -1.0])
        .collect();
    let v = Buffer::from_slice(&q, &host).unwrap();
    let out = Buffer::<[f32; 4]>::new(&d, host.len()).unwrap();
    swizzle_write::build()
        .unwrap()
        .launch(&q, NdRange::new(host.len()), &v, &out)
        .unwrap()
        .wait()
        .unwrap();
    let want: Vec<[f32; 4]> = host
        .iter()
        .map(|a| {
            let mut a = *a;
            (a[3], a[0]) = (a[0], a[1]);
            if a[1] > 3.0 {
                (a[2], a[1]) = (a[1], 0.0);
            }
            a
        })
        .collect();
    assert_eq!(q.read(&out).unwrap(), want);
}

/// A swizzle write naming a component twice is a build error at its line.
#[test]
fn a_swizzle_write_with_a_repeated_component_is_a_build_error() {
    let line = line!() + 3;
    let e = strata::Kernel::build("bad_swizzle_write", |_| {
        let a = var(vec4::<f32>(1.0f32, 2.0f32, 3.0f32, 4.0f32));
        a.set_swizzle([1, 1], vec2::<f32>(0.0f32, 1.0f32));
    })
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("a swizzle write names component 1 twice ([1, 1])")
            && msg.contains(&format!("kernel_macro.rs:{line}")),
        "{msg}"
    );
}

#[kernel]
fn odd_product(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let v = x[i] | 1u32;
    out[i] = group_reduce_with(v, |a, b| a * b);
    gather_with(v, 1u32, |a, b| a * b);
}

#[test]
fn user_defined_reductions_in_kernel_functions() {
    let (_d, q) = cpu();
    let k = odd_product::build().unwrap();
    let b = Kernel::build("odd_product", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let v = x.at(i) | 1u32;
        out.set(i, group_reduce_with(v, |a, b| a * b));
        k.gather_with(v, 1u32, |a, b| a * b);
    })
    .unwrap();
    assert_eq!(k.kernel().ir_text(), b.ir_text());
    let xs: Vec<u32> = (0..96u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let out = Buffer::<u32>::new(q.device(), 96).unwrap();
    let run = k
        .kernel()
        .launch(&q, NdRange::new(96).local(48), args![&x, &out])
        .unwrap();
    let total = run.gather::<u32>(0).unwrap().get().unwrap();
    let prod = |s: &[u32]| s.iter().fold(1u32, |a, &b| a.wrapping_mul(b | 1));
    assert_eq!(total, prod(&xs));
    let got = q.read(&out).unwrap();
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, prod(&xs[i / 48 * 48..i / 48 * 48 + 48]), "item {i}");
    }
}

#[kernel]
fn rgb_to_gray(rgb: &[[u8; 3]], #[write] gray: &mut [f32], #[write] bgr: &mut [[u8; 3]]) {
    let i = global_id(0);
    if i < rgb.len() {
        let f = rgb[i].cast::<[f32; 3]>();
        gray[i] = f.x() * 0.25f32 + f.y() * 0.5f32 + f.z() * 0.25f32;
        bgr[i] = rgb[i].zyx();
    }
}

#[test]
fn buffers_of_3_vectors_in_kernel_functions() {
    let (_d, q) = cpu();
    let px: Vec<[u8; 3]> = (0..50u8).map(|i| [i, i.wrapping_mul(7), 255 - i]).collect();
    let rgb = Buffer::from_slice(&q, &px).unwrap();
    let gray = Buffer::<f32>::new(q.device(), 50).unwrap();
    let bgr = Buffer::<[u8; 3]>::new(q.device(), 50).unwrap();
    rgb_to_gray::build()
        .unwrap()
        .launch(&q, NdRange::covering(50, 16), &rgb, &gray, &bgr)
        .unwrap();
    let g = q.read(&gray).unwrap();
    let b = q.read(&bgr).unwrap();
    for (i, p) in px.iter().enumerate() {
        assert_eq!(
            g[i],
            p[0] as f32 * 0.25 + p[1] as f32 * 0.5 + p[2] as f32 * 0.25
        );
        assert_eq!(b[i], [p[2], p[1], p[0]]);
    }
}

/// Every device here: the CPU backends and each OpenCL (PoCL) and CUDA device.
fn all_queues() -> Vec<Queue> {
    let devices = strata::devices();
    for spec in ["cpu", "interp"] {
        assert!(devices.iter().any(|d| d.info().spec() == spec), "{spec}");
    }
    devices.iter().map(|d| Queue::new(d).unwrap()).collect()
}

const W: usize = 16;
const LIMIT: u64 = 40;
const HALF: u8 = 2;

/// `usize` (and other typed) constants beside device values of another type: operators,
/// comparisons (on either side) and device `for` bounds convert them to the device value's
/// type, the value checked when the kernel is built.
#[kernel]
fn typed_constants(x: &[u32], #[write] out: &mut [u32], #[write] f: &mut [f32]) {
    let i = global_id(0);
    let w2 = W * 2;
    if i < W {
        let mut acc = 0u32;
        for k in i..W {
            acc += x[k];
        }
        out[i] = acc * W + (W - i) + i % W;
    }
    if w2 > i && x[i] > LIMIT {
        out[i] = 1u32 << HALF;
    }
    f[i] = x[i].cast::<f32>() / HALF;
}

#[test]
fn usize_constants_convert_to_the_device_type_on_every_backend() {
    let k = typed_constants::build().unwrap();
    // The same IR as the kernel written with `u32` (and `f32`) literals: the conversions
    // happen when the kernel is built.
    let twin = Kernel::build("typed_constants", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let f = k.write::<f32>("f");
        let i = global_id(0);
        if_(i.lt(16u32), || {
            let acc = var_named("acc", lit(0u32));
            for_range(i, lit(16u32), |k: Expr<u32>| {
                let v = x.at(k);
                acc.set(acc.get() + v)
            });
            out.set(i, acc.get() * 16u32 + (lit(16u32) - i) + i % 16u32);
        });
        if_(i.lt(32u32).and(x.at(i).gt(40u32)), || out.set(i, 4u32));
        f.set(i, x.at(i).cast::<f32>() / 2.0f32);
    })
    .unwrap();
    assert_eq!(k.kernel().ir_text(), twin.ir_text());
    let xs: Vec<u32> = (0..48u32).map(|v| v * 3 % 50).collect();
    let mut want = vec![0u32; 48];
    for i in 0..48 {
        if i < 16 {
            let acc: u32 = xs[i..16].iter().sum();
            want[i] = acc * 16 + (16 - i as u32) + i as u32 % 16;
        }
        if i < 32 && xs[i] > 40 {
            want[i] = 4;
        }
    }
    for q in all_queues() {
        let spec = q.device().info().spec();
        eprintln!("on {spec}");
        let x = Buffer::from_slice(&q, &xs).unwrap();
        let out = Buffer::<u32>::new(&q, 48).unwrap();
        let f = Buffer::<f32>::new(&q, 48).unwrap();
        k.launch(&q, NdRange::new(48), &x, &out, &f).unwrap();
        assert_eq!(q.read(&out).unwrap(), want, "{spec}");
        let fs: Vec<f32> = xs.iter().map(|&v| v as f32 / 2.0).collect();
        assert_eq!(q.read(&f).unwrap(), fs, "{spec}");
    }
}

/// Typed constants assigned to a device variable, plainly and with compound assignment.
#[kernel]
fn typed_assign(x: &[u32], out: &mut [u32]) {
    let i = global_id(0);
    let mut acc = x[i];
    acc += W;
    acc *= HALF;
    if acc > LIMIT {
        acc = W;
    }
    out[i] = acc;
    if i == 0 {
        out[i] = W;
        out[i] += HALF;
    }
}

#[test]
fn typed_constants_assign_to_device_variables_on_every_backend() {
    let k = typed_assign::build().unwrap();
    let xs: Vec<u32> = (0..40u32).collect();
    let want: Vec<u32> = xs
        .iter()
        .map(|&v| if (v + 16) * 2 > 40 { 16 } else { (v + 16) * 2 })
        .collect();
    let mut want = want;
    want[0] = 18;
    for q in all_queues() {
        let spec = q.device().info().spec();
        let x = Buffer::from_slice(&q, &xs).unwrap();
        let out = Buffer::<u32>::new(&q, 40).unwrap();
        k.launch(&q, NdRange::new(40), &x, &out).unwrap();
        assert_eq!(q.read(&out).unwrap(), want, "{spec}");
    }
}

/// Named gathers: each `let name = gather_..::<T>(..)` (or `let name: GatherHandle<T> = ..`)
/// becomes a field `name: Gathered<T>` of the launch's result.
#[kernel]
fn stats(x: &[u32], scale: f32) {
    let i = global_id(0);
    let v = x[i];
    gather_add(v); // unnamed: by position only (index 0)
    let total = gather_add::<u32>(v);
    let lo = gather_min::<u32>(v);
    let peak: strata::builder::GatherHandle<f32> = gather_max(v.cast::<f32>() * scale);
    let odd = gather_with::<u32>(v | 1u32, 1u32, |a, b| a * b);
}

#[test]
fn named_gathers_are_typed_fields_of_the_launch_on_every_backend() {
    let k = stats::build().unwrap();
    let xs: Vec<u32> = (0..300u32).map(|i| (i * 37 + 11) % 101).collect();
    let sum: u32 = xs.iter().sum();
    let min = *xs.iter().min().unwrap();
    let max = *xs.iter().max().unwrap() as f32 * 0.5;
    let prod = xs.iter().fold(1u32, |a, &b| a.wrapping_mul(b | 1));
    for q in all_queues() {
        let spec = q.device().info().spec();
        let x = Buffer::from_slice(&q, &xs).unwrap();
        let run: StatsRun = k.launch(&q, NdRange::new(300), &x, 0.5).unwrap();
        // The positional API still works, through `Deref` to the `Run`.
        assert_eq!(run.gather::<u32>(0).unwrap().get().unwrap(), sum, "{spec}");
        assert_eq!(run.gather::<u32>(1).unwrap().get().unwrap(), sum, "{spec}");
        let total: u32 = run.total.get().unwrap();
        let lo: u32 = run.lo.get().unwrap();
        let peak: f32 = run.peak.get().unwrap();
        let odd: u32 = run.odd.get().unwrap();
        assert_eq!((total, lo, peak, odd), (sum, min, max, prod), "{spec}");
        // `enqueue` returns the same typed run.
        let run = k.enqueue(&q, NdRange::new(300), &x, 2.0, &[]).unwrap();
        assert_eq!(run.peak.get().unwrap(), max * 4.0, "{spec}");
    }
}

/// The builder's gather declarations return typed handles, read back with `Run::gathered`.
#[test]
fn builder_gathers_return_typed_handles() {
    let (_d, q) = cpu();
    let mut handles = None;
    let k = Kernel::build("handles", |k| {
        let x = k.read::<i32>("x");
        let v = x.at(global_id(0));
        let lo = k.gather_min(v);
        let total = k.gather_add(v.cast::<i64>());
        handles = Some((lo, total));
    })
    .unwrap();
    let (lo, total) = handles.unwrap();
    assert_eq!((lo.index(), total.index()), (0, 1));
    let xs: Vec<i32> = (0..100).map(|i| 50 - i * 3).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let run = k.launch(&q, NdRange::new(100), args![&x]).unwrap();
    let got_lo: i32 = run.gathered(lo).unwrap().get().unwrap();
    let got_total: i64 = run.gathered(total).unwrap().get().unwrap();
    assert_eq!(got_lo, *xs.iter().min().unwrap());
    assert_eq!(got_total, xs.iter().map(|&v| v as i64).sum::<i64>());
}

/// How many device `for` loops and other device loops (`while`, `loop`) the optimized IR of
/// `k` holds (`for'N` and `loop'N` in its text form).
fn device_loops(k: &Kernel) -> (usize, usize) {
    let t = k.ir_text();
    (t.matches("for'").count(), t.matches("loop'").count())
}

/// A `for` over host bounds (a `#[stage]` parameter) is unrolled when the kernel is built:
/// no loop is left, the body appears `n` times.
#[kernel]
fn host_for(#[stage] n: u32, x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let mut acc = 0u32;
    #[host]
    for k in 0..n {
        acc += x[i * n + k];
    }
    out[i] = acc;
}

/// The same loop over a scalar parameter is a device loop.
#[kernel]
fn device_for(n: u32, x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let mut acc = 0u32;
    #[device]
    for k in 0..n {
        acc += x[i * n + k];
    }
    out[i] = acc;
}

/// A `while` over a `let mut` that only host values are assigned to, outside device control
/// flow, is unrolled: `step` stays a Rust value.
#[kernel]
fn host_while(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let mut acc = 0u32;
    let mut step = 1u32;
    #[host]
    while step < 16 {
        acc += x[i] * step;
        step *= 2;
    }
    out[i] = acc;
}

/// The same `while` once `step` is assigned inside a device `if`: `step` becomes a device
/// variable, and the loop over it a device loop.
#[kernel]
fn device_while(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let mut acc = 0u32;
    let mut step = 1u32;
    if x[i] > 50 {
        step = 4u32;
    }
    #[device]
    while step < 16 {
        acc += x[i] * step;
        step *= 2;
    }
    out[i] = acc;
}

/// `loop` is always a device loop.
#[kernel]
fn device_loop(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let mut v = x[i];
    let mut steps = 0u32;
    #[device]
    loop {
        if v <= 1 {
            break;
        }
        v = if v % 2 == 0 { v / 2 } else { 3 * v + 1 };
        steps += 1;
    }
    out[i] = steps;
}

#[test]
fn where_each_loop_runs_is_the_documented_rule() {
    let xs: Vec<u32> = (0..64u32).map(|v| (v * 13 + 5) % 97).collect();
    let n = 4u32;
    let host_for_k = host_for::build(n).unwrap();
    let device_for_k = device_for::build().unwrap();
    let host_while_k = host_while::build().unwrap();
    let device_while_k = device_while::build().unwrap();
    let device_loop_k = device_loop::build().unwrap();
    assert_eq!(device_loops(host_for_k.kernel()), (0, 0));
    assert_eq!(device_loops(device_for_k.kernel()), (1, 0));
    assert_eq!(device_loops(host_while_k.kernel()), (0, 0));
    assert_eq!(device_loops(device_while_k.kernel()), (0, 1));
    assert_eq!(device_loops(device_loop_k.kernel()), (0, 1));
    // The unrolled loop's body appears once per iteration: `n` loads of `x`.
    assert_eq!(host_for_k.kernel().ir_text().matches("= x[").count(), 4);
    let sums: Vec<u32> = (0..16).map(|i| xs[i * 4..i * 4 + 4].iter().sum()).collect();
    let collatz = |mut v: u32| {
        let mut s = 0;
        while v > 1 {
            v = if v & 1 == 0 { v / 2 } else { 3 * v + 1 };
            s += 1;
        }
        s
    };
    for q in all_queues() {
        let spec = q.device().info().spec();
        let x = Buffer::from_slice(&q, &xs).unwrap();
        let out = Buffer::<u32>::new(&q, 64).unwrap();
        host_for_k.launch(&q, NdRange::new(16), &x, &out).unwrap();
        assert_eq!(q.read(&out).unwrap()[..16], sums[..], "host_for {spec}");
        device_for_k
            .launch(&q, NdRange::new(16), n, &x, &out)
            .unwrap();
        assert_eq!(q.read(&out).unwrap()[..16], sums[..], "device_for {spec}");
        host_while_k.launch(&q, NdRange::new(64), &x, &out).unwrap();
        let want: Vec<u32> = xs.iter().map(|v| v * 15).collect();
        assert_eq!(q.read(&out).unwrap(), want, "host_while {spec}");
        device_while_k
            .launch(&q, NdRange::new(64), &x, &out)
            .unwrap();
        let want: Vec<u32> = xs
            .iter()
            .map(|&v| if v > 50 { v * 12 } else { v * 15 })
            .collect();
        assert_eq!(q.read(&out).unwrap(), want, "device_while {spec}");
        device_loop_k
            .launch(&q, NdRange::new(64), &x, &out)
            .unwrap();
        let want: Vec<u32> = xs.iter().map(|&v| collatz(v)).collect();
        assert_eq!(q.read(&out).unwrap(), want, "device_loop {spec}");
    }
}

/// A named gather of a generic kernel: the run is generic too.
#[kernel]
fn generic_total<T: strata::builder::Numeric>(x: &[T]) {
    let total = gather_add::<T>(x[global_id(0)]);
}

#[test]
fn named_gathers_in_generic_kernels() {
    let kf = generic_total::<f32>::build().unwrap();
    let ki = generic_total::<i64>::build().unwrap();
    for q in all_queues() {
        let spec = q.device().info().spec();
        let x = Buffer::from_slice(&q, &[1.5f32, 2.0, 3.5]).unwrap();
        let run: GenericTotalRun<f32> = kf.launch(&q, NdRange::new(3), &x).unwrap();
        let t: f32 = run.total.get().unwrap();
        assert_eq!(t, 7.0, "{spec}");
        let x = Buffer::from_slice(&q, &[-5i64, 1 << 40, 3]).unwrap();
        let t: i64 = ki
            .launch(&q, NdRange::new(3), &x)
            .unwrap()
            .total
            .get()
            .unwrap();
        assert_eq!(t, (1 << 40) - 2, "{spec}");
    }
}
