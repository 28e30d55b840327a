//! Gravitational N-body simulation over a buffer of `Particle` structs (`#[derive(Element)]`),
//! integrated with leapfrog (kick, drift, kick). The kernels read and write the particles'
//! fields by name (`ps[j].pos`, `ps[i].vel = ..`); the host runs the same integrator in `f64`
//! and the example checks the device's energy drift and trajectories against it.
//!
//! ```text
//! cargo run --release --example nbody                       # 2048 bodies on the best device
//! cargo run --release --example nbody -- --bodies 512 --steps 100 --device cpu
//! ```

use strata::prelude::*;

/// One body: position, mass, velocity (and explicit padding: every byte is a field).
#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
pub struct Particle {
    pos: [f32; 3],
    mass: f32,
    vel: [f32; 3],
    pad: f32,
}

/// Softening length squared: keeps close encounters finite.
const EPS2: f32 = 0.01;

/// `vel += dt * acceleration`, the acceleration summed over every body (the body itself adds
/// nothing: its distance is zero).
#[kernel]
fn kick(ps: &mut [Particle], dt: f32) {
    let i = global_id(0);
    if i < ps.len() {
        let me = ps[i].pos;
        let mut acc = vec3(0.0f32, 0.0, 0.0);
        for j in lit(0u32)..ps.len() {
            let d = ps[j].pos - me;
            let r2 = d.dot(d) + EPS2;
            let inv = r2.rsqrt();
            acc = acc + d * splat(ps[j].mass * inv * inv * inv);
        }
        ps[i].vel = ps[i].vel + acc * splat(dt);
    }
}

/// `pos += dt * vel`.
#[kernel]
fn drift(ps: &mut [Particle], dt: f32) {
    let i = global_id(0);
    if i < ps.len() {
        let p = ps[i];
        ps[i].pos = p.pos + p.vel * splat(dt);
    }
}

/// `n` bodies in a unit ball (a fixed pseudo-random sequence), total mass 1, slowly rotating.
fn initial(n: usize) -> Vec<Particle> {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut u = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let p = [u(), u(), u()];
        if p[0] * p[0] + p[1] * p[1] + p[2] * p[2] > 1.0 {
            continue;
        }
        out.push(Particle {
            pos: p,
            mass: 1.0 / n as f32,
            vel: [-0.3 * p[1], 0.3 * p[0], 0.0],
            pad: 0.0,
        });
    }
    out
}

/// Kinetic plus potential energy (softened like the kernels), in `f64`.
fn energy(ps: &[[f64; 7]]) -> f64 {
    let mut e = 0.0;
    for (i, a) in ps.iter().enumerate() {
        e += 0.5 * a[3] * (a[4] * a[4] + a[5] * a[5] + a[6] * a[6]);
        for b in &ps[i + 1..] {
            let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2 as f64;
            e -= a[3] * b[3] / r2.sqrt();
        }
    }
    e
}

/// Position, mass and velocity of each body in `f64`.
fn wide(ps: &[Particle]) -> Vec<[f64; 7]> {
    ps.iter()
        .map(|p| {
            let v = |x: f32| x as f64;
            [
                v(p.pos[0]),
                v(p.pos[1]),
                v(p.pos[2]),
                v(p.mass),
                v(p.vel[0]),
                v(p.vel[1]),
                v(p.vel[2]),
            ]
        })
        .collect()
}

/// The same leapfrog steps on the host, in `f64`.
fn simulate_on_host(ps: &[Particle], steps: usize, dt: f64) -> Vec<[f64; 7]> {
    let mut b = wide(ps);
    let kick = |b: &mut Vec<[f64; 7]>, h: f64| {
        let acc: Vec<[f64; 3]> = b
            .iter()
            .map(|me| {
                let mut a = [0.0; 3];
                for o in b.iter() {
                    let d = [o[0] - me[0], o[1] - me[1], o[2] - me[2]];
                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2 as f64;
                    let s = o[3] / (r2 * r2.sqrt());
                    for c in 0..3 {
                        a[c] += d[c] * s;
                    }
                }
                a
            })
            .collect();
        for (x, a) in b.iter_mut().zip(acc) {
            for c in 0..3 {
                x[4 + c] += h * a[c];
            }
        }
    };
    for _ in 0..steps {
        kick(&mut b, dt / 2.0);
        for x in b.iter_mut() {
            for c in 0..3 {
                x[c] += dt * x[4 + c];
            }
        }
        kick(&mut b, dt / 2.0);
    }
    b
}

