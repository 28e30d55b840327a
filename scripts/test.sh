#!/usr/bin/env bash
# The project's test command (the README's second command; `.ci/run` calls exactly this).
#
# It installs what the tests need, then checks formatting and lints and runs every test:
# unit tests, the conformance suite on every device present, the examples, the CLI tests and
# the doc tests. It fails, never skips, when something the tests require cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo is not installed; install Rust from https://rustup.rs" >&2
    exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

# The OpenCL tests need an OpenCL library and a driver (ICD). Without one, install PoCL (OpenCL
# on the CPU) with the ICD loader. The tests then require OpenCL: no OpenCL device is a failure.
have_opencl() {
    { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libOpenCL\.so\.1' &&
        compgen -G '/etc/OpenCL/vendors/*.icd' >/dev/null
}
if have_opencl; then
    echo "== opencl: ICD loader and driver present: $(cat /etc/OpenCL/vendors/*.icd | tr '\n' ' ')"
else
    echo "== opencl: no OpenCL ICD found; installing PoCL (pocl-opencl-icd, ocl-icd-libopencl1)"
    if [ "$(id -u)" -eq 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "error: OpenCL is required by the tests; run as root or install sudo, or install" \
            "an OpenCL driver (e.g. apt-get install pocl-opencl-icd ocl-icd-libopencl1)" >&2
        exit 1
    fi
    echo "+ ${as_root[*]} apt-get update"
    "${as_root[@]}" apt-get update
    echo "+ ${as_root[*]} apt-get install -y pocl-opencl-icd ocl-icd-libopencl1"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y pocl-opencl-icd ocl-icd-libopencl1
    if ! have_opencl; then
        echo "error: PoCL was installed but no OpenCL ICD is registered in /etc/OpenCL/vendors" >&2
        exit 1
    fi
fi
# Every CUDA kernel is compiled to PTX by NVRTC, which needs no GPU. Without NVRTC, install the
# NVRTC wheel from PyPI and point strata at it. The tests then require NVRTC: not loading it
# is a failure. (CUDA kernels *run* only where a GPU is; STRATA_REQUIRE=cuda makes that required.)
nvrtc_dir() {
    local d
    d="$(python3 -c 'import nvidia.cuda_nvrtc as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null)" &&
        compgen -G "$d/libnvrtc.so*" >/dev/null && echo "$d"
}
have_nvrtc() {
    [ -n "${STRATA_NVRTC:-}" ] ||
        { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libnvrtc\.so' ||
        compgen -G '/usr/local/cuda/lib64/libnvrtc.so*' >/dev/null ||
        [ -n "$(nvrtc_dir)" ]
}
if ! have_nvrtc; then
    if ! command -v python3 >/dev/null 2>&1; then
        echo "error: NVRTC is required by the tests; install python3 and pip (to get the" \
            "nvidia-cuda-nvrtc-cu12 wheel) or the CUDA toolkit" >&2
        exit 1
    fi
    echo "== nvrtc: not found; installing the NVRTC wheel (pip install nvidia-cuda-nvrtc-cu12)"
    python3 -m pip install --quiet --disable-pip-version-check 'nvidia-cuda-nvrtc-cu12>=12,<13' ||
        python3 -m pip install --quiet --disable-pip-version-check --user 'nvidia-cuda-nvrtc-cu12>=12,<13'
fi
if [ -z "${STRATA_NVRTC:-}" ] && [ -n "$(nvrtc_dir)" ]; then
    export STRATA_NVRTC="$(nvrtc_dir)"
fi
echo "== nvrtc: ${STRATA_NVRTC:-from the system library path}"
export STRATA_REQUIRE="${STRATA_REQUIRE:+$STRATA_REQUIRE,}opencl,nvrtc"
echo "== STRATA_REQUIRE=$STRATA_REQUIRE"
# Tests run with tuning records of their own (none unless a test writes them), never with the
# records `strata tune` left in this user's cache.
export STRATA_TUNE_DIR="$(mktemp -d)"
echo "== STRATA_TUNE_DIR=$STRATA_TUNE_DIR"

echo "== format"
cargo fmt --all -- --check
echo "== lint"
cargo clippy --all-targets --locked -- -D warnings
echo "== the library's dependencies: none of the tools'"
tools_deps="$(cargo tree --locked -p strata -e normal --prefix none | grep -E '^(clap|serde|serde_json|indicatif|plotters|image|png) ' || true)"
if [ -n "$tools_deps" ]; then
    echo "error: the strata library depends on what only the tools need:" >&2
    echo "$tools_deps" >&2
    exit 1
fi
echo "== the CPU backend alone (no opencl, no cuda feature)"
cargo build --locked -p strata --no-default-features
cargo clippy --locked -p strata --no-default-features --lib --test features -- -D warnings
cargo test --locked -p strata --no-default-features --test features
echo "== tests"
cargo test --locked --all-targets
echo "== doc tests"
cargo test --locked --doc
