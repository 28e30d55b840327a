//! The 2-D heat equation on a grid split by rows over MPI ranks, each rank on its own device,
//! with a halo exchange every step. Prints the time per step.
//!
//! ```text
//! cargo build --release -p strata-examples --features mpi --example heat_mpi
//! mpirun -np 4 target/release/examples/heat_mpi -- --nx 1024 --ny 1024 --steps 200
//! mpirun -np 2 target/release/examples/heat_mpi -- --devices cpu,opencl:0 --out heat.bin
//! ```
//!
//! Options: `--nx` columns, `--ny` rows (512 x 512), `--steps` (100), `--alpha` (0.2; stable
//! below 0.25), `--device SPEC` for every rank (`best`), or `--devices a,b,...` one per rank
//! (cycled), `--even` to require a rank count that divides the rows, `--out FILE` (rank 0
//! writes the final grid: `ny * nx` little-endian `f32`, row after row), `--compare FILE` with
//! `--tol T` (rank 0 compares the final grid with a file `--out` wrote, and fails when an
//! element differs by more than `T`; `0` asks for the same bits).
//!
//! The explicit step is `u' = u + alpha (u_n + u_s + u_w + u_e - 4 u)` on the interior; the
//! grid's outer rows and columns keep their initial values. Each rank holds its rows plus one
//! halo row above and one below (a `Buffer2<f32>` on its device), exchanges the halo rows with
//! its neighbours ([`Comm::exchange_halo_2d`], staged through the host), then runs one stencil
//! kernel. Every element is computed by the same operations in the same order however the
//! rows are split, so on one backend the result does not depend on the rank count, bit for
//! bit; different backends may round differently (fused multiply-adds), within `--tol`.

use std::time::{Duration, Instant};
use strata::multi::mpi::rsmpi::collective::SystemOperation;
use strata::multi::mpi::rsmpi::traits::{Communicator, CommunicatorCollectives};
use strata::multi::mpi::{self, Comm, RowSplit};
use strata::prelude::*;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

struct Options {
    nx: usize,
    ny: usize,
    steps: usize,
    alpha: f32,
    devices: Vec<String>,
    even: bool,
    out: Option<String>,
    compare: Option<String>,
    tol: f32,
}

fn parse_args() -> BoxResult<Options> {
    let mut o = Options {
        nx: 512,
        ny: 512,
        steps: 100,
        alpha: 0.2,
        devices: vec!["best".into()],
        even: false,
        out: None,
        compare: None,
        tol: 0.0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--" => {}
            "--nx" => o.nx = value()?.parse()?,
            "--ny" => o.ny = value()?.parse()?,
            "--steps" => o.steps = value()?.parse()?,
            "--alpha" => o.alpha = value()?.parse()?,
            "--device" => o.devices = vec![value()?],
            "--devices" => o.devices = value()?.split(',').map(str::to_string).collect(),
            "--even" => o.even = true,
            "--out" => o.out = Some(value()?),
            "--compare" => o.compare = Some(value()?),
            "--tol" => o.tol = value()?.parse()?,
            _ => return Err(format!("unknown option {a} (see the example's docs)").into()),
        }
    }
    if o.nx < 3 || o.ny < 3 {
        return Err("the grid needs at least 3 x 3 points".into());
    }
    Ok(o)
}

/// The initial temperature at global row `y`, column `x`.
fn initial(x: usize, y: usize, nx: usize, ny: usize) -> f32 {
    let hot = (nx / 4..3 * nx / 4).contains(&x) && (ny / 3..2 * ny / 3).contains(&y);
    if hot {
        1.0
    } else {
        ((x * 7 + y * 13) % 101) as f32 / 400.0
    }
}

fn stencil() -> strata::Result<Kernel> {
    Kernel::build("heat_step", |k| {
        let src = k.read2::<f32>("src");
        let dst = k.write2::<f32>("dst");
        let first = k.scalar::<u32>("first_row");
        let rows = k.scalar::<u32>("rows");
        let total = k.scalar::<u32>("total_rows");
        let alpha = k.scalar::<f32>("alpha");
        let width = src.extent().x();
        let p = global_id2();
        let (x, y) = (p.x(), p.y());
        if_(x.lt(width).and(y.lt(rows)), || {
            let ly = y + 1u32; // local row, after the halo row
            let gy = first + y;
            let c = src.at2(ly, x);
            let edge = x
                .eq(0u32)
                .or(x.eq(width - 1u32))
                .or(gy.eq(0u32))
                .or(gy.eq(total - 1u32));
            // Clamped so that edge cells (which keep their value) read inside the grid.
            let xw: Expr<u32> = select(x.eq(0u32), x, x - 1u32);
            let xe: Expr<u32> = select(x.eq(width - 1u32), x, x + 1u32);
            let sum = (src.at2(ly - 1u32, x) + src.at2(ly + 1u32, x))
                + (src.at2(ly, xw) + src.at2(ly, xe));
            let next = c + alpha * (sum - 4.0f32 * c);
            dst.set2(ly, x, select::<f32>(edge, c, next));
        });
    })
}

