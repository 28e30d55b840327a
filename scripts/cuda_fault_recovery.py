# Which recovery lets a process use a CUDA device again after an illegal-address fault? Run on
# a GPU machine (ctypes, no Rust): each strategy in its own process; prints every call's CUresult
# (700 = CUDA_ERROR_ILLEGAL_ADDRESS). On an H200 with driver 580 (2026-11-27) none recovered.
import ctypes, subprocess, sys
from ctypes import byref, c_int, c_uint64, c_void_p

PTX = b""".version 7.0
.target sm_50
.address_size 64
.visible .entry wild()
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  mov.u64 %rd1, 0xF00000000000;
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""

def one(strategy):
    cu = ctypes.CDLL("libcuda.so.1")
    out = []
    def call(name, *args):
        r = getattr(cu, name)(*args)
        out.append(f"{name}={r}")
        return r
    call("cuInit", 0)
    v = c_int(); cu.cuDriverGetVersion(byref(v)); out.append(f"driver={v.value}")
    dev = c_int(); call("cuDeviceGet", byref(dev), 0)
    ctx = c_void_p()
    if strategy.startswith("create"):
        call("cuCtxCreate_v2", byref(ctx), 0, dev)
    else:
        call("cuDevicePrimaryCtxRetain", byref(ctx), dev)
    call("cuCtxSetCurrent", ctx)
    mod = c_void_p(); call("cuModuleLoadData", byref(mod), PTX)
    f = c_void_p(); call("cuModuleGetFunction", byref(f), mod, b"wild")
    call("cuLaunchKernel", f, 1, 1, 1, 1, 1, 1, 0, None, None, None)
    call("cuCtxSynchronize")
    out.append("|recover:")
    if strategy in ("reset", "reset_release"):
        call("cuDevicePrimaryCtxReset_v2", dev)
    if strategy in ("release", "reset_release"):
        call("cuCtxSetCurrent", None)
        n = 0
        while n < 64 and cu.cuDevicePrimaryCtxRelease_v2(dev) == 0:
            n += 1
        out.append(f"released={n}")
    if strategy.startswith("create"):
        call("cuCtxSetCurrent", None)
        call("cuCtxDestroy_v2", ctx)
    ctx2 = c_void_p()
    if strategy == "create_create":
        call("cuCtxCreate_v2", byref(ctx2), 0, dev)
    else:
        call("cuDevicePrimaryCtxRetain", byref(ctx2), dev)
    call("cuCtxSetCurrent", ctx2)
    p = c_uint64(); call("cuMemAlloc_v2", byref(p), 256)
    call("cuMemsetD8_v2", p, 0, 256)
    call("cuCtxSynchronize")
    print(strategy + ": " + " ".join(out), flush=True)

if len(sys.argv) > 1:
    one(sys.argv[1])
else:
    for s in ["reset", "release", "reset_release", "create", "create_create"]:
        try:
            r = subprocess.run([sys.executable, __file__, s], capture_output=True, text=True, timeout=15)
            print(r.stdout.strip() or s + ": (no output)", r.stderr.strip()[-300:], "rc", r.returncode, flush=True)
        except subprocess.TimeoutExpired:
            print(s + ": timed out", flush=True)
