"""Library baselines on a CUDA GPU, for the goals strata's benchmarks are held to.

Run by `scripts/gpu-run.sh device` beside `strata bench`, on the same GPU in the same call:
CUB's radix sort (through `cupy.sort`) of 2^26 u32 keys, cuBLAS SGEMM 4096^3 in fp32 with TF32
off (through PyTorch and through CuPy), and a device-to-device copy. Each is timed with CUDA
events around the call, after warm-ups, on fresh random data; the median of the repetitions is
printed as one JSON object per line.
"""

import json
import statistics
import sys


def timed(fn, reps, stream):
    import cupy

    times = []
    for _ in range(reps):
        a = cupy.cuda.Event()
        b = cupy.cuda.Event()
        a.record(stream)
        fn()
        b.record(stream)
        b.synchronize()
        times.append(cupy.cuda.get_elapsed_time(a, b))
    return statistics.median(times)


def main():
    import cupy
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    stream = cupy.cuda.get_current_stream()
    out = []

    # Device-to-device copy (bytes read + bytes written).
    n = 1 << 26
    src = cupy.random.random(n, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    ms = timed(lambda: dst.__setitem__(Ellipsis, src), 20, stream)
    out.append({"bench": "copy_f32", "n": n, "ms": ms, "gbps": 2 * 4 * n / ms / 1e6})

    # CUB radix sort through cupy.sort, on fresh random keys each time (the sort is in place).
    keys = cupy.random.randint(0, 2**32, size=n, dtype=cupy.uint64).astype(cupy.uint32)
    sorted_keys = cupy.sort(keys)
    assert bool((sorted_keys[1:] >= sorted_keys[:-1]).all())
    times = []
    for _ in range(10):
        k = keys.copy()
        a = cupy.cuda.Event()
        b = cupy.cuda.Event()
        a.record(stream)
        k.sort()
        b.record(stream)
        b.synchronize()
        times.append(cupy.cuda.get_elapsed_time(a, b))
    ms = statistics.median(times)
    out.append({"bench": "cub_sort_u32", "n": n, "ms": ms, "gkeys": n / ms / 1e6})

    # cuBLAS SGEMM 4096^3, fp32 (TF32 off), through PyTorch and CuPy.
    m = 4096
    flops = 2 * m * m * m
    a = torch.rand((m, m), device="cuda", dtype=torch.float32)
    b = torch.rand((m, m), device="cuda", dtype=torch.float32)
    c = torch.matmul(a, b)
    ref = (a[:64].double() @ b.double())
    err = float((c[:64].double() - ref).norm() / ref.norm())
    assert err < 1e-5, f"torch fp32 matmul error {err} (TF32 on?)"
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.matmul(a, b, out=c)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    ms = statistics.median(times)
    out.append({"bench": "torch_sgemm_4096", "ms": ms, "tflops": flops / ms / 1e9, "rel_err": err})

    ca = cupy.random.random((m, m), dtype=cupy.float32)
    cb = cupy.random.random((m, m), dtype=cupy.float32)
    cc = cupy.matmul(ca, cb)
    ms = timed(lambda: cupy.matmul(ca, cb, out=cc), 20, stream)
    out.append({"bench": "cupy_sgemm_4096", "ms": ms, "tflops": flops / ms / 1e9})

    for o in out:
        print(json.dumps(o))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
