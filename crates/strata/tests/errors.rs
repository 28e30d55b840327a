//! Every bad input, triggered through the public API, with assertions on the message text: the
//! message must name what is wrong (kernel, parameter, sizes, indices, work-item) so that the
//! user can fix it without a debugger.

use std::cell::Cell;
use strata::ir::{self, Literal, ParamKind, Scalar, Stmt, Type};
use strata::prelude::*;
use strata::{BackendKind, Error, Run};

fn cpu() -> (Device, Queue) {
    let d = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&d).unwrap();
    (d, q)
}

/// The message of `r`, which must be an error.
#[track_caller]
fn msg<T>(r: strata::Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error, got Ok"),
        Err(e) => {
            let m = e.to_string();
            eprintln!("{m}\n");
            m
        }
    }
}

/// Asserts that `m` contains every one of `parts`.
#[track_caller]
fn has(m: &str, parts: &[&str]) {
    for p in parts {
        assert!(m.contains(p), "message lacks {p:?}:\n{m}");
    }
}

fn saxpy() -> Kernel {
    Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .unwrap()
}

/// A kernel that copies `x` to `y`; used where only the launch configuration matters.
fn copy_kernel() -> Kernel {
    Kernel::build("copy", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, x.at(i)));
    })
    .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Devices

#[test]
fn invalid_device_spec() {
    for spec in ["gpu", "cuda:x", "opencl:", "metal:0", "vulkan:"] {
        let e = Device::from_spec(spec).unwrap_err();
        assert!(matches!(e, Error::InvalidDeviceSpec(_)), "{spec}: {e:?}");
        has(
            &e.to_string(),
            &[
                &format!("`{spec}`"),
                "cpu",
                "opencl:N",
                "cuda:N",
                "vulkan:N",
                "best",
            ],
        );
        // `str::parse` is the same, error included.
        assert_eq!(spec.parse::<Device>().unwrap_err(), e);
    }
    let d: Device = "cpu".parse().unwrap();
    assert_eq!(d.info().backend, BackendKind::Cpu);
}

#[test]
fn missing_devices() {
    let count = |k: BackendKind| {
        strata::devices()
            .iter()
            .filter(|d| d.info().backend == k)
            .count()
    };
    // One past the last device of each backend (index 0 where a backend has none here).
    for (kind, want) in [
        (BackendKind::OpenCl, 0usize),
        (BackendKind::Cuda, 3),
        (BackendKind::Cpu, 1),
    ] {
        let n = count(kind);
        let index = want.max(n);
        let spec = format!("{}:{index}", kind.name());
        let m = msg(Device::from_spec(&spec));
        has(&m, &[&format!("no device `{spec}`"), kind.name()]);
        if n == 0 {
            // Says why the backend has no devices.
            let (_, why) = strata::unavailable_backends()
                .into_iter()
                .find(|(k, _)| *k == kind)
                .expect("a backend without devices is listed as unavailable");
            has(&m, &["has no devices", &why]);
        } else {
            has(&m, &[&format!("has {n} device(s)"), "numbered from 0"]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Launch arguments

#[test]
fn wrong_argument_count_lists_the_signature() {
    let (_, q) = cpu();
    let x = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![2.0f32, &x]));
    has(
        &m,
        &[
            "kernel `saxpy` takes 3 argument(s)",
            "a: f32, x: Buffer<f32> (read), y: Buffer<f32> (read_write)",
            "but 2 were given",
        ],
    );
}

#[test]
fn wrong_buffer_element_type() {
    let (_, q) = cpu();
    let x = Buffer::from_slice(&q, &[1i32; 4]).unwrap();
    let y = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![2.0f32, &x, &y]));
    has(
        &m,
        &[
            "kernel `saxpy` argument 1 (`x`)",
            "expected a buffer of f32",
            "got a buffer of 4 i32",
        ],
    );
}

#[test]
fn wrong_scalar_type() {
    let (_, q) = cpu();
    let x = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let y = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![2.0f64, &x, &y]));
    has(
        &m,
        &[
            "argument 0 (`a`)",
            "expected a f32 value",
            "got a f64 value",
            "2f32",
        ],
    );
}

#[test]
fn scalar_where_a_buffer_is_expected() {
    let (_, q) = cpu();
    let y = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![2.0f32, 3.0f32, &y]));
    has(
        &m,
        &[
            "argument 1 (`x`)",
            "expected a buffer of f32",
            "got a f32 value",
        ],
    );
    // And a buffer where a scalar is expected.
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![&y, &y, &y]));
    has(
        &m,
        &[
            "argument 0 (`a`)",
            "expected a f32 value",
            "got a buffer of 4 f32",
        ],
    );
}

#[test]
fn stated_buffer_length() {
    let (_, q) = cpu();
    let k = Kernel::build("fixed", |k| {
        let x = k.read_write::<u32>("x").expect_len(16);
        x.set(global_id(0), 1u32);
    })
    .unwrap();
    let x = Buffer::<u32>::new(q.device(), 10).unwrap();
    let m = msg(k.launch(&q, NdRange::new(10), args![&x]));
    has(
        &m,
        &[
            "kernel `fixed` argument 0 (`x`)",
            "exactly 16 elements",
            "the buffer has 10",
        ],
    );
}

#[test]
fn aliasing_written_and_read_only() {
    let (_, q) = cpu();
    let y = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![2.0f32, &y, &y]));
    has(
        &m,
        &[
            "kernel `saxpy`",
            "the same buffer",
            "`y` (which the kernel writes)",
            "`x` (declared read-only)",
        ],
    );
    // A clone of the handle shares the memory: still aliasing.
    let y2 = y.clone();
    assert!(saxpy()
        .launch(&q, NdRange::new(4), args![2.0f32, &y2, &y])
        .is_err());
}

