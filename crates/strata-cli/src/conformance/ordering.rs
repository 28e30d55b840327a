//! Atomics with a memory order and scope, scoped fences, float atomic min, max and exchange,
//! and message passing between work-groups with release and acquire. Every backend implements
//! an order at least as strong as the one asked for (see `strata::ir::AtomicOrder`); these
//! cases check that ordered atomics compute what relaxed ones do, on buffers and local memory,
//! and that a value published with a release is seen by an acquire that sees the flag.

use super::{case, check, e, expect_eq_k, has_f64, Case, Rng};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("atomic_order/orders_and_scopes", orders_and_scopes),
        case("atomic_order/float_min_max_exchange_f32", float_atomics_f32),
        case("atomic_order/float_min_max_exchange_f64", float_atomics_f64),
        case("atomic_order/message_passing", message_passing),
    ]
}

fn orders_and_scopes(q: &Queue) -> Result<(), String> {
    use MemOrder::*;
    use MemScope::*;
    const L: usize = 64;
    let k = Kernel::build("atomic_orders", |k| {
        let c = k.read_write::<u32>("c");
        let olds = k.write::<u32>("olds");
        let tile = k.local_array::<u32>("tile", 1);
        let i = global_id(0);
        if_(local_id(0).eq(0u32), || tile.set(0u32, 0u32));
        barrier_local();
        c.ordered(AcqRel, Device).atomic_add(0u32, 1u32);
        c.ordered(Release, Device).atomic_sub(1u32, 1u32);
        c.ordered(SeqCst, WorkGroup).atomic_max(2u32, i);
        c.ordered(Acquire, Device).atomic_min(3u32, i);
        c.ordered(Relaxed, WorkGroup)
            .atomic_or(4u32, lit(1u32) << (i % 32u32));
        c.ordered(SeqCst, Device).atomic_xor(5u32, i);
        fence(Release, Device);
        fence(Acquire, WorkGroup);
        fence(SeqCst, Device);
        fence(AcqRel, WorkGroup);
        // An increment by a compare-exchange loop on an acquiring load.
        loop_(|| {
            let seen = c.ordered(Acquire, Device).atomic_load(6u32);
            let old = c
                .ordered(AcqRel, Device)
                .atomic_compare_exchange(6u32, seen, seen + 1u32);
            if_(old.eq(seen), break_);
        });
        olds.set(i, c.ordered(SeqCst, Device).atomic_exchange(7u32, i));
        tile.ordered(AcqRel, WorkGroup).atomic_add(0u32, 1u32);
        barrier_local();
        if_(local_id(0).eq(0u32), || {
            c.ordered(Release, WorkGroup)
                .atomic_add(8u32, tile.at(0u32));
        });
    })
    .map_err(e)?;
    for n in [L, 5 * L] {
        let init = [0, n as u32, 0, u32::MAX, 0, 0, 0, 12345, 0];
        let cb = Buffer::from_slice(q, &init).map_err(e)?;
        let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
        k.launch(q, NdRange::new(n).local(L), args![&cb, &ob])
            .map_err(e)?;
        let c = q.read(&cb).map_err(e)?;
        let mut olds = q.read(&ob).map_err(e)?;
        let want = [
            n as u32,
            0,
            n as u32 - 1,
            0,
            u32::MAX,
            (0..n as u32).fold(0, |a, b| a ^ b),
            n as u32,
        ];
        expect_eq_k(
            &format!("ordered atomics of {n} work-items"),
            &[
                "add(acq_rel)",
                "sub(release)",
                "max(seq_cst, work_group)",
                "min(acquire)",
                "or(relaxed, work_group)",
                "xor(seq_cst)",
                "compare-exchange loop",
            ],
            &c[..7],
            &want,
        )?;
        // The exchanges form one chain: the old values and the last value are the initial
        // value and every work-item's id, each once.
        olds.push(c[7]);
        olds.sort_unstable();
        let mut all: Vec<u32> = (0..n as u32).chain([12345]).collect();
        all.sort_unstable();
        check(olds == all, || {
            format!("the exchanges of {n} work-items lost or duplicated a value")
        })?;
        check(c[8] == n as u32, || {
            format!(
                "local add(acq_rel, work_group) summed over the groups is {}, not {n}",
                c[8]
            )
        })?;
    }
    Ok(())
}

