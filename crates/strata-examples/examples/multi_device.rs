//! The Mandelbrot set split over several devices in one process: each device computes a band of
//! rows, all at once; prints each device's share and time, first with equal shares, then with
//! shares from the devices' measured throughput.
//!
//! ```text
//! cargo run --release --example multi_device
//! cargo run --release --example multi_device -- --devices cpu,opencl:0,interp --size 600x400
//! ```
//!
//! Options: `--devices a,b,...` (default: every device strata finds), `--size WxH` (480x320),
//! `--iters N` (200). The picture is checked against the same kernel on the first device
//! alone: the iteration counts must agree (a pixel may differ where two backends round a
//! float operation differently; the count of such pixels is printed, and more than 0.1% is a
//! failure).

use std::time::Duration;
use strata::multi::DeviceSet;
use strata::prelude::*;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Iteration counts for rows `row0..row0 + rows` of a `width x height` picture.
fn kernel() -> strata::Result<Kernel> {
    Kernel::build("mandelbrot_rows", |k| {
        let out = k.write::<u32>("iters");
        let width = k.scalar::<u32>("width");
        let rows = k.scalar::<u32>("rows");
        let row0 = k.scalar::<u32>("row0");
        let x0 = k.scalar::<f32>("x0");
        let y0 = k.scalar::<f32>("y0");
        let d = k.scalar::<f32>("d");
        let max_iter = k.scalar::<u32>("max_iter");
        let (px, py) = (global_id(0), global_id(1));
        if_(px.lt(width).and(py.lt(rows)), || {
            let cx = x0 + px.cast::<f32>() * d;
            let cy = y0 + (py + row0).cast::<f32>() * d;
            let zx = var(0.0f32);
            let zy = var(0.0f32);
            let it = var(0u32);
            while_(
                || {
                    let (x, y) = (zx.get(), zy.get());
                    it.get().lt(max_iter).and((x * x + y * y).le(4.0f32))
                },
                || {
                    let (x, y) = (zx.get(), zy.get());
                    zx.set(x * x - y * y + cx);
                    zy.set(2.0f32 * x * y + cy);
                    it.set(it.get() + 1u32);
                },
            );
            out.set(py * width + px, it.get());
        });
    })
}

struct Options {
    devices: Option<Vec<String>>,
    size: (usize, usize),
    iters: u32,
}

fn parse_args() -> BoxResult<Options> {
    let mut o = Options {
        devices: None,
        size: (480, 320),
        iters: 200,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--devices" => o.devices = Some(value()?.split(',').map(str::to_string).collect()),
            "--size" => {
                let v = value()?;
                let (w, h) = v.split_once('x').ok_or("--size takes WxH")?;
                o.size = (w.parse()?, h.parse()?);
            }
            "--iters" => o.iters = value()?.parse()?,
            _ => return Err(format!("unknown option {a}").into()),
        }
    }
    Ok(o)
}

/// A device's rows and its time.
type Share = (std::ops::Range<usize>, Duration);

/// Computes the picture split over `set` by its weights; returns it and each device's rows
/// and time.
fn render(
    set: &DeviceSet,
    k: &Kernel,
    (w, h): (usize, usize),
    max_iter: u32,
) -> BoxResult<(Vec<u32>, Vec<Share>)> {
    let d = (3.0 / w as f32).max(2.4 / h as f32);
    let (x0, y0) = (-0.7 - d * w as f32 / 2.0, -d * h as f32 / 2.0);
    let rows = set.partition(h);
    let parts = set.each_timed(|i, ex| {
        let q = ex.queue();
        let r = rows[i].clone();
        if r.is_empty() {
            return Ok(Vec::new());
        }
        let out = Buffer::<u32>::new(q, w * r.len())?;
        k.launch(
            q,
            NdRange::new([w, r.len()]),
            args![
                &out,
                w as u32,
                r.len() as u32,
                r.start as u32,
                x0,
                y0,
                d,
                max_iter
            ],
        )?;
        q.read(&out)
    })?;
    let mut picture = Vec::with_capacity(w * h);
    let mut shares = Vec::new();
    for (i, (part, t)) in parts.into_iter().enumerate() {
        picture.extend(part);
        shares.push((rows[i].clone(), t));
    }
    Ok((picture, shares))
}