#[test]
fn wrong_local_mem_argument() {
    let (_, q) = cpu();
    let k = Kernel::build("dynlocal", |k| {
        let out = k.write::<f32>("out");
        let scratch = k.local_array_dyn::<f32>("scratch");
        scratch.set(local_id(0), 1.0f32);
        barrier();
        out.set(global_id(0), scratch.at(local_id(0)));
    })
    .unwrap();
    let out = Buffer::<f32>::new(q.device(), 8).unwrap();
    let m = msg(k.launch(&q, NdRange::new(8), args![&out, LocalMem::<u32>::new(8)]));
    has(
        &m,
        &[
            "argument 1 (`scratch_len`)",
            "LocalMem<f32>",
            "got LocalMem<u32> of 8",
        ],
    );
    let m = msg(k.launch(&q, NdRange::new(8), args![&out, 8u32]));
    has(
        &m,
        &[
            "argument 1 (`scratch_len`)",
            "a LocalMem size",
            "got a u32 value",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Work sizes

#[test]
fn invalid_work_sizes() {
    let (d, q) = cpu();
    let info = d.info().clone();
    let k = copy_kernel();
    let x = Buffer::<f32>::new(&d, 4096).unwrap();
    let y = Buffer::<f32>::new(&d, 4096).unwrap();
    let launch = |r: NdRange| msg(k.launch(&q, r, args![&x, &y]));

    let m = launch(NdRange::new(100).local(64));
    has(
        &m,
        &[
            "invalid work size for kernel `copy`",
            "global size 100 in dimension 0 is not a multiple of local size 64",
            "NdRange::covering",
        ],
    );
    let m = launch(NdRange::new([8, 8]).local([8, 0]));
    has(&m, &["local size 0 in dimension 1"]);
    // In 2-D and 3-D the message names the n-D remedy.
    let m = launch(NdRange::new([64, 37]).local([16, 8]));
    has(
        &m,
        &[
            "global size 37 in dimension 1 is not a multiple of local size 8",
            "`NdRange::covering([w, h], [lx, ly])`",
            "`if in_bounds(global_id2(), vec2(w, h))`",
        ],
    );
    let m = launch(NdRange::new([8, 8, 5]).local([4, 4, 2]));
    has(
        &m,
        &[
            "`NdRange::covering([w, h, d], [lx, ly, lz])`",
            "`if in_bounds(global_id3(), vec3(w, h, d))`",
        ],
    );

    // Too large in one dimension (dimension 2 has the smallest limit).
    let over = info.max_work_item_sizes[2] + 1;
    let m = launch(NdRange::new([1, 1, over]).local([1, 1, over]));
    has(
        &m,
        &[
            &format!("local size {over} in dimension 2"),
            &format!("maximum of {}", info.max_work_item_sizes[2]),
        ],
    );

    // Each dimension fits, the product does not.
    let side = (info.max_work_group_size as f64).sqrt() as usize + 1;
    assert!(side <= info.max_work_item_sizes[0] && side <= info.max_work_item_sizes[1]);
    let m = launch(NdRange::new([side, side]).local([side, side]));
    has(
        &m,
        &[
            &format!(
                "work-group of {} work-items ({side} x {side} x 1)",
                side * side
            ),
            &format!("maximum of {}", info.max_work_group_size),
        ],
    );

    let m = launch(NdRange::new([64, 64]).local(64));
    has(
        &m,
        &["the global size has 2 dimension(s) but the local size has 1"],
    );

    let big = u32::MAX as usize + 1;
    let m = launch(NdRange::new([1, big]));
    has(
        &m,
        &[&format!("global size {big} in dimension 1"), "2^32 - 1"],
    );

    // At the `usize` overflow edge: every dimension fits, their product does not; a
    // covering range whose rounding up would wrap saturates and is refused.
    let max = u32::MAX as usize;
    let m = launch(NdRange::new([max, max, 2]));
    has(
        &m,
        &[&format!(
            "global size {max} x {max} x 2: more work-items than a `usize` holds"
        )],
    );
    assert_eq!(
        NdRange::new([max, max, max]).local([1, 1, 1]).group_count(),
        usize::MAX
    );
    let m = launch(NdRange::covering([usize::MAX - 1, 1], [16, 1]));
    has(
        &m,
        &[
            &format!("global size {} in dimension 0", usize::MAX),
            "2^32 - 1",
        ],
    );
}

#[test]
fn too_much_local_memory() {
    let (d, q) = cpu();
    let have = d.info().local_mem_size;
    let len = (have / 4 + 1) as u32;
    let k = Kernel::build("hog", |k| {
        let out = k.write::<f32>("out");
        let big = k.local_array::<f32>("big", len);
        big.set(local_id(0), 1.0f32);
        barrier();
        out.set(global_id(0), big.at(0u32));
    })
    .unwrap();
    let out = Buffer::<f32>::new(&d, 8).unwrap();
    let m = msg(k.launch(&q, NdRange::new(8), args![&out]));
    has(
        &m,
        &[
            "kernel `hog`",
            &format!("needs {} bytes of local memory", len as u64 * 4),
            &format!("the device has {have}"),
        ],
    );

    // The same through a launch-time size.
    let k = Kernel::build("hog_dyn", |k| {
        let out = k.write::<f32>("out");
        let big = k.local_array_dyn::<f32>("big");
        big.set(local_id(0), 1.0f32);
        barrier();
        out.set(global_id(0), big.at(0u32));
    })
    .unwrap();
    let m = msg(k.launch(
        &q,
        NdRange::new(8),
        args![&out, LocalMem::<f32>::new(len as usize)],
    ));
    has(
        &m,
        &[
            "kernel `hog_dyn`",
            &format!("needs {} bytes of local memory", len as u64 * 4),
        ],
    );
    // A length no launch can pass (local lengths are u32 in kernels).
    let m = msg(k.launch(
        &q,
        NdRange::new(8),
        args![&out, LocalMem::<f32>::new(1 << 33)],
    ));
    has(
        &m,
        &[
            "kernel `hog_dyn`",
            "LocalMem of at most 2^32 - 1 elements",
            "LocalMem<f32> of 8589934592",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Allocation

#[test]
fn out_of_memory() {
    let (d, _) = cpu();
    let len = usize::MAX / 2;
    let m = msg(Buffer::<f32>::new(&d, len));
    has(
        &m,
        &[
            "out of memory on cpu",
            &format!("{len} elements of 4 bytes"),
            "overflow",
        ],
    );

    let max = d.info().max_alloc_size;
    let len = (max / 4 + 1) as usize;
    let m = msg(Buffer::<f32>::new(&d, len));
    has(
        &m,
        &[
            "out of memory on cpu",
            &format!("cannot allocate {} bytes", len * 4),
            &format!("largest allocation is {max} bytes"),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Kernel faults

/// Launches a one-buffer kernel over `n` work-items in groups of `local` and returns its error.
fn fault(k: &Kernel, n: usize, local: usize) -> String {
    let (d, q) = cpu();
    let buf = Buffer::<u32>::new(&d, n).unwrap();
    msg(k.launch(&q, NdRange::new(n).local(local), args![&buf]))
}

#[test]
fn out_of_bounds_global_load_and_store() {
    // Work-item 13 reads one past the end of a 16-element buffer.
    let load = Kernel::build("oob_load", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        let j = select::<u32>(i.eq(13u32), x.len(), i);
        let v = x.at(j);
        x.set(i, v + 1u32);
    })
    .unwrap();
    let m = fault(&load, 16, 8);
    has(
        &m,
        &[
            "kernel `oob_load`",
            "index 16 is out of bounds for buffer `x` of length 16",
            "work-item global (13, 0, 0), local (5, 0, 0) in work-group (1, 0, 0)",
        ],
    );

    let store = Kernel::build("oob_store", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(i.eq(6u32), || x.set(i + 100u32, 1u32));
    })
    .unwrap();
    let m = fault(&store, 16, 4);
    has(
        &m,
        &[
            "kernel `oob_store`",
            "index 106 is out of bounds for buffer `x` of length 16",
            "global (6, 0, 0), local (2, 0, 0) in work-group (1, 0, 0)",
        ],
    );

    // Negative indices are out of bounds too.
    let neg = Kernel::build("oob_negative", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0).cast::<i32>();
        if_(i.eq(3i32), || x.set(i - 5i32, 1u32));
    })
    .unwrap();
    let m = fault(&neg, 8, 8);
    has(
        &m,
        &[
            "index -2 is out of bounds for buffer `x`",
            "global (3, 0, 0)",
        ],
    );
}

#[test]
fn out_of_bounds_local() {
    let load = Kernel::build("oob_local_load", |k| {
        let x = k.write::<u32>("x");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        tile.set(l, l);
        barrier();
        // Work-item 7 of each group reads tile[8].
        x.set(global_id(0), tile.at(l + 1u32));
    })
    .unwrap();
    let m = fault(&load, 8, 8);
    has(
        &m,
        &[
            "kernel `oob_local_load`",
            "index 8 is out of bounds for local array `tile` of length 8",
            "global (7, 0, 0), local (7, 0, 0) in work-group (0, 0, 0)",
        ],
    );

    let store = Kernel::build("oob_local_store", |k| {
        let x = k.write::<u32>("x");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        tile.set(l * 3u32, l);
        barrier();
        x.set(global_id(0), tile.at(0u32));
    })
    .unwrap();
    let m = fault(&store, 8, 8);
    // Work-item 3 is the first to store past the end (index 9).
    has(
        &m,
        &[
            "index 9 is out of bounds for local array `tile` of length 8",
            "local (3, 0, 0)",
        ],
    );
}

#[test]
fn out_of_bounds_private() {
    let load = Kernel::build("oob_private_load", |k| {
        let x = k.read_write::<u32>("x");
        let p = private_array::<u32>("p", 4);
        for j in 0..4u32 {
            p.set(j, j);
        }
        let i = global_id(0);
        x.set(i, p.at(x.at(i)));
    })
    .unwrap();
    let (d, q) = cpu();
    let xs: Vec<u32> = vec![0, 1, 2, 3, 0, 9, 1, 2];
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let m = msg(load.launch(&q, NdRange::new(8).local(8), args![&x]));
    has(
        &m,
        &[
            "kernel `oob_private_load`",
            "index 9 is out of bounds for private array `p` of length 4",
            "global (5, 0, 0)",
        ],
    );

    let store = Kernel::build("oob_private_store", |k| {
        let x = k.read_write::<u32>("x");
        let p = private_array::<u32>("p", 4);
        let i = global_id(0);
        p.set(x.at(i), 1u32);
        x.set(i, p.at(0u32));
    })
    .unwrap();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let m = msg(store.launch(&q, NdRange::new(8).local(8), args![&x]));
    has(
        &m,
        &[
            "index 9 is out of bounds for private array `p` of length 4",
            "global (5, 0, 0)",
        ],
    );
    drop(d);
}

#[test]
fn barrier_reached_by_part_of_a_work_group() {
    let k = Kernel::build("half_barrier", |k| {
        let x = k.read_write::<u32>("x");
        let l = local_id(0);
        if_(l.lt(3u32), || {
            x.set(global_id(0), 1u32);
            barrier();
        });
    })
    .unwrap();
    let m = fault(&k, 8, 8);
    has(
        &m,
        &[
            "kernel `half_barrier`",
            "barrier reached by only 3 of the 8 work-items of work-group (0, 0, 0)",
            "every work-item of a work-group must reach it",
        ],
    );
}

#[test]
fn collective_in_divergent_code() {
    let k = Kernel::build("half_reduce", |k| {
        let x = k.read_write::<u32>("x");
        let l = local_id(0);
        if_(l.ge(5u32), || {
            let s = group_reduce_add(l);
            x.set(global_id(0), s);
        });
    })
    .unwrap();
    let m = fault(&k, 8, 8);
    has(
        &m,
        &[
            "kernel `half_reduce`",
            "group_reduce_add reached by only 3 of the 8 work-items",
        ],
    );
}

#[test]
fn sub_group_collective_in_divergent_code() {
    // Sub-group collectives follow the work-group rule (what OpenCL without native sub-groups
    // needs): a sub-group whose lanes all arrive is not enough.
    let k = Kernel::build("half_sub_reduce", |k| {
        let x = k.read_write::<u32>("x");
        let l = local_id(0);
        if_(l.lt(32u32), || {
            let s = sub_group_reduce_add(l);
            x.set(global_id(0), s);
        });
    })
    .unwrap();
    for spec in ["cpu", "interp"] {
        let d = Device::from_spec(spec).unwrap();
        let q = Queue::new(&d).unwrap();
        let buf = Buffer::<u32>::new(&d, 64).unwrap();
        let m = msg(k.launch(&q, NdRange::new(64).local(64), args![&buf]));
        has(
            &m,
            &[
                "kernel `half_sub_reduce`",
                "sub_group_reduce_add reached by only 32 of the 64 work-items",
            ],
        );
    }
}

#[test]
fn sub_group_broadcast_from_a_missing_lane() {
    // 40 work-items: sub-groups of 32 and 8; lane 10 exists in the first only.
    let k = Kernel::build("far_broadcast", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        x.set(i, sub_group_broadcast(i, 10u32));
    })
    .unwrap();
    for spec in ["cpu", "interp"] {
        let d = Device::from_spec(spec).unwrap();
        let q = Queue::new(&d).unwrap();
        let buf = Buffer::<u32>::new(&d, 40).unwrap();
        let m = msg(k.launch(&q, NdRange::new(40).local(40), args![&buf]));
        has(
            &m,
            &[
                "kernel `far_broadcast`",
                "sub_group_broadcast from lane 10, but the sub-group has 8",
                "global (32, 0, 0)",
            ],
        );
    }
}

#[test]
fn orders_an_atomic_or_fence_cannot_have() {
    let m = Kernel::build("relaxed_fence", |k| {
        let x = k.read_write::<u32>("x");
        x.set(0u32, 1u32);
        fence(MemOrder::Relaxed, MemScope::Device);
    })
    .map(|_| ())
    .unwrap_err()
    .to_string();
    has(
        &m,
        &[
            "kernel `relaxed_fence` is invalid",
            "a relaxed fence orders nothing: give it acquire, release, acq_rel or seq_cst",
        ],
    );
    let m = Kernel::build("release_load", |k| {
        let x = k.read_write::<u32>("x");
        let v = x
            .ordered(MemOrder::Release, MemScope::WorkGroup)
            .atomic_load(0u32);
        x.set(1u32, v);
    })
    .map(|_| ())
    .unwrap_err()
    .to_string();
    has(
        &m,
        &[
            "kernel `release_load` is invalid",
            "an atomic load cannot be release: it writes nothing to release (use an atomic exchange)",
            "atomic_load(&x[0u32], release, work_group)",
        ],
    );
}

#[test]
fn integer_division_by_zero() {
    for (name, rem) in [("div0", false), ("rem0", true)] {
        let k = Kernel::build(name, |k| {
            let x = k.read_write::<i32>("x");
            let i = global_id(0);
            let v = x.at(i);
            let r = if rem { 100i32 % v } else { 100i32 / v };
            x.set(i, r);
        })
        .unwrap();
        let (_, q) = cpu();
        let x = Buffer::from_slice(&q, &[1i32, 2, 3, 4, 0, 5, 6, 7]).unwrap();
        let m = msg(k.launch(&q, NdRange::new(8).local(8), args![&x]));
        let what = if rem { "remainder" } else { "division" };
        has(
            &m,
            &[
                &format!("kernel `{name}`"),
                &format!("integer {what} by zero"),
                "global (4, 0, 0)",
            ],
        );
    }
}

#[test]
fn zero_loop_step_at_run_time() {
    let k = Kernel::build("stuck", |k| {
        let x = k.read_write::<u32>("x");
        let step = k.scalar::<u32>("step");
        let mut acc = var(0u32);
        for_step(0u32, 10u32, step, |j| acc += j);
        x.set(global_id(0), acc.get());
    })
    .unwrap();
    let (d, q) = cpu();
    let x = Buffer::<u32>::new(&d, 4).unwrap();
    let m = msg(k.launch(&q, NdRange::new(4), args![&x, 0u32]));
    has(
        &m,
        &["kernel `stuck`", "for loop step is 0", "global (0, 0, 0)"],
    );
    // The same kernel with a step runs.
    k.launch(&q, NdRange::new(4), args![&x, 3u32]).unwrap();
    assert_eq!(
        q.read(&x).unwrap(),
        vec![(0..10).step_by(3).sum::<u32>(); 4]
    );
}

// ---------------------------------------------------------------------------------------------
// Invalid kernels

#[test]
fn builder_errors_are_all_reported() {
    // An Expr recorded for one kernel, smuggled into another.
    let stolen: Cell<Option<Expr<u32>>> = Cell::new(None);
    Kernel::build("donor", |_| stolen.set(Some(global_id(0) * 7u32))).unwrap();
    let stolen = stolen.get().unwrap();

    // Each error names the line of the kernel body that caused it.
    let lines = Cell::new([0u32; 4]);
    let m = msg(Kernel::build("broken", |k| {
        let x = k.read_write::<f32>("x");
        let l0 = line!() + 1;
        break_();
        let v = vec4(1.0f32, 2.0, 3.0, 4.0);
        let l1 = line!() + 1;
        let w: Expr<f32> = v.cast::<f32>();
        let l2 = line!() + 1;
        x.set(stolen, w);
        let l3 = line!() + 1;
        continue_();
        lines.set([l0, l1, l2, l3]);
    }));
    let at = |i: usize| format!("(at {}:{}:", file!(), lines.get()[i]);
    has(
        &m,
        &[
            "kernel `broken` is invalid",
            &format!("break_() outside of a loop {}", at(0)),
            &format!("cast from f32x4 to f32: casts keep the width; use a vector constructor or extract {}", at(1)),
            "an Expr recorded for another kernel",
            &format!("used in kernel `broken`; values cannot cross kernels, pass them as parameters {}", at(2)),
            &format!("continue_() outside of a loop {}", at(3)),
        ],
    );
    // Operators report where they were written, too.
    let line = Cell::new(0);
    let m = msg(Kernel::build("broken_op", |k| {
        let x = k.read_write::<u32>("x");
        line.set(line!() + 1);
        let y = stolen + 1u32;
        x.set(0u32, y);
    }));
    has(
        &m,
        &[
            "an Expr recorded for another kernel",
            &format!("(at {}:{}:", file!(), line.get()),
        ],
    );
}

#[test]
fn conversion_errors_name_the_line() {
    let lines = Cell::new([0u32; 2]);
    let m = msg(Kernel::build("bad_convert", |k| {
        let x = k.read_write::<f32>("x");
        let v = x.at(0u32);
        let l0 = line!() + 1;
        let a: Expr<f64> = v.cast_sat::<f64>();
        let l1 = line!() + 1;
        let b: Expr<[i32; 2]> = v.convert::<[i32; 2]>(Rounding::Up);
        x.set(0u32, a.cast::<f32>() + b.x().cast::<f32>());
        lines.set([l0, l1]);
    }));
    let at = |i: usize| format!("(at {}:{}:", file!(), lines.get()[i]);
    has(
        &m,
        &[
            &format!(
                "cast_sat to f64: saturation is for integer targets; use `cast` or `convert` {}",
                at(0)
            ),
            &format!(
                "convert from f32 to i32x2: conversions keep the width and take numeric types {}",
                at(1)
            ),
        ],
    );
}

#[test]
fn value_used_outside_its_block() {
    let leaked: Cell<Option<Expr<f32>>> = Cell::new(None);
    let m = msg(Kernel::build("leak", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        if_(i.lt(4u32), || leaked.set(Some(x.at(i).named("inner"))));
        x.set(i, leaked.get().unwrap());
        // A second misuse, reported in the same message.
        for_range(0u32, i, |_| leaked.set(Some(x.at(0u32))));
        x.set(0u32, leaked.get().unwrap());
    }));
    has(
        &m,
        &[
            "kernel `leak` is invalid (2 errors)",
            "at body[1]: uses value `inner`",
            "outside the block that defines it",
            "at body[3]: uses value",
            "--- IR ---",
        ],
    );
}

#[test]
fn validator_reports_every_error_with_its_location() {
    // Hand-built IR with four independent problems.
    let mut f = ir::Function::new("handmade");
    let x = f.params.push(ir::Param {
        name: "x".into(),
        kind: ParamKind::Buffer {
            elem: strata::ir::Elem::Value(Type::F32),
            access: ir::Access::Read,
            len: None,
        },
    });
    let one = f.exprs.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::U32, 1)),
        Type::U32,
    );
    let flt = f.exprs.intern(
        ir::Expr::Literal(Literal::from_bits(Scalar::F32, 2.0f32.to_bits() as u64)),
        Type::F32,
    );
    f.body = vec![
        // Stores into a read-only buffer.
        Stmt::Store {
            mem: ir::Mem::Buffer(x),
            index: one,
            value: flt,
            at: strata::ir::SourceLoc::NONE,
        },
        // Breaks out of a loop that does not exist.
        Stmt::Break(ir::LoopId::new(7)),
        // An if on a u32.
        Stmt::If {
            cond: one,
            then: vec![Stmt::Return],
            otherwise: vec![],
        },
    ];
    let m = msg(Kernel::from_ir(f));
    has(
        &m,
        &[
            "kernel `handmade` is invalid (3 errors)",
            "at body[0]: stores into buffer `x`, which is declared read-only",
            "at body[1]: break outside of the loop it names (loop 7)",
            "at body[2]: if condition has type u32; it must be bool",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Transfers

#[test]
fn transfer_ranges_that_do_not_fit() {
    let (d, q) = cpu();
    let b = Buffer::from_slice(&q, &[0u32; 10]).unwrap();
    let m = msg(q.read_range(&b, 5..20));
    has(
        &m,
        &["read", "range 5..20 does not fit a buffer of 10 elements"],
    );
    #[allow(clippy::reversed_empty_ranges)]
    let m = msg(q.read_range(&b, 7..3));
    has(&m, &["read", "range 7..3"]);
    let m = msg(q.write(&b, 8.., &[1u32; 5]));
    has(
        &m,
        &["write", "range 8..13 does not fit a buffer of 10 elements"],
    );
    // At the `usize` edge the range's end saturates and does not fit; it never wraps.
    let m = msg(q.write(&b, usize::MAX - 1.., &[1u32; 5]));
    has(
        &m,
        &[
            "write",
            &format!(
                "range {}..{} does not fit a buffer of 10 elements",
                usize::MAX - 1,
                usize::MAX
            ),
        ],
    );
    let m = msg(q.read_range(&b, 3..=usize::MAX));
    has(
        &m,
        &["read", &format!("range 3..{} does not fit", usize::MAX)],
    );
    // A closed range must have the data's length; an open one takes it.
    let m = msg(q.write(&b, 2..4, &[1u32; 3]));
    has(
        &m,
        &["write", "range 2..4 is not the 3 elements of the data"],
    );
    q.write(&b, 2..5, &[1u32; 3]).unwrap();
    let m = msg(q.fill(&b, 1u32, 0..11));
    has(
        &m,
        &["fill", "range 0..11 does not fit a buffer of 10 elements"],
    );

    let small = Buffer::<u32>::new(&d, 4).unwrap();
    let m = msg(q.copy(&b, 2..7, &small, 0..));
    has(
        &m,
        &["copy", "range 0..5 does not fit a buffer of 4 elements"],
    );
    let m = msg(q.copy(&small, 2..5, &b, 0..));
    has(
        &m,
        &["copy", "range 2..5 does not fit a buffer of 4 elements"],
    );

    let m = msg(q.copy(&b, 0..4, &small, 0..3));
    has(
        &m,
        &[
            "copy",
            "range 0..3 is not the 4 elements of the source range",
        ],
    );
    let m = msg(q.copy(&b, 0..6, &b, 4..));
    has(
        &m,
        &[
            "copy",
            "source 0..6 and destination 4..10 overlap in the same buffer",
        ],
    );
    // Disjoint ranges of one buffer are fine.
    q.copy(&b, 0..5, &b, 5..).unwrap();

    let mut out = vec![0u32; 5];
    let m = msg(q.read_into(&b, &mut out));
    has(
        &m,
        &[
            "read",
            "the destination slice has 5 elements but the buffer has 10",
            "read_range",
        ],
    );
}

#[test]
fn gather_with_wrong_type_or_index() {
    let (_, q) = cpu();
    let k = Kernel::build("g", |k| {
        let x = k.read::<f32>("x");
        k.gather_add(x.at(global_id(0)));
    })
    .unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32; 8]).unwrap();
    let run: Run = k.launch(&q, NdRange::new(8), args![&x]).unwrap();
    let m = msg(run.gather::<u32>(0).map(|_| ()));
    has(&m, &["gather 0 holds f32, not u32"]);
    let m = msg(run.gather::<f32>(3).map(|_| ()));
    has(
        &m,
        &["the kernel declares 1 gather(s)", "index 3 does not exist"],
    );
    assert_eq!(run.gather::<f32>(0).unwrap().get().unwrap(), 8.0);
}

#[test]
fn stub_without_cpu_body_is_rejected_by_the_cpu_backend() {
    let dev = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&dev).unwrap();
    let twice = Stub::<(f32,), f32>::new("twice")
        .source("opencl", "float twice(float x) { return 2.0f * x; }");
    let k = Kernel::build("needs_stub", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        x.set(i, twice.call((x.at(i),)));
    })
    .unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
    let msg = k
        .launch(&q, NdRange::new(4), strata::args![&x])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("kernel `needs_stub` cannot run on cpu"),
        "{msg}"
    );
    assert!(
        msg.contains("stub function `twice` has no body for the CPU backend"),
        "{msg}"
    );
    assert!(msg.contains("Stub::cpu"), "{msg}");
}

