//! The MPI layer checked across real processes: run it under `mpirun` with any number of ranks.
//!
//! ```text
//! cargo build -p strata-examples --features mpi --example mpi_check
//! mpirun -np 4 --oversubscribe target/debug/examples/mpi_check
//! ```
//!
//! Each rank takes a device by its rank from `cpu`, `opencl:0` (when present), `interp`, so
//! messages travel between buffers of different backends. Checked: a ring of blocking sends
//! and receives, non-blocking sends and receives into sub-ranges, all-reduce (sum, min, max of
//! integers bit for bit; a float sum within its rounding bound), the halo exchange of 2-D and
//! 3-D fields (open and periodic), and the typed errors: lengths that differ between ranks, a
//! receive of another length than was sent, a rank that does not exist, a rank count that
//! does not divide the grid. Every rank prints one line; any failure exits with status 1.

use strata::multi::mpi::rsmpi::traits::Communicator;
use strata::multi::mpi::{self, Comm, MpiError, ReduceOp, RowSplit};
use strata::prelude::*;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() {
    let mpi = match mpi::init() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("mpi_check: {e}");
            std::process::exit(1);
        }
    };
    let comm = mpi.world().expect("the world communicator");
    let (rank, size) = (comm.rank(), comm.size());
    match run(&comm) {
        Ok(checks) => println!("mpi_check: rank {rank} of {size}: ok ({checks} checks)"),
        Err(e) => {
            eprintln!("mpi_check: rank {rank} of {size}: FAILED: {e}");
            // End every rank now: the others may wait for this one.
            comm.raw().abort(1)
        }
    }
}

