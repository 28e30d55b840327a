//! Random numbers in kernels (`strata::random`): Philox4x32-10 on the device must give the
//! host's words bit for bit, Random123's known answers included, and so must the conversions
//! to floats in `[0, 1)` and to integers below a bound.

use super::{case, e, expect_eq, Case};
use strata::prelude::*;
use strata::random::{self, Philox, Well512, Well512Host};

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("rng/philox_known_answers", known_answers),
        case("rng/philox_streams", streams),
        case("rng/normal", normal),
        case("rng/well512_state", well512),
    ]
}

/// Counters and keys loaded at run time (nothing folded), Random123's three vectors among them.
fn known_answers(q: &Queue) -> Result<(), String> {
    let mut ctr: Vec<u32> = vec![
        0,
        0,
        0,
        0, //
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX, //
        0x243f6a88,
        0x85a308d3,
        0x13198a2e,
        0x03707344,
    ];
    let mut key: Vec<u32> = vec![0, 0, u32::MAX, u32::MAX, 0xa4093822, 0x299f31d0];
    for i in 0..61u32 {
        let x = i.wrapping_mul(0x9E37_79B9);
        ctr.extend([x, x ^ 0xdead_beef, i, x.rotate_left(7)]);
        key.extend([x.wrapping_add(17), !x]);
    }
    let n = key.len() / 2;
    let k = Kernel::build("philox_kat", |k| {
        let c = k.read::<u32>("ctr");
        let kk = k.read::<u32>("key");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        if_(i.lt(kk.len() / 2u32), || {
            let w = random::philox4x32_10_expr(
                [
                    c.at(i * 4u32),
                    c.at(i * 4u32 + 1u32),
                    c.at(i * 4u32 + 2u32),
                    c.at(i * 4u32 + 3u32),
                ],
                [kk.at(i * 2u32), kk.at(i * 2u32 + 1u32)],
            );
            for (j, w) in w.into_iter().enumerate() {
                out.set(i * 4u32 + j as u32, w);
            }
        });
    })
    .map_err(e)?;
    let cb = Buffer::from_slice(q, &ctr).map_err(e)?;
    let kb = Buffer::from_slice(q, &key).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), 4 * n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 32), args![&cb, &kb, &ob])
        .map_err(e)?;
    let got = q.read(&ob).map_err(e)?;
    let want: Vec<u32> = (0..n)
        .flat_map(|i| {
            random::philox4x32_10(
                [ctr[4 * i], ctr[4 * i + 1], ctr[4 * i + 2], ctr[4 * i + 3]],
                [key[2 * i], key[2 * i + 1]],
            )
        })
        .collect();
    expect_eq("philox4x32_10 words", &got, &want)?;
    expect_eq(
        "Random123's known answers",
        &got[..12],
        &[
            0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
            0x6d5451fd, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1,
        ],
    )
}

/// One stream per work-item of a seed given at launch: blocks, floats and bounded integers.
fn streams(q: &Queue) -> Result<(), String> {
    const N: usize = 300;
    let f64s = q.device().info().supports_f64;
    let k = Kernel::build("philox_streams", |k| {
        let seed = k.scalar::<u64>("seed");
        let words = k.write::<u32>("words");
        let floats = k.write::<f32>("floats");
        let doubles = k.write::<f64>("doubles");
        let dice = k.write::<u32>("dice");
        let i = global_id(0);
        if_(i.lt(dice.len()), || {
            let rng = Philox::new(seed, i.cast::<u64>() * 0x1_0000_0001u64);
            let [a, b, c, d] = rng.block(i % 5u32);
            for (j, w) in [a, b, c, d].into_iter().enumerate() {
                words.set(i * 4u32 + j as u32, w);
            }
            floats.set(i, Philox::unit_f32(c));
            if f64s {
                doubles.set(i, Philox::unit_f64(a, d));
            }
            dice.set(i, Philox::below(b, 6u32));
        });
    })
    .map_err(e)?;
    let words = Buffer::<u32>::new(q.device(), 4 * N).map_err(e)?;
    let floats = Buffer::<f32>::new(q.device(), N).map_err(e)?;
    let doubles = Buffer::<f64>::new(q.device(), if f64s { N } else { 1 }).map_err(e)?;
    let dice = Buffer::<u32>::new(q.device(), N).map_err(e)?;
    let seed = 0x0123_4567_89ab_cdefu64;
    k.launch(
        q,
        NdRange::covering(N, 64),
        args![seed, &words, &floats, &doubles, &dice],
    )
    .map_err(e)?;
    let blocks: Vec<[u32; 4]> = (0..N)
        .map(|i| Philox::host_block(seed, i as u64 * 0x1_0000_0001, i as u32 % 5))
        .collect();
    let want: Vec<u32> = blocks.iter().flatten().copied().collect();
    expect_eq("stream words", &q.read(&words).map_err(e)?, &want)?;
    let want: Vec<f32> = blocks.iter().map(|b| random::unit_f32(b[2])).collect();
    expect_eq("unit_f32", &q.read(&floats).map_err(e)?, &want)?;
    if f64s {
        let want: Vec<f64> = blocks
            .iter()
            .map(|b| random::unit_f64(b[0], b[3]))
            .collect();
        expect_eq("unit_f64", &q.read(&doubles).map_err(e)?, &want)?;
    }
    let want: Vec<u32> = blocks.iter().map(|b| random::below(b[1], 6)).collect();
    let got = q.read(&dice).map_err(e)?;
    expect_eq("below(6)", &got, &want)?;
    if (0..6).any(|v| !got.contains(&v)) {
        return Err(format!("300 dice never showed every face: {got:?}"));
    }
    Ok(())
}