#[test]
fn two_different_stubs_with_one_name_are_rejected() {
    let a = Stub::<(u32,), u32>::new("f")
        .source("opencl", "uint f(uint x) { return x; }")
        .cpu(|x: u32| x);
    let b = Stub::<(u32,), u32>::new("f")
        .source("opencl", "uint f(uint x) { return x + 1u; }")
        .cpu(|x: u32| x + 1);
    let err = Kernel::build("two_fs", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        x.set(i, a.call((x.at(i),)) + b.call((x.at(i),)));
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("two different stub functions are named `f` in kernel `two_fs`"),
        "{err}"
    );
}

/// A kernel that writes one element past the end of `out` (a fault on the CPU backend).
fn out_of_bounds() -> Kernel {
    Kernel::build("oob", |k| {
        let out = k.write::<u32>("out");
        out.set(out.len() + global_id(0), 1u32);
    })
    .unwrap()
}

/// In an in-order queue a failed command fails the commands after it until the failure is
/// observed (a wait returning it, or `finish`); then the queue runs normally again.
#[test]
fn a_failed_command_fails_the_rest_of_its_queue_until_observed() {
    let (cpu, qc) = cpu();
    let oob = out_of_bounds();
    let small = Buffer::<u32>::new(&cpu, 4).unwrap();

    // On the same queue: the fault, not waited for, then a blocking read.
    let data = Buffer::from_slice(&qc, &[1u32, 2, 3]).unwrap();
    let run = oob
        .enqueue(&qc, NdRange::new(1), args![&small], &[])
        .unwrap();
    let m = msg(qc.read(&data));
    has(
        &m,
        &["an earlier command on this queue failed", "out of bounds"],
    );
    // The read's error observed the failure: the queue works again, and the run keeps its own
    // error.
    assert_eq!(qc.read(&data).unwrap(), [1, 2, 3]);
    has(
        &msg(run.wait()),
        &["index 4 is out of bounds for buffer `out`"],
    );
    qc.finish().unwrap();

    // `finish` reports a failure nobody waited for, once.
    oob.enqueue(&qc, NdRange::new(1), args![&small], &[])
        .unwrap();
    has(&msg(qc.finish()), &["out of bounds"]);
    qc.finish().unwrap();
    assert_eq!(qc.read(&data).unwrap(), [1, 2, 3]);

    // On every device's queue: a command failed through its wait list poisons that queue.
    for d in strata::devices() {
        let q = Queue::new(&d).unwrap();
        let b = Buffer::from_slice(&q, &[1u32, 2, 3]).unwrap();
        let fault = oob
            .enqueue(&qc, NdRange::new(1), args![&small], &[])
            .unwrap();
        let write = q
            .enqueue_write(&b, 0.., &[9, 9, 9], &[fault.event()])
            .unwrap();
        let m = msg(q.read(&b));
        has(
            &m,
            &["an earlier command on this queue failed", "out of bounds"],
        );
        assert_eq!(q.read(&b).unwrap(), [1, 2, 3], "{}", d.info().spec());
        has(
            &msg(write.wait()),
            &["not run: a command it waits for failed"],
        );
        q.finish().unwrap();
        // And through `finish`.
        let fault = oob
            .enqueue(&qc, NdRange::new(1), args![&small], &[])
            .unwrap();
        q.enqueue_write(&b, 0.., &[9, 9, 9], &[fault.event()])
            .unwrap();
        has(
            &msg(q.finish()),
            &["not run: a command it waits for failed"],
        );
        q.finish().unwrap();
        assert_eq!(q.read(&b).unwrap(), [1, 2, 3], "{}", d.info().spec());
        let _ = qc.finish();
    }
}

