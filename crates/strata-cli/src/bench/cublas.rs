//! cuBLAS, loaded at run time: the SGEMM baseline of `strata bench` on CUDA devices.
//!
//! Nothing of cuBLAS is needed to build or use strata; the benchmark loads it when it compares
//! strata's SGEMM with it. **Finding cuBLAS**, in order: the file or folder named by
//! `STRATA_CUBLAS`; the system's library search path (`libcublas.so.13`, `libcublas.so.12`,
//! `libcublas.so`); `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`; and the
//! Python wheels `nvidia-cublas-cu12` (`nvidia/cublas/lib`, which PyTorch depends on) and CUDA
//! 13's `nvidia-cublas` (`nvidia/cu13/lib`), found through `python3`. cuBLAS needs its companion
//! `libcublasLt`: when the library found lies in a folder that has one of the same version, that
//! one is loaded first, so that the folder need not be on the search path. The libraries stay
//! loaded, and strata calls cuBLAS through its own table of function pointers, every one
//! resolved when the library is loaded (an incomplete library is an error, not a panic), the
//! way it calls NVRTC.

use std::ffi::{c_int, c_void};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The cuBLAS functions strata calls, in the order of the fields of [`Api`].
const SYMBOLS: &[&str] = &[
    "cublasCreate_v2",
    "cublasDestroy_v2",
    "cublasSetStream_v2",
    "cublasSetMathMode",
    "cublasGetProperty",
    "cublasSgemm_v2",
];

/// cuBLAS's status code (`cublasStatus_t`); 0 is success.
type Status = c_int;
/// A cuBLAS handle (`cublasHandle_t`).
type Handle = *mut c_void;

/// `CUBLAS_OP_N`: use the matrix as it is.
const OP_N: c_int = 0;
/// `CUBLAS_DEFAULT_MATH`: fp32 arithmetic for `cublasSgemm` (no TF32 tensor cores, which need
/// `CUBLAS_TF32_TENSOR_OP_MATH`).
const DEFAULT_MATH: c_int = 0;

/// cuBLAS's C API (the same in CUDA 12 and 13), resolved from the library that was loaded.
struct Api {
    create: unsafe extern "C" fn(*mut Handle) -> Status,
    destroy: unsafe extern "C" fn(Handle) -> Status,
    set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> Status,
    set_math_mode: unsafe extern "C" fn(Handle, c_int) -> Status,
    get_property: unsafe extern "C" fn(c_int, *mut c_int) -> Status,
    #[allow(clippy::type_complexity)]
    sgemm: unsafe extern "C" fn(
        Handle,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        *const f32,
        *const f32,
        c_int,
        *const f32,
        c_int,
        *const f32,
        *mut f32,
        c_int,
    ) -> Status,
}

/// The name of a cuBLAS status.
fn status_name(s: Status) -> String {
    match s {
        1 => "CUBLAS_STATUS_NOT_INITIALIZED".into(),
        3 => "CUBLAS_STATUS_ALLOC_FAILED".into(),
        7 => "CUBLAS_STATUS_INVALID_VALUE".into(),
        8 => "CUBLAS_STATUS_ARCH_MISMATCH".into(),
        11 => "CUBLAS_STATUS_MAPPING_ERROR".into(),
        13 => "CUBLAS_STATUS_EXECUTION_FAILED".into(),
        14 => "CUBLAS_STATUS_INTERNAL_ERROR".into(),
        15 => "CUBLAS_STATUS_NOT_SUPPORTED".into(),
        16 => "CUBLAS_STATUS_LICENSE_ERROR".into(),
        other => format!("cuBLAS status {other}"),
    }
}

fn check(call: &str, status: Status) -> strata::Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(strata::Error::Backend {
            backend: "cuda",
            message: format!("{call} failed: {}", status_name(status)),
        })
    }
}

/// The loaded cuBLAS library.
struct Cublas {
    path: PathBuf,
    /// Major, minor and patch version (`cublasGetProperty`).
    version: (i32, i32, i32),
    api: Api,
    /// Keeps cuBLAS (last) and the `libcublasLt` loaded before it, and so every pointer of
    /// `api`, loaded for the life of the process.
    _libs: Vec<libloading::Library>,
}

/// Where cuBLAS may be, in the order tried (see the module docs).
fn candidates() -> Result<Vec<PathBuf>, String> {
    strata::cuda::library_candidates(
        "STRATA_CUBLAS",
        &["libcublas.so.13", "libcublas.so.12", "libcublas.so"],
        &[("nvidia.cublas", "lib"), ("nvidia.cu13", "lib")],
    )
}

/// Loads `libcublasLt` of the same version from the folder of `cublas`, if it is there.
fn companion(cublas: &std::path::Path) -> Option<libloading::Library> {
    let dir = cublas.parent().filter(|d| !d.as_os_str().is_empty())?;
    let name = cublas.file_name()?.to_str()?;
    let lt = dir.join(name.replacen("libcublas", "libcublasLt", 1));
    // SAFETY: loading cuBLASLt runs no initialization with preconditions.
    lt.exists()
        .then(|| unsafe { libloading::Library::new(&lt) }.ok())
        .flatten()
}

