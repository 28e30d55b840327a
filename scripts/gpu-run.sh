#!/usr/bin/env bash
# The one-command GPU run: build here, run everything on a lent GPU machine.
#
#   bash scripts/gpu-run.sh build      # here: release build + test binaries, stripped, packed
#                                      # into .gpu/ (ignored by git)
#   bash scripts/gpu-run.sh device     # there, in this order: devices, check (the conformance
#                                      # suite), bench at 2^26 (JSON), the CuPy/PyTorch baselines
#                                      # (CUB sort, copy, cuBLAS), difftest of 2,000 programs, the
#                                      # CUDA test binaries with STRATA_REQUIRE=cuda, NVIDIA OpenCL,
#                                      # Vulkan (check, difftest, bench on vulkan:0 beside cuda:0);
#                                      # every log under $OUT
#   bash scripts/gpu-run.sh dry-run    # here, after build: unpacks the bundle as `device` does
#                                      # and prints each step with its time limit, runs nothing
#
# Each step runs under its own time limit and all of them under one deadline, so that the run
# always finishes inside the device call's 10 minutes and writes its summary (each step's exit
# status and seconds) and logs; a step that would start past the deadline is listed as skipped.
# Expected times per step are in README.md ("On a lent GPU machine").
#
# With the device tool, the whole GPU session is one call after the build:
#   run(command="bash scripts/gpu-run.sh device", carry=[".gpu"], timeout_s=600)
#
# The device machine has CUDA 13 (its own NVRTC), the driver, Python with CuPy and PyTorch, and
# no Rust: everything Rust is built here. The binaries are packed with xz to stay far under the
# 64 MiB that travels. Environment for `device`: STRATA_GPU_STEPS (space-separated subset of
# `devices check bench baselines difftest tests opencl vulkan vulkanbench loadab`, default all but
# loadab, run in the
# order given), STRATA_GPU_PROGRAMS (difftest programs, default 2000), STRATA_GPU_SIZE (bench
# size, default 2^26), STRATA_GPU_FILTER (bench filter), STRATA_GPU_TESTS (words: pack and run only the
# test binaries whose names contain one; default `cuda cublas gpu_backends wait checked`, `.`
# for all, which is over the 64 MiB that travels: give `build` and `device` the same words),
# STRATA_GPU_DEADLINE (seconds for the whole run, default 540: the call's 600 less the unpacking
# and the archive of the logs).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
mode="${1:-}"

# The words naming the test binaries of the `tests` step (`.`: all of them), for `build`
# (which packs only those) and `device` (which runs them).
test_words() {
    echo "${STRATA_GPU_TESTS:-cuda cublas gpu_backends wait checked}"
}