/// A panic in a stub's CPU body fails that launch with `Error::Panicked` carrying the panic's
/// message, blocking or not, and the queue keeps working.
#[test]
fn a_panic_in_a_stub_body_fails_the_launch_and_the_queue_goes_on() {
    let (d, q) = cpu();
    let picky = Stub::<(u32,), u32>::new("picky").cpu(|x: u32| {
        if x == 7 {
            panic!("picky refuses {x}");
        }
        x + 1
    });
    let k = Kernel::build("uses_picky", |k| {
        let x = k.read::<u32>("x");
        let y = k.write::<u32>("y");
        let i = global_id(0);
        y.set(i, picky.call((x.at(i),)));
    })
    .unwrap();
    let y = Buffer::<u32>::new(&d, 4).unwrap();
    let bad = Buffer::from_slice(&q, &[1u32, 2, 7, 4]).unwrap();
    let good = Buffer::from_slice(&q, &[1u32, 2, 3, 4]).unwrap();
    // Blocking (on an idle queue it runs on this thread) and not (on the queue's thread).
    let m = msg(k.launch(&q, NdRange::new(4), args![&bad, &y]));
    has(&m, &["running the command panicked", "picky refuses 7"]);
    let run = k
        .enqueue(&q, NdRange::new(4), args![&bad, &y], &[])
        .unwrap();
    has(&msg(run.wait()), &["panicked", "picky refuses 7"]);
    k.launch(&q, NdRange::new(4), args![&good, &y]).unwrap();
    assert_eq!(q.read(&y).unwrap(), [2, 3, 4, 5]);
    q.finish().unwrap();
}

