//! Interop with other GPU code on every OpenCL device (PoCL in CI): strata buffers over
//! `cl_mem`s made through raw OpenCL calls and the reverse, a strata queue on the application's
//! `cl_command_queue`, reference counts that show who frees what, and the errors for handles
//! that do not fit. The CPU backend's buffers expose their host memory. (CUDA's side of this
//! API is compiled in CI and runs where a GPU is lent.)
#![cfg(feature = "opencl")]

use cl3::command_queue::{
    create_command_queue, enqueue_read_buffer, enqueue_write_buffer, finish, release_command_queue,
};
use cl3::info_type::InfoType;
use cl3::memory::{
    create_buffer, get_mem_object_info, release_mem_object, CL_MEM_READ_WRITE,
    CL_MEM_REFERENCE_COUNT,
};
use cl3::types::{cl_command_queue, cl_mem, CL_BLOCKING};
use std::ffi::c_void;
use strata::prelude::*;
use strata::{BackendKind, Error, NativeMemory, Ownership};

const N: usize = 64;

fn opencl_devices() -> Vec<Device> {
    let devs: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::OpenCl)
        .collect();
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"));
    assert!(
        !required || !devs.is_empty(),
        "STRATA_REQUIRE names opencl, but there is no OpenCL device"
    );
    devs
}

fn triple_plus_one() -> Kernel {
    Kernel::build("triple_plus_one", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) * 3u32 + 1u32));
    })
    .unwrap()
}

fn refcount(m: cl_mem) -> u32 {
    match get_mem_object_info(m, CL_MEM_REFERENCE_COUNT).unwrap() {
        InfoType::Uint(n) => n,
        other => panic!("{other:?}"),
    }
}

/// `data` into `m` through raw OpenCL, blocking.
unsafe fn raw_write(q: cl_command_queue, m: cl_mem, data: &[u32]) {
    let e = unsafe {
        enqueue_write_buffer(
            q,
            m,
            CL_BLOCKING,
            0,
            4 * data.len(),
            data.as_ptr().cast(),
            0,
            std::ptr::null(),
        )
    }
    .unwrap();
    unsafe { cl3::event::release_event(e) }.unwrap();
}

/// `n` words of `m` through raw OpenCL, blocking.
unsafe fn raw_read(q: cl_command_queue, m: cl_mem, n: usize) -> Vec<u32> {
    let mut out = vec![0u32; n];
    let e = unsafe {
        enqueue_read_buffer(
            q,
            m,
            CL_BLOCKING,
            0,
            4 * n,
            out.as_mut_ptr().cast::<c_void>(),
            0,
            std::ptr::null(),
        )
    }
    .unwrap();
    unsafe { cl3::event::release_event(e) }.unwrap();
    out
}

#[test]
fn raw_opencl_memory_and_queues_meet_strata() {
    let k = triple_plus_one();
    let data: Vec<u32> = (0..N as u32).map(|i| i * 7 + 2).collect();
    let want: Vec<u32> = data.iter().map(|x| x * 3 + 1).collect();
    for d in opencl_devices() {
        let spec = d.info().spec();
        let h = d
            .opencl_handles()
            .expect("an OpenCL device has OpenCL handles");
        assert!(!h.device.is_null() && !h.context.is_null() && !h.platform.is_null());
        // SAFETY: the handles are the device's own, alive for the process.
        let rawq = unsafe { create_command_queue(h.context, h.device, 0) }.unwrap();
        let raw =
            unsafe { create_buffer(h.context, CL_MEM_READ_WRITE, 4 * N, std::ptr::null_mut()) }
                .unwrap();
        unsafe { raw_write(rawq, raw, &data) };

        // The application's cl_mem, borrowed: filled by a strata kernel, read back raw.
        let q = Queue::new(&d).unwrap();
        let b = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::OpenCl(raw), N, Ownership::Borrowed)
        }
        .unwrap();
        assert_eq!(refcount(raw), 2, "{spec}: strata retains a borrowed cl_mem");
        assert_eq!(unsafe { b.native() }, NativeMemory::OpenCl(raw));
        k.launch(&q, NdRange::new(N), args![&b]).unwrap();
        q.finish().unwrap();
        drop(b);
        assert_eq!(
            refcount(raw),
            1,
            "{spec}: and releases it, leaving the application's"
        );
        assert_eq!(unsafe { raw_read(rawq, raw, N) }, want, "{spec}");

        // The reverse: strata's buffer written through raw OpenCL, read by strata.
        let s = Buffer::<u32>::new(&d, N).unwrap();
        let NativeMemory::OpenCl(sm) = (unsafe { s.native() }) else {
            panic!("{spec}: an OpenCL buffer's native memory is a cl_mem");
        };
        unsafe { raw_write(rawq, sm, &data) };
        assert_eq!(q.read(&s).unwrap(), data, "{spec}");

        // A strata queue on the application's queue: same handle, commands in order with it.
        let wq = unsafe { Queue::from_native(&d, rawq.cast()) }.unwrap();
        assert_eq!(unsafe { wq.native() }, Some(rawq.cast()));
        assert!(unsafe { q.native() }.is_some_and(|p| p != rawq.cast()));
        let b = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::OpenCl(raw), N, Ownership::Borrowed)
        }
        .unwrap();
        k.enqueue(&wq, NdRange::new(N), args![&b], &[]).unwrap();
        wq.finish().unwrap();
        finish(rawq).unwrap();
        let twice: Vec<u32> = want.iter().map(|x| x * 3 + 1).collect();
        assert_eq!(unsafe { raw_read(rawq, raw, N) }, twice, "{spec}");
        drop((b, wq));

        // Owned: the application's reference passes to strata (no retain).
        let owned =
            unsafe { create_buffer(h.context, CL_MEM_READ_WRITE, 4 * N, std::ptr::null_mut()) }
                .unwrap();
        let ob = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::OpenCl(owned), N, Ownership::Owned)
        }
        .unwrap();
        assert_eq!(refcount(owned), 1, "{spec}");
        q.fill(&ob, 5u32, 0..N).unwrap();
        assert_eq!(q.read(&ob).unwrap(), vec![5; N]);
        drop(ob); // released by strata: nothing left to release here

        // Memory that is too small, or of another backend, is refused.
        let small =
            unsafe { create_buffer(h.context, CL_MEM_READ_WRITE, 16, std::ptr::null_mut()) }
                .unwrap();
        let err = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::OpenCl(small), N, Ownership::Borrowed)
        }
        .unwrap_err();
        assert!(matches!(err, Error::BufferRange { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "from_native: the cl_mem holds 16 bytes; the buffer needs {}",
                4 * N
            )
        );
        assert_eq!(
            refcount(small),
            1,
            "{spec}: a refused cl_mem is not retained"
        );
        let err = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::Cuda(4096), N, Ownership::Borrowed)
        }
        .unwrap_err();
        assert!(
            err.to_string().contains("takes an OpenCL buffer (cl_mem)"),
            "{err}"
        );

        unsafe {
            release_mem_object(small).unwrap();
            release_mem_object(raw).unwrap();
            release_command_queue(rawq).unwrap();
        }
    }
}