fn load() -> Result<Cublas, String> {
    let candidates = candidates()?;
    let mut tried = Vec::new();
    for c in &candidates {
        if c.components().count() > 1 && !c.exists() {
            continue;
        }
        let mut libs: Vec<libloading::Library> = companion(c).into_iter().collect();
        // SAFETY: loading cuBLAS runs no initialization with preconditions (a handle is made
        // only by cublasCreate).
        let lib = match unsafe { libloading::Library::new(c) } {
            Ok(lib) => lib,
            Err(e) => {
                tried.push(format!("{}: {e}", c.display()));
                continue;
            }
        };
        let missing: Vec<&str> = SYMBOLS
            .iter()
            .copied()
            // SAFETY: only the symbol's address is looked up; nothing is called.
            .filter(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the cuBLAS library `{}` lacks {} (strata needs CUDA 12 or later)",
                c.display(),
                missing.join(", ")
            ));
        }
        /// One symbol as a function pointer of the type the field expects.
        fn get<T: Copy>(lib: &libloading::Library, name: &str) -> T {
            // SAFETY: the symbol exists (checked above) and `T` is the C signature cuBLAS
            // documents for it; the pointer is used only while the library stays loaded.
            unsafe {
                *lib.get::<T>(name.as_bytes())
                    .expect("symbol checked present")
            }
        }
        let api = Api {
            create: get(&lib, SYMBOLS[0]),
            destroy: get(&lib, SYMBOLS[1]),
            set_stream: get(&lib, SYMBOLS[2]),
            set_math_mode: get(&lib, SYMBOLS[3]),
            get_property: get(&lib, SYMBOLS[4]),
            sgemm: get(&lib, SYMBOLS[5]),
        };
        let mut version = [0 as c_int; 3];
        for (kind, v) in version.iter_mut().enumerate() {
            // SAFETY: `kind` is MAJOR_VERSION, MINOR_VERSION or PATCH_LEVEL; `v` is valid for
            // writes.
            let status = unsafe { (api.get_property)(kind as c_int, v) };
            if status != 0 {
                return Err(format!(
                    "cublasGetProperty of `{}` failed: {}",
                    c.display(),
                    status_name(status)
                ));
            }
        }
        libs.push(lib);
        return Ok(Cublas {
            path: c.clone(),
            version: (version[0], version[1], version[2]),
            api,
            _libs: libs,
        });
    }
    Err(format!(
        "the cuBLAS library was not found; install the CUDA toolkit, or `pip install \
         nvidia-cublas-cu12`, or set STRATA_CUBLAS to the library or its folder (tried {})",
        if tried.is_empty() {
            candidates
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            tried.join("; ")
        }
    ))
}

fn cublas() -> Result<&'static Cublas, String> {
    static CUBLAS: OnceLock<Result<Cublas, String>> = OnceLock::new();
    CUBLAS.get_or_init(load).as_ref().map_err(|e| e.clone())
}

/// Where cuBLAS was loaded from, loading it if needed; or why it cannot be loaded.
pub fn cublas_path() -> Result<PathBuf, String> {
    cublas().map(|c| c.path.clone())
}

/// The cuBLAS version (`(13, 0, 0)`), loading it if needed; or why it cannot be loaded.
pub fn cublas_version() -> Result<(i32, i32, i32), String> {
    cublas().map(|c| c.version)
}

/// A cuBLAS handle bound to one stream, in the default (fp32, no TF32) math mode; destroyed
/// when dropped. Create it with the device's context current.
pub(crate) struct CublasHandle {
    handle: Handle,
    api: &'static Api,
}

impl Drop for CublasHandle {
    fn drop(&mut self) {
        // SAFETY: created by cublasCreate, destroyed once, after its work was synchronized.
        let _ = unsafe { (self.api.destroy)(self.handle) };
    }
}

impl CublasHandle {
    /// A handle whose work runs on `stream` (a `CUstream` of the current context).
    pub(crate) fn new(stream: *mut c_void) -> strata::Result<CublasHandle> {
        let lib = cublas().map_err(|message| strata::Error::Backend {
            backend: "cuda",
            message,
        })?;
        let api = &lib.api;
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: `handle` is valid for writes.
        check("cublasCreate", unsafe { (api.create)(&mut handle) })?;
        let h = CublasHandle { handle, api };
        // SAFETY: a live handle; the stream belongs to the current context.
        check("cublasSetStream", unsafe {
            (api.set_stream)(h.handle, stream)
        })?;
        // SAFETY: a live handle.
        check("cublasSetMathMode", unsafe {
            (api.set_math_mode)(h.handle, DEFAULT_MATH)
        })?;
        Ok(h)
    }

    /// Enqueues `c = a * b` for row-major `a` (`m x k`), `b` (`k x n`) and `c` (`m x n`) in
    /// device memory. cuBLAS is column-major: a row-major matrix is the column-major matrix of
    /// its transpose, so this asks for `c^T = b^T a^T`.
    ///
    /// # Safety
    ///
    /// `a`, `b` and `c` must be device pointers of the handle's context holding at least
    /// `m * k`, `k * n` and `m * n` floats, alive until the stream has finished the work.
    pub(crate) unsafe fn sgemm_row_major(
        &self,
        (m, n, k): (usize, usize, usize),
        a: u64,
        b: u64,
        c: u64,
    ) -> strata::Result<()> {
        let dim = |v: usize| {
            c_int::try_from(v).map_err(|_| strata::Error::Backend {
                backend: "cuda",
                message: format!("cublasSgemm: size {v} exceeds a C int"),
            })
        };
        let (m, n, k) = (dim(m)?, dim(n)?, dim(k)?);
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: the caller's contract; alpha and beta are host pointers (the default pointer
        // mode), alive for the call.
        check("cublasSgemm", unsafe {
            (self.api.sgemm)(
                self.handle,
                OP_N,
                OP_N,
                n,
                m,
                k,
                &alpha,
                b as usize as *const f32,
                n,
                a as usize as *const f32,
                k,
                &beta,
                c as usize as *mut f32,
                n,
            )
        })
    }
}