/// An `Expr` from a kernel recorded on another thread is the same clear error as one from an
/// earlier kernel of this thread (each thread's first recording used to have the same id).
#[test]
fn an_expr_from_another_threads_kernel_is_rejected() {
    // Fresh threads: each records its first kernel.
    let stolen = std::thread::spawn(|| {
        let mut out = None;
        Kernel::build("donor", |k| {
            let x = k.read_write::<u32>("x");
            let v = global_id(0) * 3u32;
            x.set(0u32, v);
            out = Some(v);
        })
        .unwrap();
        out.unwrap()
    })
    .join()
    .unwrap();
    let m = std::thread::spawn(move || {
        msg(Kernel::build("thief", |k| {
            let x = k.read_write::<u32>("x");
            x.set(0u32, stolen + 1u32);
        }))
    })
    .join()
    .unwrap();
    has(
        &m,
        &[
            "an Expr recorded for another kernel",
            "used in kernel `thief`; values cannot cross kernels",
        ],
    );
}

#[derive(Clone, Copy, strata::Element)]
#[repr(C)]
struct Body {
    pos: [f32; 3],
    mass: f32,
}

#[derive(Clone, Copy, strata::Element)]
#[repr(C)]
struct Other {
    pos: [f32; 3],
    charge: f32,
}

