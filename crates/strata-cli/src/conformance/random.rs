//! Random numbers in kernels (`strata::random`): Philox4x32-10 on the device must give the
//! host's words bit for bit, Random123's known answers included, and so must the conversions
//! to floats in `[0, 1)` and to integers below a bound.

use super::{case, e, expect_eq, has_f64, Case};
use strata::prelude::*;
use strata::random::{self, Philox};

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("rng/philox_known_answers", known_answers),
        case("rng/philox_streams", streams),
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
    q.launch(&k, NdRange::covering(n, 32), args![&cb, &kb, &ob])
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
    let f64s = has_f64(q);
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
    q.launch(
        &k,
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