fn device_for(rank: usize) -> BoxResult<Device> {
    let mut specs = vec!["cpu"];
    if Device::from_spec("opencl:0").is_ok() {
        specs.push("opencl:0");
    }
    specs.push("interp");
    Ok(Device::from_spec(specs[rank % specs.len()])?)
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> BoxResult<()> {
    if ok {
        Ok(())
    } else {
        Err(what().into())
    }
}

/// `r` must be an [`MpiError`] whose message contains `needle`.
fn expect_mpi_error<T>(r: strata::Result<T>, needle: &str) -> BoxResult<()> {
    match r {
        Err(e) if e.layer::<MpiError>().is_some() && e.to_string().contains(needle) => Ok(()),
        Err(e) => Err(format!("expected an mpi error saying `{needle}`, got: {e}").into()),
        Ok(_) => Err(format!("expected an mpi error saying `{needle}`, got success").into()),
    }
}

fn run(comm: &Comm) -> BoxResult<usize> {
    let (r, p) = (comm.rank(), comm.size());
    let device = device_for(r)?;
    let q = Queue::new(&device)?;
    let mut checks = 0;
    let next = (r + 1) % p;
    let prev = (r + p - 1) % p;

    // 1. A ring: send 1000 values to the next rank, receive from the previous one.
    let n = 1000;
    let mine: Vec<u32> = (0..n as u32).map(|i| r as u32 * 100_000 + i).collect();
    let out = Buffer::from_slice(&q, &mine)?;
    let inb = Buffer::<u32>::new(&q, n)?;
    let send = comm.isend(&q, &out, 0..n, next, 1)?;
    comm.recv(&q, &inb, 0..n, prev, 1)?;
    send.wait()?;
    let want: Vec<u32> = (0..n as u32).map(|i| prev as u32 * 100_000 + i).collect();
    ensure(q.read(&inb)? == want, || "ring: wrong data".into())?;
    checks += 1;

    // 2. Non-blocking both ways, into a sub-range of a bigger buffer, f64.
    let data: Vec<f64> = (0..300).map(|i| r as f64 + i as f64 / 8.0).collect();
    let src = Buffer::from_slice(&q, &data)?;
    let dst = Buffer::<f64>::new(&q, 500)?;
    q.fill(&dst, -1.0, ..)?;
    let rq = comm.irecv(&q, &dst, 100..250, prev, 2)?;
    let sq = comm.isend(&q, &src, 50..200, next, 2)?;
    sq.wait()?;
    rq.wait()?;
    let got = q.read(&dst)?;
    let want: Vec<f64> = (50..200).map(|i| prev as f64 + i as f64 / 8.0).collect();
    ensure(got[100..250] == want[..], || "irecv: wrong data".into())?;
    ensure(
        got[..100].iter().chain(&got[250..]).all(|&x| x == -1.0),
        || "irecv wrote outside its range".into(),
    )?;
    checks += 1;

    // 3. All-reduce: integers bit for bit, a float sum within its bound.
    let m = 777;
    let v: Vec<u32> = (0..m as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ r as u32)
        .collect();
    let b = Buffer::from_slice(&q, &v)?;
    comm.all_reduce(&q, &b, ReduceOp::Sum)?;
    let want: Vec<u32> = (0..m as u32)
        .map(|i| {
            (0..p as u32).fold(0u32, |acc, rr| {
                acc.wrapping_add(i.wrapping_mul(2_654_435_761) ^ rr)
            })
        })
        .collect();
    ensure(q.read(&b)? == want, || "all_reduce sum u32: wrong".into())?;
    let vi: Vec<i32> = (0..m)
        .map(|i| (i * 37 + r as i32 * 101) % 1000 - 500)
        .collect();
    let bi = Buffer::from_slice(&q, &vi)?;
    comm.all_reduce(&q, &bi, ReduceOp::Max)?;
    let want: Vec<i32> = (0..m)
        .map(|i| {
            (0..p as i32)
                .map(|rr| (i * 37 + rr * 101) % 1000 - 500)
                .max()
                .unwrap()
        })
        .collect();
    ensure(q.read(&bi)? == want, || "all_reduce max i32: wrong".into())?;
    let bi = Buffer::from_slice(&q, &vi)?;
    comm.all_reduce(&q, &bi, ReduceOp::Min)?;
    let want: Vec<i32> = (0..m)
        .map(|i| {
            (0..p as i32)
                .map(|rr| (i * 37 + rr * 101) % 1000 - 500)
                .min()
                .unwrap()
        })
        .collect();
    ensure(q.read(&bi)? == want, || "all_reduce min i32: wrong".into())?;
    let vf: Vec<f32> = (0..m).map(|i| (i as f32 * 0.37 + r as f32).sin()).collect();
    let bf = Buffer::from_slice(&q, &vf)?;
    comm.all_reduce(&q, &bf, ReduceOp::Sum)?;
    let got = q.read(&bf)?;
    for (i, g) in got.iter().enumerate() {
        let terms: Vec<f64> = (0..p)
            .map(|rr| ((i as f32 * 0.37 + rr as f32).sin()) as f64)
            .collect();
        let exact: f64 = terms.iter().sum();
        let bound = p as f64 * f32::EPSILON as f64 * terms.iter().map(|t| t.abs()).sum::<f64>();
        ensure((*g as f64 - exact).abs() <= bound, || {
            format!("all_reduce sum f32 [{i}]: {g} vs {exact} (bound {bound})")
        })?;
    }
    checks += 4;

    // 4. Halo exchange of a 2-D field split by rows: 2 halo rows, 37 columns, 40 rows.
    let (width, total, halo) = (37usize, 40usize, 2usize);
    let split = RowSplit::new(comm, total, false)?;
    let field = Buffer2::<f32>::new(&q, [width, split.rows + 2 * halo])?;
    let value = |row: usize, col: usize| (row * 1000 + col) as f32;
    for periodic in [false, true] {
        let mut host = vec![-7.0f32; (split.rows + 2 * halo) * width];
        for lr in 0..split.rows {
            for c in 0..width {
                host[(lr + halo) * width + c] = value(split.first + lr, c);
            }
        }
        q.write_region(&field, [0, 0], [width, split.rows + 2 * halo], &host)?;
        comm.exchange_halo_2d(&q, &field, halo, periodic)?;
        let got = field.to_vec(&q)?;
        for lr in 0..split.rows + 2 * halo {
            let global = split.first as isize + lr as isize - halo as isize;
            let want_row = if (0..total as isize).contains(&global) {
                Some(global as usize)
            } else if periodic {
                Some(global.rem_euclid(total as isize) as usize)
            } else {
                None
            };
            for c in 0..width {
                let w = want_row.map_or(-7.0, |row| value(row, c));
                let g = got[lr * width + c];
                ensure(g == w, || {
                    format!("halo 2-D (periodic {periodic}): local row {lr} col {c}: {g}, want {w}")
                })?;
            }
        }
        checks += 1;
    }

    // 5. 3-D: planes of 5 x 4 split over the ranks, 1 halo plane, periodic.
    let (wx, wy, depth) = (5usize, 4usize, 3 * p + 1);
    let split = RowSplit::new(comm, depth, false)?;
    let vol = Buffer3::<u32>::new(&q, [wx, wy, split.rows + 2])?;
    let mut host = vec![u32::MAX; (split.rows + 2) * wx * wy];
    for lz in 0..split.rows {
        for i in 0..wx * wy {
            host[(lz + 1) * wx * wy + i] = ((split.first + lz) * 100 + i) as u32;
        }
    }
    q.write_region(&vol, [0, 0, 0], [wx, wy, split.rows + 2], &host)?;
    comm.exchange_halo_3d(&q, &vol, 1, true)?;
    let got = vol.to_vec(&q)?;
    let below = (split.first + depth - 1) % depth;
    let above = (split.first + split.rows) % depth;
    for i in 0..wx * wy {
        ensure(got[i] == (below * 100 + i) as u32, || {
            format!("halo 3-D lower plane [{i}]")
        })?;
        let top = (split.rows + 1) * wx * wy + i;
        ensure(got[top] == (above * 100 + i) as u32, || {
            format!("halo 3-D upper plane [{i}]")
        })?;
    }
    checks += 1;

    // 6. Typed errors.
    // Lengths that differ between ranks: every rank gets the error (rank 0's buffer is longer).
    let len = if r == 0 { 11 } else { 10 };
    let odd = Buffer::<u32>::new(&q, len)?;
    let e = comm.all_reduce(&q, &odd, ReduceOp::Sum);
    if p > 1 {
        expect_mpi_error(
            e,
            "lengths differ between ranks (rank: length): 0: 11, 1: 10",
        )?;
    } else {
        e?;
    }
    // A receive of another length than was sent: each rank sends 5 elements and receives 4.
    let five = Buffer::from_slice(&q, &[1u32, 2, 3, 4, 5])?;
    let four = Buffer::<u32>::new(&q, 4)?;
    let s = comm.isend(&q, &five, 0..5, next, 3)?;
    expect_mpi_error(
        comm.recv(&q, &four, 0..4, prev, 3),
        &format!("rank {prev} sent 20 bytes (5 elements of 4 bytes) but the receiving range holds 4 elements"),
    )?;
    s.wait()?;
    // The same through a non-blocking receive: a longer message is reported when waited for.
    let s = comm.isend(&q, &five, 0..5, next, 4)?;
    let rq = comm.irecv(&q, &four, 0..4, prev, 4)?;
    let e = rq.wait();
    s.wait()?;
    match e {
        Err(e) if matches!(e.layer(), Some(MpiError { op: "recv", .. })) => {}
        other => return Err(format!("irecv of a longer message: {other:?}").into()),
    }
    // A rank that does not exist.
    expect_mpi_error(
        comm.send(&q, &five, 0..5, p, 5),
        &format!("rank {p} does not exist: the job has {p} ranks"),
    )?;
    // A rank count that does not divide the grid, where the split must be even.
    let rows = 4 * p + 1;
    let e = RowSplit::new(comm, rows, true);
    if p > 1 {
        expect_mpi_error(e, &format!("{p} ranks do not divide {rows} rows"))?;
    } else {
        e?;
    }
    expect_mpi_error(
        RowSplit::new(comm, p - 1, false),
        &format!("{} rows cannot be split over {p} ranks", p - 1),
    )?;
    // Halo exchanges that cannot be made (checked before any message).
    let small = Buffer::<f32>::new(&q, 50)?;
    expect_mpi_error(
        comm.exchange_halo(&q, &small, 10, 4, 1, false),
        "the buffer has 50 elements but 4 interior and 2 x 1 halo layers of 10 elements need 60",
    )?;
    expect_mpi_error(
        comm.exchange_halo(&q, &small, 10, 1, 2, false),
        "1 interior layers are fewer than the 2 halo layers a neighbour needs",
    )?;
    let thin = Buffer2::<f32>::new(&q, [8, 3])?;
    expect_mpi_error(
        comm.exchange_halo_2d(&q, &thin, 2, false),
        "3 rows cannot hold 2 x 2 halo rows",
    )?;
    checks += 8;

    comm.barrier();
    Ok(checks)
}