#[test]
fn wrong_struct_buffer() {
    let (_, q) = cpu();
    let k = Kernel::build("bodies", |k| {
        let b = k.read_write::<Body>("b");
        let i = global_id(0);
        b.item(i).mass.store(b.item(i).mass.load() * 2.0f32);
    })
    .unwrap();
    // A buffer of another struct of the same size, and a buffer of scalars.
    let other = Buffer::from_slice(
        &q,
        &[Other {
            pos: [0.0; 3],
            charge: 1.0,
        }],
    )
    .unwrap();
    let m = msg(k.launch(&q, NdRange::new(1), args![&other]));
    has(
        &m,
        &[
            "kernel `bodies` argument 0 (`b`)",
            "expected a buffer of Body",
            "got a buffer of 1 Other",
        ],
    );
    let floats = Buffer::from_slice(&q, &[0.0f32; 4]).unwrap();
    let m = msg(k.launch(&q, NdRange::new(1), args![&floats]));
    has(&m, &["expected a buffer of Body", "got a buffer of 4 f32"]);
}

#[test]
fn two_structs_of_one_name_in_a_kernel() {
    mod a {
        #[derive(Clone, Copy, strata::Element)]
        #[repr(C)]
        pub struct Body {
            pub x: f32,
        }
    }
    let e = Kernel::build("two_bodies", |k| {
        let p = k.read::<Body>("p");
        let q = k.write::<a::Body>("q");
        let i = global_id(0);
        q.item(i).x.store(p.item(i).mass.load());
    })
    .unwrap_err()
    .to_string();
    has(
        &e,
        &["two different structs named `Body` are used in kernel `two_bodies`"],
    );
}

