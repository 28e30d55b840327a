//! Buffers of user structs (`#[derive(Element)]`) on every backend present.

use strata::builder::FieldAccess;
use strata::f16;
use strata::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
struct Inner {
    a: u16,
    b: i16,
    c: [u8; 4],
}

#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    mass: f32,
    vel: [f32; 3],
    id: u32,
    inner: Inner,
    hist: [Inner; 2],
    w: f64,
}

#[test]
fn builder_round_trip() {
    let k = Kernel::build("structs_rt", |k| {
        let src = k.read::<Particle>("src");
        let dst = k.write::<Particle>("dst");
        let i = global_id(0);
        let p = src.item(i).load();
        dst.item(i).store(p);
    })
    .unwrap();
    // Every scalar or vector field of the nested structs and arrays is loaded and stored
    // alone, by its path.
    let ir = k.ir_text();
    for path in [".pos", ".inner.c", ".hist[1].b", ".w"] {
        assert!(ir.contains(&format!("src[global_id(0)]{path}")), "{ir}");
        assert!(ir.contains(&format!("dst[global_id(0)]{path}")), "{ir}");
    }
}

fn sample(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| {
            let f = i as f32;
            Particle {
                pos: [f, f + 0.5, -f],
                mass: 1.0 + f,
                vel: [0.25, -0.5, f * 0.125],
                id: i as u32 * 7,
                inner: Inner {
                    a: i as u16,
                    b: -(i as i16),
                    c: [i as u8, 1, 2, 3],
                },
                hist: [
                    Inner {
                        a: 10,
                        b: 20,
                        c: [4, 5, 6, 7],
                    },
                    Inner {
                        a: 30,
                        b: -40,
                        c: [8, 9, 10, 11],
                    },
                ],
                w: f as f64 * 1.5,
            }
        })
        .collect()
}

#[test]
fn round_trip_on_every_backend() {
    for spec in ["interp", "cpu", "opencl:0"] {
        let Ok(dev) = Device::from_spec(spec) else {
            continue;
        };
        let q = Queue::new(&dev).unwrap();
        let k = Kernel::build("structs_rt2", |k| {
            let src = k.read::<Particle>("src");
            let dst = k.write::<Particle>("dst");
            let i = global_id(0);
            let mut p = src.item(i).load();
            p.pos = p.pos + p.vel;
            p.hist[1].b = lit(0i16) - p.hist[0].b;
            dst.item(i).store(p);
        })
        .unwrap();
        let xs = sample(37);
        let src = Buffer::from_slice(&q, &xs).unwrap();
        let dst = Buffer::<Particle>::new(&dev, xs.len()).unwrap();
        k.launch(&q, NdRange::new(xs.len()), args![&src, &dst])
            .unwrap();
        let got = dst.to_vec(&q).unwrap();
        for (g, x) in got.iter().zip(&xs) {
            let mut want = *x;
            for c in 0..3 {
                want.pos[c] = x.pos[c] + x.vel[c];
            }
            want.hist[1].b = -x.hist[0].b;
            assert_eq!(*g, want, "on {spec}");
        }
    }
}

#[kernel]
fn step(ps: &mut [Particle], dt: f32) {
    let i = global_id(0);
    if i < ps.len() {
        let p = ps[i];
        ps[i].pos = p.pos + p.vel * splat(dt);
        ps[i].hist[1].a = p.hist[0].a + p.inner.a;
        ps[i].id += 1u32;
    }
}

#[kernel]
fn copy_all(src: &[Particle], dst: &mut [Particle]) {
    let i = global_id(0);
    if i < src.len() {
        dst[i] = src[i];
    }
}

#[test]
fn kernel_macro_fields() {
    for spec in ["interp", "cpu", "opencl:0"] {
        let Ok(dev) = Device::from_spec(spec) else {
            continue;
        };
        let q = Queue::new(&dev).unwrap();
        let xs = sample(19);
        let ps = Buffer::from_slice(&q, &xs).unwrap();
        step::build()
            .unwrap()
            .launch(&q, NdRange::new(32), &ps, 0.5)
            .unwrap();
        let out = Buffer::<Particle>::new(&dev, xs.len()).unwrap();
        copy_all::build()
            .unwrap()
            .launch(&q, NdRange::new(32), &ps, &out)
            .unwrap();
        let got = out.to_vec(&q).unwrap();
        for (g, x) in got.iter().zip(&xs) {
            let mut want = *x;
            for c in 0..3 {
                want.pos[c] = x.pos[c] + x.vel[c] * 0.5;
            }
            want.hist[1].a = x.hist[0].a.wrapping_add(x.inner.a);
            want.id += 1;
            assert_eq!(*g, want, "on {spec}");
        }
    }
}

/// A struct passed by value: its fields arrive as scalar launch arguments.
#[kernel]
fn place_at(ps: &mut [Particle], origin: Particle) {
    let i = global_id(0);
    if i < ps.len() {
        ps[i].pos = ps[i].pos + origin.pos;
        ps[i].hist[1] = origin.hist[0];
        ps[i].w = origin.w;
    }
}

