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

# Whether the dynamic linker's cache lists a library. The list is read whole before it is
# searched: in `ldconfig -p | grep -q`, grep leaves at its first match, ldconfig may then die
# of SIGPIPE, and under `pipefail` the pipeline fails now and then although the library is
# there (seen: "lavapipe was installed but no Vulkan ICD" with every file in place).
has_library() {
    local cache
    cache="$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true)"
    grep -q "$1" <<<"$cache"
}

# The OpenCL tests need an OpenCL library and a driver (ICD). Without one, install PoCL (OpenCL
# on the CPU) with the ICD loader. The tests then require OpenCL: no OpenCL device is a failure.
have_opencl() {
    has_library 'libOpenCL\.so\.1' &&
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
        has_library 'libnvrtc\.so' ||
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
# ptxas assembles the PTX to SASS (crates/strata-cli/tests/ptxas.rs: registers, spills, local
# memory, inline PTX). Found as STRATA_PTXAS, on PATH, in /usr/local/cuda/bin or in the
# nvidia-cuda-nvcc-cu12 wheel (installed like the NVRTC wheel); the tests then require it.
ptxas_wheel() {
    local d
    d="$(python3 -c 'import nvidia.cuda_nvcc as m; print(list(m.__path__)[0] + "/bin/ptxas")' 2>/dev/null)" &&
        [ -x "$d" ] && echo "$d"
}
if [ -z "${STRATA_PTXAS:-}" ] && ! command -v ptxas >/dev/null 2>&1 &&
    [ ! -x /usr/local/cuda/bin/ptxas ] && [ -z "$(ptxas_wheel)" ]; then
    echo "== ptxas: not found; installing the nvcc wheel (pip install nvidia-cuda-nvcc-cu12)"
    python3 -m pip install --quiet --disable-pip-version-check 'nvidia-cuda-nvcc-cu12>=12,<13' ||
        python3 -m pip install --quiet --disable-pip-version-check --user 'nvidia-cuda-nvcc-cu12>=12,<13'
fi
if [ -z "${STRATA_PTXAS:-}" ] && [ -n "$(ptxas_wheel)" ]; then
    export STRATA_PTXAS="$(ptxas_wheel)"
fi
echo "== ptxas: ${STRATA_PTXAS:-from PATH or /usr/local/cuda/bin}"

# The Vulkan tests need the Vulkan loader, a driver and spirv-tools (`spirv-as` assembles the
# runtime's fixtures, `spirv-val` validates the generated SPIR-V). Without them, install
# lavapipe (Mesa's Vulkan on the CPU), the loader and spirv-tools, as PoCL above.
have_vulkan() {
    has_library 'libvulkan\.so\.1' &&
        compgen -G '/usr/share/vulkan/icd.d/*.json' >/dev/null &&
        command -v spirv-as >/dev/null 2>&1 && command -v spirv-val >/dev/null 2>&1
}
if have_vulkan; then
    echo "== vulkan: loader, driver and spirv-tools present: $(ls /usr/share/vulkan/icd.d/ | tr '\n' ' ')"
else
    echo "== vulkan: missing; installing mesa-vulkan-drivers libvulkan1 spirv-tools"
    if [ "$(id -u)" -eq 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "error: Vulkan is required by the tests; run as root or install sudo, or install" \
            "lavapipe (apt-get install mesa-vulkan-drivers libvulkan1 spirv-tools)" >&2
        exit 1
    fi
    echo "+ ${as_root[*]} apt-get update"
    "${as_root[@]}" apt-get update
    echo "+ ${as_root[*]} apt-get install -y mesa-vulkan-drivers libvulkan1 spirv-tools"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y mesa-vulkan-drivers libvulkan1 spirv-tools
    if ! have_vulkan; then
        echo "error: lavapipe was installed but no Vulkan ICD is in /usr/share/vulkan/icd.d" >&2
        exit 1
    fi
fi
export STRATA_REQUIRE="${STRATA_REQUIRE:+$STRATA_REQUIRE,}opencl,nvrtc,ptxas,vulkan"
echo "== STRATA_REQUIRE=$STRATA_REQUIRE"
# Tests run with tuning records of their own (none unless a test writes them), never with the
# records `strata tune` left in this user's cache.
export STRATA_TUNE_DIR="$(mktemp -d)"
echo "== STRATA_TUNE_DIR=$STRATA_TUNE_DIR"

# In CI the clone is new and built once: incremental compilation's caches would only double
# the disk the build takes.
if [ -n "${CI:-}" ]; then
    export CARGO_INCREMENTAL=0
fi
echo "== disk: $(df -h . | awk 'NR == 2 { print $4 " free of " $2 }')"

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
echo "== the CPU backend alone (no opencl, cuda or vulkan feature)"
cargo build --locked -p strata --no-default-features
cargo clippy --locked -p strata --no-default-features --lib --test features -- -D warnings
cargo test --locked -p strata --no-default-features --test features
echo "== host-data interop (features ndarray and image, off by default)"
cargo clippy --locked -p strata --features ndarray,image --lib --test host_interop -- -D warnings
cargo test --locked -p strata --features ndarray,image --test host_interop
cargo test --locked -p strata --features ndarray,image --doc host_interop
echo "== tests"
cargo test --locked --all-targets
echo "== doc tests"
cargo test --locked --doc
echo "== docs (no broken links, every public item documented)"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --workspace

# MPI (the `mpi` feature, off by default): the `mpi` crate needs an MPI library with `mpicc`
# (OpenMPI) and libclang (its bindings are generated by bindgen) to build, and `mpirun` to run.
# Without them, install them like PoCL above; the MPI runs are then required: a failure to
# build or run them fails the script.
echo "== mpi"
have_mpi() {
    command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1 &&
        has_library 'libclang'
}
if ! have_mpi; then
    echo "== mpi: OpenMPI or libclang missing; installing openmpi-bin libopenmpi-dev libclang-dev"
    if [ "$(id -u)" -eq 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "error: the MPI tests need OpenMPI and libclang; run as root or install sudo, or" \
            "install them (apt-get install openmpi-bin libopenmpi-dev libclang-dev)" >&2
        exit 1
    fi
    "${as_root[@]}" apt-get update
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y openmpi-bin libopenmpi-dev libclang-dev
    if ! have_mpi; then
        echo "error: OpenMPI and libclang were installed but mpirun, mpicc or libclang is missing" >&2
        exit 1
    fi
fi
echo "== mpi: $(mpirun --version 2>&1 | head -n 1)"
# One build of the library with the feature serves the lint, the test and both examples (in
# the strata-examples crate, whose `mpi` feature turns on strata's).
cargo clippy --locked -p strata --features mpi --lib --test mpi_errors -- -D warnings
cargo clippy --locked -p strata-examples --features mpi --example mpi_check --example heat_mpi \
    -- -D warnings
cargo test --locked -p strata --features mpi --test mpi_errors
cargo build --locked -p strata-examples --features mpi --example mpi_check --example heat_mpi
examples="${CARGO_TARGET_DIR:-target}/debug/examples"
mpirun_args=(--oversubscribe)
# In containers, OpenMPI's single-copy shared-memory transfers (CMA) may be refused by ptrace
# restrictions; plain copies work everywhere.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
if [ "$(id -u)" -eq 0 ]; then
    mpirun_args+=(--allow-run-as-root)
fi
run_mpi() {
    echo "+ mpirun -np $*"
    timeout -k 10 300 mpirun "${mpirun_args[@]}" -np "$@"
}
# Point to point, all-reduce, halo exchange (2-D, 3-D) and the typed errors, each rank on
# cpu, opencl:0 or interp by its rank.
run_mpi 2 "$examples/mpi_check"
run_mpi 4 "$examples/mpi_check"
# The heat equation against one rank: on the same backend bit for bit (--tol 0); with ranks
# on different backends within 1e-5 (they may round fused multiply-adds differently).
heat_ref="$(mktemp)"
heat=(--nx 96 --ny 64 --steps 30)
run_mpi 1 "$examples/heat_mpi" "${heat[@]}" --device cpu --out "$heat_ref"
run_mpi 2 "$examples/heat_mpi" "${heat[@]}" --device cpu --compare "$heat_ref" --tol 0
run_mpi 4 "$examples/heat_mpi" "${heat[@]}" --device cpu --compare "$heat_ref" --tol 0
run_mpi 2 "$examples/heat_mpi" "${heat[@]}" --devices cpu,opencl:0 --compare "$heat_ref" --tol 1e-5
run_mpi 4 "$examples/heat_mpi" "${heat[@]}" --devices cpu,opencl:0,interp,cpu \
    --compare "$heat_ref" --tol 1e-5
# In checked mode (no fault, race or uninitialized read), on the same backends as the reference.
run_mpi 2 "$examples/heat_mpi" "${heat[@]}" --devices cpu+checked,interp+checked \
    --compare "$heat_ref" --tol 0
rm -f "$heat_ref"

# Several devices in one process: the Mandelbrot set split over cpu, opencl:0 and interp,
# checked against the first device alone (tests/multi.rs checks the patterns over a set).
echo "== multi-device example"
cargo run --locked -p strata-examples --example multi_device -- \
    --devices cpu,opencl:0,interp --size 96x64