/// A 2-D kernel: `dst[(y, x)] = src[(y, x)]` over the source's extent.
fn copy_2d() -> Kernel {
    Kernel::build("copy_2d", |k| {
        let src = k.read2::<f32>("src");
        let dst = k.write2::<f32>("dst");
        let p = global_id2();
        if_(in_bounds(p, src.extent()), || {
            dst.set2(p.y(), p.x(), src.at2(p.y(), p.x()))
        });
    })
    .unwrap()
}

#[test]
fn pitched_buffer_of_the_wrong_shape_or_type() {
    let (_, q) = cpu();
    let k = copy_2d();
    assert_eq!(
        k.signature(),
        "src: Buffer2<f32> (read), dst: Buffer2<f32> (write)"
    );
    let img = Buffer2::<f32>::new(&q, [5, 3]).unwrap();
    let flat = Buffer::<f32>::new(q.device(), 15).unwrap();
    let ints = Buffer2::<u32>::new(&q, [5, 3]).unwrap();
    let vol = Buffer3::<f32>::new(&q, [5, 3, 2]).unwrap();
    let range = NdRange::covering(img.extent(), [4, 4]);
    let m = msg(k.launch(&q, range, args![&flat, &img]));
    has(
        &m,
        &[
            "kernel `copy_2d` argument 0 (`src`)",
            "expected a 2-D buffer of f32 (Buffer2<f32>)",
            "got a buffer of 15 f32",
        ],
    );
    let m = msg(k.launch(&q, range, args![&img, &ints]));
    has(
        &m,
        &[
            "argument 1 (`dst`)",
            "expected a 2-D buffer of f32 (Buffer2<f32>)",
            "got a 2-D buffer of [5, 3] u32",
        ],
    );
    let m = msg(k.launch(&q, range, args![&vol, &img]));
    has(
        &m,
        &[
            "argument 0 (`src`)",
            "expected a 2-D buffer of f32",
            "got a 3-D buffer of [5, 3, 2] f32",
        ],
    );
    // A 2-D buffer where a flat one is expected.
    let m = msg(saxpy().launch(&q, NdRange::new(4), args![2.0f32, &img, &flat]));
    has(
        &m,
        &[
            "argument 1 (`x`)",
            "expected a buffer of f32",
            "got a 2-D buffer of [5, 3] f32",
        ],
    );
    // The right shapes launch (one image as both is the read-only aliasing error).
    let m = msg(k.launch(&q, range, args![&img, &img.clone()]));
    has(&m, &["`dst`", "`src`"]);
    let out = Buffer2::<f32>::new(&q, [5, 3]).unwrap();
    k.launch(&q, range, args![&img, &out]).unwrap();
}