/// Runs `steps` leapfrog steps of `dt` on `queue`'s device; returns the final bodies.
fn simulate(
    queue: &Queue,
    ps: &[Particle],
    steps: usize,
    dt: f32,
) -> strata::Result<Vec<Particle>> {
    let (k, d) = (kick::build()?, drift::build()?);
    let buf = Buffer::from_slice(queue, ps)?;
    let range = || NdRange::covering(ps.len(), 64);
    for _ in 0..steps {
        k.enqueue(queue, range(), &buf, dt / 2.0, &[])?;
        d.enqueue(queue, range(), &buf, dt, &[])?;
        k.enqueue(queue, range(), &buf, dt / 2.0, &[])?;
    }
    buf.to_vec(queue)
}

/// What a run measured.
struct Outcome {
    /// Relative energy drift of the device's run.
    drift: f64,
    /// Relative energy drift of the host's `f64` run.
    host_drift: f64,
    /// Largest distance between a body on the device and on the host, over the system's size.
    max_offset: f64,
}

fn run(queue: &Queue, n: usize, steps: usize, dt: f32) -> strata::Result<Outcome> {
    let start = initial(n);
    let e0 = energy(&wide(&start));
    let end = simulate(queue, &start, steps, dt)?;
    let host = simulate_on_host(&start, steps, dt as f64);
    let max_offset = wide(&end)
        .iter()
        .zip(&host)
        .map(|(a, b)| {
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .fold(0.0, f64::max);
    Ok(Outcome {
        drift: ((energy(&wide(&end)) - e0) / e0).abs(),
        host_drift: ((energy(&host) - e0) / e0).abs(),
        max_offset,
    })
}

/// Whether a device run agrees with the host: energy kept about as well as the `f64` host run
/// keeps it (f32 arithmetic adds ~1e-5 of noise), and every body within 1% of the system's size.
fn agrees(o: &Outcome) -> bool {
    o.drift <= o.host_drift * 2.0 + 1e-4 && o.max_offset < 1e-2
}

fn main() {
    let go = || -> Result<(), Box<dyn std::error::Error>> {
        let (mut n, mut steps, mut spec) = (2048usize, 100usize, "best".to_string());
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let value = it.next().ok_or(format!("`{flag}` needs a value"))?;
            match flag.as_str() {
                "--bodies" => n = value.parse().map_err(|_| format!("bad count `{value}`"))?,
                "--steps" => steps = value.parse().map_err(|_| format!("bad count `{value}`"))?,
                "--device" => spec = value,
                _ => {
                    return Err(
                        format!("unknown flag `{flag}` (--bodies, --steps, --device)").into(),
                    )
                }
            }
        }
        let device: Device = spec.parse()?;
        let queue = Queue::new(&device)?;
        let t = std::time::Instant::now();
        let o = run(&queue, n, steps, 1e-3)?;
        println!(
            "{n} bodies, {steps} leapfrog steps on {} ({:.2} s with the host's f64 check): energy drift {:.2e} (host f64 {:.2e}), largest offset from the host {:.2e}",
            device.info().spec(),
            t.elapsed().as_secs_f64(),
            o.drift,
            o.host_drift,
            o.max_offset
        );
        if !agrees(&o) {
            return Err("the device's run does not agree with the host's".into());
        }
        Ok(())
    };
    if let Err(e) = go() {
        eprintln!("nbody: {e}");
        std::process::exit(1);
    }
}

/// At a small size, every device present agrees with the host.
#[test]
fn every_device_agrees_with_the_host() {
    let mut ran = 0;
    // Every device, and each again in checked mode: no fault, race or uninitialized read.
    for device in strata::devices()
        .iter()
        .flat_map(|d| [d.clone(), d.checked()])
    {
        let queue = Queue::new(&device).unwrap();
        let o = run(&queue, 96, 40, 1e-3).unwrap();
        assert!(
            agrees(&o),
            "{}: drift {:.2e} (host {:.2e}), offset {:.2e}",
            device.info().spec(),
            o.drift,
            o.host_drift,
            o.max_offset
        );
        ran += 1;
    }
    assert!(ran > 0);
}