#[test]
fn struct_by_value() {
    let k = place_at::build().unwrap();
    assert!(
        k.kernel().ir_text().contains("origin_pos_0"),
        "{}",
        k.kernel().ir_text()
    );
    for spec in ["interp", "cpu", "opencl:0"] {
        let Ok(dev) = Device::from_spec(spec) else {
            continue;
        };
        let q = Queue::new(&dev).unwrap();
        let xs = sample(9);
        let o = sample(4)[3];
        let ps = Buffer::from_slice(&q, &xs).unwrap();
        k.launch(&q, NdRange::new(16), &ps, o).unwrap();
        let got = ps.to_vec(&q).unwrap();
        for (g, x) in got.iter().zip(&xs) {
            let mut want = *x;
            for c in 0..3 {
                want.pos[c] = x.pos[c] + o.pos[c];
            }
            want.hist[1] = o.hist[0];
            want.w = o.w;
            assert_eq!(*g, want, "on {spec}");
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
struct Texel {
    rgb: [f16; 3],
    a: f16,
    weight: f32,
}

/// A struct with f16 fields: loaded, computed with (in f16) and stored back, on the devices
/// with f16 (`cpu`, `interp`; PoCL lacks `cl_khr_fp16`, a typed error checked in `half/*`).
#[kernel]
fn brighten(ts: &mut [Texel]) {
    let i = global_id(0);
    if i < ts.len() {
        let t = ts[i];
        ts[i].rgb = t.rgb * splat(t.a);
        ts[i].weight = t.weight + (t.a as f32);
    }
}

#[test]
fn f16_fields() {
    let k = brighten::build().unwrap();
    for spec in ["interp", "cpu"] {
        let dev = Device::from_spec(spec).unwrap();
        let q = Queue::new(&dev).unwrap();
        let xs: Vec<Texel> = (0..10)
            .map(|i| Texel {
                rgb: [
                    f16::from_f32(i as f32 * 0.25),
                    f16::from_f32(1.5),
                    f16::from_f32(-2.0),
                ],
                a: f16::from_f32(0.5 + i as f32),
                weight: i as f32,
            })
            .collect();
        let ts = Buffer::from_slice(&q, &xs).unwrap();
        k.launch(&q, NdRange::new(10), &ts).unwrap();
        let got = ts.to_vec(&q).unwrap();
        for (g, x) in got.iter().zip(&xs) {
            let want = Texel {
                rgb: x.rgb.map(|c| f16::from_f64(c.to_f64() * x.a.to_f64())),
                a: x.a,
                weight: x.weight + x.a.to_f32(),
            };
            assert_eq!(*g, want, "on {spec}");
        }
    }
}

/// Two structs of one name with their fields in another order, as two modules may declare
/// them: kernels that read `x` of each have the same name and body and differ only in the
/// struct's layout.
mod order_a {
    #[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
    #[repr(C)]
    pub struct Pair {
        pub x: f32,
        pub y: u32,
    }
}

mod order_b {
    #[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
    #[repr(C)]
    pub struct Pair {
        pub y: u32,
        pub x: f32,
    }
}

#[test]
fn kernels_that_differ_only_in_a_struct_layout_are_two_kernels() {
    // The device's kernel cache keys on the IR's fingerprint: it must tell the layouts apart.
    let a = Kernel::build("pair_x", |k| {
        let ps = k.read::<order_a::Pair>("ps");
        let out = k.write::<f32>("out");
        let i = global_id(0);
        out.set(i, ps.item(i).x.load());
    })
    .unwrap();
    let b = Kernel::build("pair_x", |k| {
        let ps = k.read::<order_b::Pair>("ps");
        let out = k.write::<f32>("out");
        let i = global_id(0);
        out.set(i, ps.item(i).x.load());
    })
    .unwrap();
    assert_ne!(a.ir().fingerprint(), b.ir().fingerprint());
    // Also IR whose struct declarations alone differ (`Kernel::from_ir` of hand-made IR).
    let mut wider = a.ir().clone();
    let s = strata::ir::StructId::new(0);
    wider.structs[s].align = 8;
    wider.structs[s].size = 8;
    assert_ne!(a.ir().fingerprint(), wider.fingerprint());
    let xs: Vec<f32> = (0..8).map(|i| i as f32 + 0.5).collect();
    let pa: Vec<order_a::Pair> = xs.iter().map(|&x| order_a::Pair { x, y: 7 }).collect();
    let pb: Vec<order_b::Pair> = xs.iter().map(|&x| order_b::Pair { y: 7, x }).collect();
    for spec in ["cpu", "interp"] {
        let dev = Device::from_spec(spec).unwrap();
        let q = Queue::new(&dev).unwrap();
        let out = Buffer::<f32>::new(&dev, xs.len()).unwrap();
        let src = Buffer::from_slice(&q, &pa).unwrap();
        a.launch(&q, NdRange::new(xs.len()), args![&src, &out])
            .unwrap();
        assert_eq!(out.to_vec(&q).unwrap(), xs, "order_a on {spec}");
        let src = Buffer::from_slice(&q, &pb).unwrap();
        b.launch(&q, NdRange::new(xs.len()), args![&src, &out])
            .unwrap();
        assert_eq!(out.to_vec(&q).unwrap(), xs, "order_b on {spec}");
    }
}