#[test]
fn pitched_regions_out_of_range() {
    let (_, q) = cpu();
    let img = Buffer2::<f32>::new(&q, [5, 3]).unwrap();
    let m = msg(q.read_region(&img, [4, 0], [2, 1]));
    has(
        &m,
        &[
            "read_region",
            "the region of [2, 1] elements at [4, 0] does not fit the extent [5, 3] (dimension 0)",
        ],
    );
    let m = msg(q.write_region(&img, [0, 1], [5, 2], &[0.0; 9]));
    has(
        &m,
        &["the host slice has 9 elements but the region [5, 2] holds 10"],
    );
    let m = msg(Buffer2::from_slice(&q, [4, 4], &[1u8; 15]));
    has(
        &m,
        &[
            "write_region",
            "the host slice has 15 elements but the region [4, 4] holds 16",
        ],
    );
    let m = msg(Buffer3::<u64>::new(&q, [usize::MAX / 2, 3, 1]));
    has(&m, &["overflow the address space"]);
    // At the `usize` overflow edge: 3 * 6148914691236517206 wraps to 2.
    let m = msg(Buffer2::<u8>::new(&q, [3, 6148914691236517206]));
    has(
        &m,
        &["[3, 6148914691236517206] elements of 1 bytes with padded rows overflow the address space"],
    );
    let m = msg(q.read_region(&img, [usize::MAX, 0], [2, 1]));
    has(
        &m,
        &["the region of [2, 1] elements at [18446744073709551615, 0] does not fit the extent [5, 3] (dimension 0)"],
    );
    let other = Device::from_spec("interp").unwrap();
    let elsewhere = Buffer2::<f32>::new(&other, [5, 3]).unwrap();
    let m = msg(q.copy_region(&img, [0, 0], &elsewhere, [0, 0], [1, 1]));
    has(
        &m,
        &["copy_region: the buffer lives on interp, but the queue runs on cpu"],
    );
}

/// A buffer allocated through another device's queue (`Buffer::new(&queue, n)` names the
/// queue's device) used with a queue of a different device is refused, for transfers and
/// launches alike, with a message naming both devices and the remedy.
#[test]
fn a_buffer_of_another_device_is_refused_by_a_queue() {
    let (cpu, qc) = cpu();
    let interp = Device::from_spec("interp").unwrap();
    let qi = Queue::new(&interp).unwrap();
    let on_interp = Buffer::<f32>::new(&qi, 4).unwrap();
    assert!(on_interp.device() == &interp);
    let on_cpu = Buffer::<f32>::new(&cpu, 4).unwrap();
    assert!(on_cpu.device() == &cpu);
    let both = [
        "the buffer lives on interp",
        "the queue runs on cpu",
        "allocate it on the queue's device",
    ];
    has(&msg(qc.read(&on_interp)), &both);
    has(&msg(qc.write(&on_interp, 0.., &[1.0; 4])), &both);
    has(&msg(qc.fill(&on_interp, 0.0, ..)), &both);
    let m = msg(saxpy().launch(&qc, NdRange::new(4), args![2.0f32, &on_interp, &on_cpu]));
    has(
        &m,
        &[
            "launch:",
            "the buffer lives on interp",
            "the queue runs on cpu",
        ],
    );
}

const TOO_WIDE: usize = 1 << 40;
const NOT_A_F32: usize = TOO_WIDE + 1;

#[kernel]
fn too_wide_constant(out: &mut [u32]) {
    let i = global_id(0);
    if i < TOO_WIDE {
        out[i] = 1u32;
    }
}

#[kernel]
fn inexact_constant(out: &mut [f32]) {
    let i = global_id(0);
    out[i] = out[i] * NOT_A_F32;
}

/// A typed host value beside a device value converts to the device value's type only when
/// its value fits; otherwise building the kernel fails with the value, both types and the
/// line.
#[test]
fn a_constant_that_does_not_fit_the_device_type_is_a_build_error() {
    let m = msg(too_wide_constant::build().map(|_| ()));
    has(
        &m,
        &[
            "the host value 1099511627776 (usize) does not fit the device value's type u32",
            "errors.rs:",
        ],
    );
    let m = msg(inexact_constant::build().map(|_| ()));
    has(
        &m,
        &["the host value 1099511627777 (usize) is not exactly a f32"],
    );
}

// ---------------------------------------------------------------------------------------------
// f16

#[test]
fn f16_in_collectives_and_atomics_is_rejected() {
    let m = msg(Kernel::build("half_group", |k| {
        let x = k.read_write::<strata::f16>("x");
        let s = group_reduce_add(x.at(global_id(0)));
        x.set(global_id(0), s);
    }));
    has(
        &m,
        &[
            "half_group",
            "group_reduce_add does not take f16 values; convert them to f32 first",
        ],
    );
    let m = msg(Kernel::build("half_atomic", |k| {
        let x = k.read_write::<strata::f16>("x");
        x.atomic_add(0u32, strata::f16::ONE);
    }));
    has(
        &m,
        &[
            "half_atomic",
            "add is not available on f16: atomics work on 32- and 64-bit integers, and add, min, max and exchange also on f32 and f64",
        ],
    );
}

/// On every device without `f16` (here: PoCL, which lacks `cl_khr_fp16`), launching or
/// compiling an `f16` kernel is the typed error, before any source is compiled.
#[test]
fn f16_on_a_device_without_it() {
    let k = Kernel::build("halves", |k| {
        let x = k.read_write::<strata::f16>("x");
        let i = global_id(0);
        x.set(i, x.at(i) * strata::f16::from_f32(2.0));
    })
    .unwrap();
    let mut checked = 0;
    for d in strata::devices() {
        if d.info().supports_f16 {
            continue;
        }
        let q = Queue::new(&d).unwrap();
        let x = Buffer::from_slice(&q, &[strata::f16::ONE; 4]).unwrap();
        for m in [
            msg(k.launch(&q, NdRange::new(4), args![&x])),
            msg(d.compile(&k)),
        ] {
            has(
                &m,
                &[
                    "kernel `halves` cannot run on",
                    &d.info().spec(),
                    "the kernel uses f16, which the device does not support (OpenCL needs the cl_khr_fp16 extension)",
                ],
            );
        }
        assert!(matches!(d.compile(&k), Err(Error::Unsupported { .. })));
        checked += 1;
    }
    // The CPU backends always have f16.
    assert!(Device::from_spec("cpu").unwrap().info().supports_f16);
    eprintln!("checked {checked} device(s) without f16");
}