/// Float atomic min, max and exchange on a buffer and in local memory, with a NaN among the
/// values (min and max drop it, as `fmin`/`fmax`; exchange moves its bits).
macro_rules! float_atomics {
    ($name:ident, $t:ty, $kernel:literal) => {
        fn $name(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::any::TypeId::of::<F>() == std::any::TypeId::of::<f64>() && !has_f64(q) {
                return Ok(());
            }
            const L: usize = 32;
            let k = Kernel::build($kernel, |k| {
                let x = k.read::<F>("x");
                let acc = k.read_write::<F>("acc");
                let olds = k.write::<F>("olds");
                let tile = k.local_array::<F>("tile", 2);
                let i = global_id(0);
                let v = x.at(i);
                if_(local_id(0).eq(0u32), || {
                    tile.set(0u32, F::INFINITY);
                    tile.set(1u32, F::NEG_INFINITY);
                });
                barrier_local();
                acc.atomic_min(0u32, v);
                acc.atomic_max(1u32, v);
                olds.set(i, acc.atomic_exchange(2u32, v));
                tile.atomic_min(0u32, v);
                tile.atomic_max(1u32, v);
                barrier_local();
                if_(local_id(0).eq(0u32), || {
                    acc.atomic_min(3u32, tile.at(0u32));
                    acc.atomic_max(4u32, tile.at(1u32));
                });
            })
            .map_err(e)?;
            let mut r = Rng::new(1501);
            let n = 4 * L;
            let mut xs: Vec<F> = (0..n).map(|_| r.f32_in(-1e6, 1e6) as F).collect();
            xs[37] = F::NAN;
            xs[90] = -F::NAN;
            let init = [
                F::INFINITY,
                F::NEG_INFINITY,
                0.5,
                F::INFINITY,
                F::NEG_INFINITY,
            ];
            let xb = Buffer::from_slice(q, &xs).map_err(e)?;
            let ab = Buffer::from_slice(q, &init).map_err(e)?;
            let ob = Buffer::<F>::new(q.device(), n).map_err(e)?;
            k.launch(&q, NdRange::new(n).local(L), args![&xb, &ab, &ob])
                .map_err(e)?;
            let acc = q.read(&ab).map_err(e)?;
            let finite = xs.iter().filter(|v| !v.is_nan());
            let mn = finite.clone().fold(F::INFINITY, |a, &b| a.min(b));
            let mx = finite.fold(F::NEG_INFINITY, |a, &b| a.max(b));
            let bits = |v: &[F]| {
                let mut b: Vec<_> = v.iter().map(|x| x.to_bits()).collect();
                b.sort_unstable();
                b
            };
            expect_eq_k(
                concat!(
                    stringify!($t),
                    " atomic min and max (buffer, then local memory)"
                ),
                &["min", "max", "exchanged", "local min", "local max"],
                &[acc[0], acc[1], acc[3], acc[4]].map(|v| v.to_bits()),
                &[mn, mx, mn, mx].map(|v| v.to_bits()),
            )?;
            let mut moved = q.read(&ob).map_err(e)?;
            moved.push(acc[2]);
            let mut all = xs.clone();
            all.push(0.5);
            check(bits(&moved) == bits(&all), || {
                concat!(
                    stringify!($t),
                    " atomic exchange lost, duplicated or changed a value's bits"
                )
                .to_string()
            })
        }
    };
}

float_atomics!(float_atomics_f32, f32, "float_atomics_f32");
float_atomics!(float_atomics_f64, f64, "float_atomics_f64");

fn message_passing(q: &Queue) -> Result<(), String> {
    use MemOrder::*;
    const PAIRS: usize = 8;
    const L: usize = 32;
    let k = Kernel::build("message_passing", |k| {
        let data = k.read_write::<u32>("data");
        let flags = k.read_write::<u32>("flags");
        let seen = k.write::<u32>("seen");
        let tries = k.scalar::<u32>("tries");
        let g = group_id(0);
        let pair = g / 2u32;
        if_(local_id(0).eq(0u32), || {
            if_((g % 2u32).eq(0u32), || {
                data.set(pair, pair * 7u32 + 1u32);
                flags
                    .ordered(Release, MemScope::Device)
                    .atomic_exchange(pair, 1u32);
            })
            .else_(|| {
                let got = var(0u32);
                let k = var(0u32);
                while_(
                    || k.get().lt(tries) & got.get().eq(0u32),
                    || {
                        let f = flags.ordered(Acquire, MemScope::Device).atomic_load(pair);
                        if_(f.eq(1u32), || got.set(data.at(pair)));
                        k.set(k.get() + 1u32);
                    },
                );
                seen.set(pair, got.get());
            });
        });
    })
    .map_err(e)?;
    let db = Buffer::<u32>::new(q.device(), PAIRS).map_err(e)?;
    let fb = Buffer::<u32>::new(q.device(), PAIRS).map_err(e)?;
    let sb = Buffer::<u32>::new(q.device(), PAIRS).map_err(e)?;
    k.launch(
        q,
        NdRange::new(2 * PAIRS * L).local(L),
        args![&db, &fb, &sb, 100_000u32],
    )
    .map_err(e)?;
    let seen = q.read(&sb).map_err(e)?;
    for (p, &s) in seen.iter().enumerate() {
        check(s == 0 || s == p as u32 * 7 + 1, || {
            format!(
                "pair {p}: the consumer saw the flag but read {s}, not the published {}",
                p * 7 + 1
            )
        })?;
    }
    // Where work-groups make progress side by side, some consumer sees its producer's flag;
    // elsewhere (PoCL may run the groups one after the other) none need to.
    let saw = seen.iter().filter(|&&s| s != 0).count();
    check(
        saw > 0 || !q.device().info().group_forward_progress(),
        || {
            "no consumer saw its producer's flag on a device with forward progress between work-groups".into()
        },
    )
}