#[test]
fn the_cpu_backend_exposes_host_memory_and_takes_none() {
    let d = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&d).unwrap();
    assert_eq!(unsafe { q.native() }, None);
    let b = Buffer::from_slice(&q, &[1u32, 2, 3, 4]).unwrap();
    q.finish().unwrap();
    let NativeMemory::Host { ptr, len } = (unsafe { b.native() }) else {
        panic!("CPU memory is host memory");
    };
    assert!(len >= 16);
    // SAFETY: no command uses the buffer; it holds four u32 at its start.
    let words = unsafe { std::slice::from_raw_parts(ptr.cast::<u32>(), 4) };
    assert_eq!(words, [1, 2, 3, 4]);
    let err = unsafe {
        Buffer::<u32>::from_native(&d, NativeMemory::Host { ptr, len }, 4, Ownership::Borrowed)
    }
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cpu error: cpu cannot use memory allocated outside strata (Buffer::from_native takes \
         OpenCL buffers and CUDA device pointers)"
    );
    let err = unsafe { Queue::from_native(&d, std::ptr::null_mut()) }.unwrap_err();
    assert!(
        err.to_string().contains("cpu has no native queues to wrap"),
        "{err}"
    );
}

/// The same on every CUDA device (none in CI, where this compiles; `STRATA_REQUIRE=cuda` on a
/// GPU machine makes having none a failure): a `cuMemAlloc` pointer, borrowed and owned, and a
/// strata queue on the application's stream.
#[cfg(feature = "cuda")]
#[test]
fn raw_cuda_memory_and_streams_meet_strata() {
    use cudarc::driver::result as cu;
    let devices: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::Cuda)
        .collect();
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "cuda"));
    assert!(
        !required || !devices.is_empty(),
        "STRATA_REQUIRE names cuda, but there is no CUDA device"
    );
    let k = triple_plus_one();
    let data: Vec<u32> = (0..N as u32).map(|i| i * 7 + 2).collect();
    let want: Vec<u32> = data.iter().map(|x| x * 3 + 1).collect();
    for d in devices {
        let spec = d.info().spec();
        let h = d.cuda_handles().unwrap();
        // SAFETY: strata's primary context, alive for the process.
        unsafe { cu::ctx::set_current(h.context.cast()) }.unwrap();
        let raw = unsafe { cu::malloc_sync(4 * N) }.unwrap();
        unsafe { cu::memcpy_htod_sync(raw, &data) }.unwrap();
        let q = Queue::new(&d).unwrap();
        let b = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::Cuda(raw), N, Ownership::Borrowed)
        }
        .unwrap();
        assert_eq!(unsafe { b.native() }, NativeMemory::Cuda(raw));
        k.launch(&q, NdRange::new(N), args![&b]).unwrap();
        q.finish().unwrap();
        drop(b); // borrowed: not freed
        let mut got = vec![0u32; N];
        unsafe { cu::ctx::set_current(h.context.cast()) }.unwrap();
        unsafe { cu::memcpy_dtoh_sync(&mut got, raw) }.unwrap();
        assert_eq!(got, want, "{spec}");
        // Too small: the allocation's range is checked.
        let err = unsafe {
            Buffer::<u32>::from_native(&d, NativeMemory::Cuda(raw), 2 * N, Ownership::Borrowed)
        }
        .unwrap_err();
        assert!(matches!(err, Error::BufferRange { .. }), "{err:?}");
        // A strata queue on the application's stream.
        let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap();
        let wq = unsafe { Queue::from_native(&d, stream.cast()) }.unwrap();
        assert_eq!(unsafe { wq.native() }, Some(stream.cast()));
        let b =
            unsafe { Buffer::<u32>::from_native(&d, NativeMemory::Cuda(raw), N, Ownership::Owned) }
                .unwrap();
        k.launch(&wq, NdRange::new(N), args![&b]).unwrap();
        let twice: Vec<u32> = want.iter().map(|x| x * 3 + 1).collect();
        assert_eq!(wq.read(&b).unwrap(), twice, "{spec}");
        drop((b, wq)); // owned: strata frees `raw`; the stream stays the application's
        unsafe { cu::ctx::set_current(h.context.cast()) }.unwrap();
        unsafe { cu::stream::destroy(stream) }.unwrap();
    }
}