/// Normal variates: the device's bits are the host's (the transform uses only exactly rounded
/// operations), over a stream long enough to reach every quadrant and tiny `u1`.
fn normal(q: &Queue) -> Result<(), String> {
    const N: usize = 2048;
    let f64s = q.device().info().supports_f64;
    let k = Kernel::build("philox_normal", |k| {
        let seed = k.scalar::<u64>("seed");
        let singles = k.write::<f32>("singles");
        let doubles = k.write::<f64>("doubles");
        let i = global_id(0);
        if_(i.lt(singles.len() / 2u32), || {
            let [a, b, c, d] = Philox::new(seed, i.cast::<u64>()).block(0u32);
            let [x, y] = Philox::normal_f32(a, b);
            singles.set(i * 2u32, x);
            singles.set(i * 2u32 + 1u32, y);
            if f64s {
                let [x, y] = Philox::normal_f64([a, b, c, d]);
                doubles.set(i * 2u32, x);
                doubles.set(i * 2u32 + 1u32, y);
            }
        });
    })
    .map_err(e)?;
    let singles = Buffer::<f32>::new(q.device(), 2 * N).map_err(e)?;
    let doubles = Buffer::<f64>::new(q.device(), if f64s { 2 * N } else { 1 }).map_err(e)?;
    let seed = 0x005e_ed0f_9a55_u64;
    k.launch(q, NdRange::covering(N, 64), args![seed, &singles, &doubles])
        .map_err(e)?;
    let blocks: Vec<[u32; 4]> = (0..N as u64)
        .map(|i| Philox::host_block(seed, i, 0))
        .collect();
    let want: Vec<u32> = blocks
        .iter()
        .flat_map(|b| random::normal_f32(b[0], b[1]))
        .map(f32::to_bits)
        .collect();
    let got: Vec<u32> = q
        .read(&singles)
        .map_err(e)?
        .iter()
        .map(|x| x.to_bits())
        .collect();
    expect_eq("normal_f32 bits", &got, &want)?;
    if f64s {
        let want: Vec<u64> = blocks
            .iter()
            .flat_map(|&b| random::normal_f64(b))
            .map(f64::to_bits)
            .collect();
        let got: Vec<u64> = q
            .read(&doubles)
            .map_err(e)?
            .iter()
            .map(|x| x.to_bits())
            .collect();
        expect_eq("normal_f64 bits", &got, &want)?;
    }
    Ok(())
}

/// WELL512 keeps its state in a buffer: three launches of five words per work-item continue
/// the host generator's streams, and the stored states equal the host's.
fn well512(q: &Queue) -> Result<(), String> {
    const N: usize = 200;
    const DRAWS: u32 = 5;
    let k = Kernel::build("well512_draws", |k| {
        let states = k.read_write::<u32>("states");
        let out = k.write::<u32>("out");
        let normals = k.write::<f32>("normals");
        let i = global_id(0);
        if_(i.lt(normals.len()), || {
            let mut g = Well512::load(states, i);
            for j in 0..DRAWS {
                out.set(i * DRAWS + j, g.next_u32());
            }
            let [x, _] = g.normal_f32();
            normals.set(i, x);
            g.store();
        });
    })
    .map_err(e)?;
    let seed = 77u64;
    let states = Buffer::from_slice(q, &Well512::seed_states(seed, N)).map_err(e)?;
    let out = Buffer::<u32>::new(q.device(), N * DRAWS as usize).map_err(e)?;
    let normals = Buffer::<f32>::new(q.device(), N).map_err(e)?;
    let mut host: Vec<Well512Host> = (0..N as u64).map(|i| Well512Host::new(seed, i)).collect();
    for launch in 0..3 {
        k.launch(q, NdRange::covering(N, 32), args![&states, &out, &normals])
            .map_err(e)?;
        let mut want = Vec::new();
        let mut want_normals = Vec::new();
        for g in &mut host {
            want.extend((0..DRAWS).map(|_| g.next_u32()));
            let (a, b) = (g.next_u32(), g.next_u32());
            want_normals.push(random::normal_f32(a, b)[0].to_bits());
        }
        expect_eq(
            &format!("WELL512 words, launch {launch}"),
            &q.read(&out).map_err(e)?,
            &want,
        )?;
        let got: Vec<u32> = q
            .read(&normals)
            .map_err(e)?
            .iter()
            .map(|x| x.to_bits())
            .collect();
        expect_eq(
            &format!("WELL512 normals, launch {launch}"),
            &got,
            &want_normals,
        )?;
    }
    let want: Vec<u32> = host
        .iter()
        .flat_map(|g| g.state.into_iter().chain([g.index]))
        .collect();
    expect_eq("WELL512 stored states", &q.read(&states).map_err(e)?, &want)
}