fn main() {
    let mpi = match mpi::init() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("heat_mpi: {e}");
            std::process::exit(1);
        }
    };
    let comm = mpi.world().expect("the world communicator");
    if let Err(e) = run(&comm) {
        eprintln!("heat_mpi: rank {} of {}: {e}", comm.rank(), comm.size());
        comm.raw().abort(1);
    }
}

fn run(comm: &Comm) -> BoxResult<()> {
    let o = parse_args()?;
    let (rank, size) = (comm.rank(), comm.size());
    let split = RowSplit::new(comm, o.ny, o.even)?;
    let device = Device::from_spec(&o.devices[rank % o.devices.len()])?;
    let q = Queue::new(&device)?;
    let kernel = stencil()?;

    // Local rows with one halo row above and below.
    let extent = [o.nx, split.rows + 2];
    let mut host = vec![0.0f32; o.nx * (split.rows + 2)];
    for ly in 0..split.rows {
        for x in 0..o.nx {
            host[(ly + 1) * o.nx + x] = initial(x, split.first + ly, o.nx, o.ny);
        }
    }
    let mut a = Buffer2::from_slice(&q, extent, &host)?;
    let mut b = Buffer2::from_slice(&q, extent, &host)?;
    let range = NdRange::covering([o.nx, split.rows], [16, 4]);
    let step = |src: &Buffer2<f32>, dst: &Buffer2<f32>| -> strata::Result<()> {
        kernel.launch(
            &q,
            range,
            args![
                src,
                dst,
                split.first as u32,
                split.rows as u32,
                o.ny as u32,
                o.alpha
            ],
        )?;
        Ok(())
    };

    // One step to compile the kernel and warm up, not timed; then the timed steps.
    comm.exchange_halo_2d(&q, &a, 1, false)?;
    step(&a, &b)?;
    std::mem::swap(&mut a, &mut b);
    comm.barrier();
    let (mut halo_t, mut compute_t) = (Duration::ZERO, Duration::ZERO);
    let start = Instant::now();
    for _ in 1..o.steps {
        let t = Instant::now();
        comm.exchange_halo_2d(&q, &a, 1, false)?;
        halo_t += t.elapsed();
        let t = Instant::now();
        step(&a, &b)?;
        compute_t += t.elapsed();
        std::mem::swap(&mut a, &mut b);
    }
    comm.barrier();
    let total = start.elapsed();
    let timed = o.steps.saturating_sub(1).max(1) as f64;
    // The slowest rank's times.
    let mine = [
        total.as_secs_f64(),
        halo_t.as_secs_f64(),
        compute_t.as_secs_f64(),
    ];
    let mut worst = [0.0f64; 3];
    comm.raw()
        .all_reduce_into(&mine[..], &mut worst[..], SystemOperation::max());

    // Rank 0 gathers the rows (each rank sends its own rows, packed).
    let own = q.read_region(&a, [0, 1], [o.nx, split.rows])?;
    let grid = if rank == 0 {
        let mut grid = own;
        for r in 1..size {
            let s = RowSplit::of(r, size, o.ny, o.even)?;
            let part = Buffer::<f32>::new(&q, s.rows * o.nx)?;
            comm.recv(&q, &part, 0..part.len(), r, 7)?;
            grid.extend(q.read(&part)?);
        }
        Some(grid)
    } else {
        let part = Buffer::from_slice(&q, &own)?;
        comm.send(&q, &part, 0..part.len(), 0, 7)?;
        None
    };
    let devices: Vec<String> = {
        let mut d = o.devices.clone();
        d.truncate(size.min(d.len()));
        d
    };
    if let Some(grid) = grid {
        let checksum: f64 = grid.iter().map(|&v| v as f64).sum();
        println!(
            "heat_mpi: {size} rank(s), grid {} x {}, {} steps, device(s) {} ({}): {:.3} ms per step (halo exchange {:.3} ms, stencil {:.3} ms; slowest rank), checksum {checksum:.6}",
            o.nx,
            o.ny,
            o.steps,
            devices.join(","),
            device.info().name,
            worst[0] * 1e3 / timed,
            worst[1] * 1e3 / timed,
            worst[2] * 1e3 / timed,
        );
        if let Some(path) = &o.out {
            std::fs::write(path, bytemuck::cast_slice::<f32, u8>(&grid))?;
        }
        if let Some(path) = &o.compare {
            let bytes = std::fs::read(path)?;
            if bytes.len() != grid.len() * 4 {
                return Err(format!(
                    "{path} holds {} bytes, the grid {}",
                    bytes.len(),
                    grid.len() * 4
                )
                .into());
            }
            let reference: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let (mut worst_diff, mut differing) = (0.0f32, 0usize);
            for (g, r) in grid.iter().zip(&reference) {
                if g.to_bits() != r.to_bits() {
                    differing += 1;
                    worst_diff = worst_diff.max((g - r).abs());
                }
            }
            println!(
                "heat_mpi: against {path}: {differing} element(s) differ in their bits, by at most {worst_diff:e} (tolerance {:e})",
                o.tol
            );
            let ok = if o.tol == 0.0 {
                differing == 0
            } else {
                worst_diff <= o.tol
            };
            if !ok {
                return Err("the grid differs from the reference beyond the tolerance".into());
            }
        }
    }
    Ok(())
}