build() {
    set -e
    # CARGO_TARGET_DIR is honoured; the tests' fixed paths point into it (see `device`).
    local target="${CARGO_TARGET_DIR:-$root/target}"
    cargo build --release --locked --bin strata
    # The test binaries (and the examples' tests), as cargo reports them.
    cargo test --release --locked --no-run --all-targets --message-format=json \
        >"$target/gpu-tests.json"
    rm -rf .gpu && mkdir -p .gpu/stage/tests
    cp "$target/release/strata" .gpu/stage/strata
    # Only the test binaries the `tests` step will run (the same words as there): all of them
    # are over 500 MB, far more than the 64 MiB that travels to the device machine.
    python3 - "$root" "$target" "$(test_words)" <<'EOF'
import json, shutil, sys, os
root, target, words = sys.argv[1], sys.argv[2], sys.argv[3].split()
seen = set()
for line in open(os.path.join(target, "gpu-tests.json")):
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if not m.get("profile", {}).get("test"):
        continue
    kind = m["target"]["kind"][0]
    name = m["target"]["name"]
    # kernel_ui runs rustc (trybuild): it needs a toolchain, and no GPU.
    if name == "kernel_ui" or kind == "proc-macro":
        continue
    out = f"{kind}-{name}"
    if "." not in words and not any(w in out for w in words):
        continue
    if out in seen:
        continue
    seen.add(out)
    shutil.copy(m["executable"], os.path.join(root, ".gpu/stage/tests", out))
EOF
    strip .gpu/stage/strata .gpu/stage/tests/*
    # The OpenCL ICD loader, in case the GPU machine has NVIDIA's OpenCL driver but no loader.
    mkdir -p .gpu/stage/lib
    (cd .gpu && apt-get download ocl-icd-libopencl1 >/dev/null 2>&1 &&
        dpkg -x ocl-icd-libopencl1_*.deb icd && rm -f ocl-icd-libopencl1_*.deb &&
        cp -L icd/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 stage/lib/ && rm -rf icd) ||
        echo "note: could not fetch the OpenCL ICD loader; the opencl step needs one there"
    # Vulkan on the GPU machine (no loader there): the device machine's recipe, as run on the
    # H200 on 2026-11-27. The loader alone (or with GLVND's libGLdispatch on LD_LIBRARY_PATH)
    # found "no Vulkan driver": NVIDIA's ICD (libGLX_nvidia.so.0) answers vkCreateInstance only
    # with GLVND's libraries installed and its EGL vendor file named. The packages travel as
    # they are and `device` unpacks them into / there.
    mkdir -p .gpu/stage/gl
    (cd .gpu/stage/gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 \
        libgles2 >/dev/null 2>&1) ||
        echo "note: could not fetch the Vulkan loader and GLVND; the vulkan step needs them there"
    # The tests find the CLI and their data through paths fixed at build time.
    echo "$root" >.gpu/stage/build-root
    echo "$target" >.gpu/stage/build-target
    tar -C .gpu/stage -cJf .gpu/bundle.tar.xz .
    rm -rf .gpu/stage
    ls -la .gpu
    if [ "$(stat -c %s .gpu/bundle.tar.xz)" -gt $((64 * 1024 * 1024)) ]; then
        echo "error: .gpu/bundle.tar.xz is over the 64 MiB that travels; name fewer test binaries in STRATA_GPU_TESTS" >&2
        exit 1
    fi
    echo "built; now: run(command=\"bash scripts/gpu-run.sh device\", carry=[\".gpu\"])"
}

# Runs one step under a time limit (seconds, first argument), its output to $LOGS/<name>.log
# and a one-line verdict to $LOGS/summary.txt.
step() {
    local limit="$1" name="$2"
    shift 2
    local t0=$SECONDS
    # Never past the whole run's deadline (the device call's own limit is 600 s).
    # A dry run counts each step as taking its whole limit (DRY_SPENT): the worst case.
    local left=$((${STRATA_GPU_DEADLINE:-540} - SECONDS - ${DRY_SPENT:-0}))
    if [ "$left" -lt 5 ]; then
        echo "$name skipped: the run's deadline was reached" | tee -a "$LOGS/summary.txt"
        return 0
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    if [ -n "${DRY:-}" ]; then
        DRY_SPENT=$((${DRY_SPENT:-0} + limit))
        echo "$name: up to ${limit}s (${DRY_SPENT}s at most so far): $*" | tee -a "$LOGS/summary.txt"
        return 0
    fi
    echo "== $name (up to ${limit}s): $*"
    timeout -k 5 "$limit" "$@" >"$LOGS/$name.log" 2>&1
    local rc=$?
    echo "$name rc=$rc $((SECONDS - t0))s: $(tail -n 1 "$LOGS/$name.log" | cut -c1-200)" |
        tee -a "$LOGS/summary.txt"
    return 0
}

device() {
    [ -n "${DRY:-}" ] || : "${OUT:?OUT must name the folder for logs}"
    local steps="${STRATA_GPU_STEPS:-devices check bench baselines difftest tests opencl vulkan}"
    local work=/tmp/strata-gpu
    if [ -n "${DRY:-}" ]; then
        work="$(mktemp -d)"
        OUT="$work/out"
        mkdir -p "$OUT"
    fi
    rm -rf "$work" && mkdir -p "$work/logs"
    # Only 8 files come back from $OUT: the logs travel as one archive.
    LOGS="$work/logs"
    tar -C "$work" -xJf .gpu/bundle.tar.xz
    # The build root as it was here, pointing at this copy, so that the tests' fixed paths
    # (CARGO_MANIFEST_DIR, CARGO_BIN_EXE_strata) resolve.
    local build_root
    build_root="$(cat "$work/build-root")"
    if [ -n "${DRY:-}" ]; then
        echo "bundle: $(ls "$work/tests" | wc -l) test binaries, strata $(du -h "$work/strata" | cut -f1), built in $build_root"
        : >"$LOGS/summary.txt"
        run_steps "$work" "$steps"
        rm -rf "$work"
        return 0
    fi
    if [ "$build_root" != "$root" ] && [ ! -e "$build_root" ]; then
        mkdir -p "$(dirname "$build_root")" && ln -s "$root" "$build_root"
    fi
    local build_target
    build_target="$(cat "$work/build-target" 2>/dev/null || echo "$build_root/target")"
    mkdir -p "$build_target/release"
    cp "$work/strata" "$build_target/release/strata"
    export PATH="$work:$PATH"
    export STRATA_CUDA_CACHE="$work/ptx-cache"
    # The ICD loader travels in case the image has none (NVIDIA's OpenCL driver is there).
    # So do the Vulkan loader and GLVND (see `build`); the loader finds NVIDIA's driver by its
    # ICD file.
    libs="$(ldconfig -p 2>/dev/null || true)" # read whole: `| grep -q` can SIGPIPE ldconfig
    if ! grep -q 'libOpenCL\.so\.1' <<<"$libs"; then
        export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
    if ! grep -q 'libvulkan\.so\.1' <<<"$libs" && [ -z "${DRY:-}" ] && [ "$(id -u)" = 0 ]; then
        for deb in "$work"/gl/*.deb; do dpkg -x "$deb" / || echo "note: could not unpack $deb"; done
        ldconfig
    fi
    for egl in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
        /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
        if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -f "$egl" ]; then
            export __EGL_VENDOR_LIBRARY_FILENAMES="$egl"
        fi
    done
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
        /etc/vulkan/icd.d/nvidia_icd.json; do
        if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; fi
    done
    # NVIDIA's OpenCL driver without its ICD file (the H200 image of 2026-11-27 lists only
    # PoCL in /etc/OpenCL/vendors): the loaders read the vendor files of OCL_ICD_VENDORS.
    if grep -q 'libnvidia-opencl\.so\.1' <<<"$libs" &&
        ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd; then
        mkdir -p "$work/vendors"
        cp /etc/OpenCL/vendors/*.icd "$work/vendors/" 2>/dev/null
        echo libnvidia-opencl.so.1 >"$work/vendors/nvidia.icd"
        export OCL_ICD_VENDORS="$work/vendors"
    fi
    # OpenCL: NVIDIA's platform alone where it exists (the image also has PoCL, which CI runs;
    # here it would only slow every test down).
    if grep -q '"backend":"opencl"' <<<"$(STRATA_OPENCL_PLATFORM=nvidia strata devices --json 2>/dev/null)"; then
        export STRATA_OPENCL_PLATFORM=nvidia
    fi
    {
        date -u
        nvidia-smi
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
        ls -la /usr/local/cuda/lib64/libnvrtc* 2>&1
        nvcc --version
        python3 -c 'import cupy, torch; print("cupy", cupy.__version__, "torch", torch.__version__)'
        ldconfig -p | grep -i -e opencl -e nvrtc -e libcuda
        ls /usr/local/nvidia/lib64 2>&1 | head -50
        ls /etc/OpenCL/vendors 2>&1
    } >"$LOGS/machine.log" 2>&1
    : >"$LOGS/summary.txt"
    run_steps "$work" "$steps"
    [ -f "$LOGS/bench.log" ] && grep '^{' "$LOGS/bench.log" >"$OUT/bench.json"
    cp "$LOGS/summary.txt" "$OUT/summary.txt"
    tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
    echo "== summary ($SECONDS s)"
    cat "$LOGS/summary.txt"
}

# The benchmark on vulkan:0 (part of the `vulkan` step unless the steps name `vulkanbench`,
# which runs it where it stands in the list).
vulkan_bench() {
    if grep -q '"backend":"vulkan"' <<<"$(strata devices --json 2>/dev/null)"; then
        step 200 vulkan-bench strata bench --device vulkan:0 --size "${STRATA_GPU_SIZE:-2^26}" \
            --json ${STRATA_GPU_FILTER:+--filter "$STRATA_GPU_FILTER"}
    else
        echo "vulkan-bench: no Vulkan device" | tee -a "$LOGS/summary.txt"
    fi
}

# The steps (second argument) with their time limits; the unpacked bundle is in the first.
run_steps() {
    local work="$1" steps="$2"
    for s in $steps; do
        case "$s" in
        devices) step 30 devices strata devices --why ;;
        check) step 90 check strata check --device cuda:0 ;;
        difftest)
            step "${STRATA_GPU_DIFF_LIMIT:-120}" difftest strata difftest --device cuda:0 --programs "${STRATA_GPU_PROGRAMS:-2000}"
            ;;
        tests)
            local words
            words="$(test_words)"
            for t in "$work"/tests/*; do
                # Only the test binaries whose names contain one of the words.
                grep -qE "${words// /|}" <<<"$(basename "$t")" || continue
                step 90 "test-$(basename "$t")" env STRATA_REQUIRE=cuda "$t" --test-threads=4
            done
            ;;
        bench)
            step 300 bench strata bench --device cuda:0 --size "${STRATA_GPU_SIZE:-2^26}" --json \
                ${STRATA_GPU_FILTER:+--filter "$STRATA_GPU_FILTER"}
            ;;
        baselines) step 90 baselines python3 scripts/gpu_baselines.py ;;
        loadab)
            # The same reductions with kernels loaded as CUBIN (the default) and as PTX.
            step 60 load-cubin strata bench --device cuda:0 --size 2^26 --reps 20 --filter dot
            step 60 load-ptx env STRATA_CUDA_LOAD=ptx strata bench --device cuda:0 --size 2^26 \
                --reps 20 --filter dot
            ;;
        opencl)
            if [ "${STRATA_OPENCL_PLATFORM:-}" = nvidia ]; then
                step 200 opencl-check strata check --device opencl:0
                step 120 opencl-difftest strata difftest --device opencl:0 --programs 1000
            else
                echo "opencl: no NVIDIA OpenCL platform" | tee -a "$LOGS/summary.txt"
            fi
            ;;
        vulkan)
            # Vulkan on the same GPU as CUDA: the suite, the differential tests and the
            # benchmark (its rows beside cuda:0's in bench.log).
            if grep -q '"backend":"vulkan"' <<<"$(strata devices --json 2>/dev/null)"; then
                step 200 vulkan-check strata check --device vulkan:0
                step 120 vulkan-difftest strata difftest --device vulkan:0 --programs 1000
                case " $steps " in
                *" vulkanbench "*) ;; # later, where the steps name it
                *) vulkan_bench ;;
                esac
            else
                echo "vulkan: no Vulkan device ($(strata devices --why 2>&1 | grep -i vulkan | head -1))" |
                    tee -a "$LOGS/summary.txt"
            fi
            ;;
        vulkanbench) vulkan_bench ;;
        *) echo "unknown step $s" | tee -a "$LOGS/summary.txt" ;;
        esac
    done
    if [ -f "$LOGS/vulkan-bench.log" ]; then
        grep '^{' "$LOGS/vulkan-bench.log" >"$OUT/bench-vulkan.json"
    fi
    return 0
}

case "$mode" in
build) build ;;
device) device ;;
dry-run) DRY=1 device ;;
*)
    echo "usage: bash scripts/gpu-run.sh build|device|dry-run" >&2
    exit 2
    ;;
esac