fn report(set: &DeviceSet, title: &str, shares: &[Share], h: usize) {
    println!("{title}:");
    for (i, (rows, t)) in shares.iter().enumerate() {
        println!(
            "  {:<10} rows {:>4}..{:<4} ({:5.1}%)  {:8.2} ms",
            set.device(i).info().spec(),
            rows.start,
            rows.end,
            100.0 * rows.len() as f64 / h as f64,
            t.as_secs_f64() * 1e3
        );
    }
    let slowest = shares.iter().map(|(_, t)| *t).max().unwrap_or_default();
    println!(
        "  wall time (slowest device): {:.2} ms",
        slowest.as_secs_f64() * 1e3
    );
}

fn main() -> BoxResult<()> {
    let o = parse_args()?;
    let set = match &o.devices {
        Some(list) => DeviceSet::from_specs(&list.iter().map(String::as_str).collect::<Vec<_>>())?,
        None => DeviceSet::all()?,
    };
    let (w, h) = o.size;
    let k = kernel()?;
    // Compile on every device first, so that the timings below are of running only.
    render(&set, &k, (w, h.min(set.len() * 2)), o.iters)?;

    let (equal, shares) = render(&set, &k, (w, h), o.iters)?;
    report(&set, "equal shares", &shares, h);

    // Throughput-derived shares: each device renders a 32-row band, timed.
    let band = 32usize.min(h);
    let tuned = set.with_throughput(band, |ex, rows| {
        let q = ex.queue();
        let out = Buffer::<u32>::new(q, w * rows.len())?;
        let d = (3.0 / w as f32).max(2.4 / h as f32);
        let (x0, y0) = (-0.7 - d * w as f32 / 2.0, -d * h as f32 / 2.0);
        let mid = (h / 2 - band / 2) as u32;
        k.launch(
            q,
            NdRange::new([w, rows.len()]),
            args![&out, w as u32, rows.len() as u32, mid, x0, y0, d, o.iters],
        )?;
        Ok(())
    })?;
    let (split, shares) = render(&tuned, &k, (w, h), o.iters)?;
    report(&tuned, "shares by measured throughput", &shares, h);

    // The same picture on the first device alone.
    let one = DeviceSet::new(&[set.device(0).clone()])?;
    let (alone, shares) = render(&one, &k, (w, h), o.iters)?;
    report(&one, "first device alone", &shares, h);
    for (name, pic) in [("equal shares", &equal), ("measured shares", &split)] {
        let differ = pic.iter().zip(&alone).filter(|(a, b)| a != b).count();
        println!(
            "{name}: {differ} of {} pixels differ from the first device alone",
            alone.len()
        );
        if differ * 1000 > alone.len() {
            return Err(format!("{name}: too many pixels differ ({differ})").into());
        }
    }
    let inside = alone.iter().filter(|&&i| i >= o.iters).count();
    println!("{inside} pixels inside the set");
    Ok(())
}

/// Every device strata finds (cpu, interp, and opencl:0 where present) renders a small picture
/// together, with equal and with uneven shares (one device of weight 0), and the counts equal
/// the first device's alone.
#[test]
fn a_split_picture_equals_one_device() {
    let set = DeviceSet::all().unwrap();
    let k = kernel().unwrap();
    let size = (40, 23);
    let one = DeviceSet::new(&[set.device(0).clone()]).unwrap();
    let (alone, _) = render(&one, &k, size, 50).unwrap();
    assert!(alone.contains(&50) && alone.iter().any(|&i| i < 5));
    let mut weights = vec![1.0; set.len()];
    weights[set.len() - 1] = 0.0;
    weights[0] = 2.5;
    for s in [set.clone(), set.with_weights(&weights).unwrap()] {
        let (pic, shares) = render(&s, &k, size, 50).unwrap();
        assert_eq!(pic, alone, "{s:?}");
        assert_eq!(shares.len(), s.len());
        assert_eq!(shares.last().unwrap().0.end, size.1);
    }
    // Every device in checked mode: the same picture, no fault, race or uninitialized read.
    let checked: Vec<_> = (0..set.len()).map(|i| set.device(i).checked()).collect();
    let (pic, _) = render(&DeviceSet::new(&checked).unwrap(), &k, size, 50).unwrap();
    assert_eq!(pic, alone);
}
