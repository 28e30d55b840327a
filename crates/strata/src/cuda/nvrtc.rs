//! NVRTC: finding the library, compiling generated CUDA C++ to PTX, and the PTX cache on disk.
//!
//! This needs no GPU and no CUDA driver, only the NVRTC library, so CI compiles every kernel
//! here even on machines without a GPU.
//!
//! **Finding NVRTC.** In order: the file or folder named by `STRATA_NVRTC`; the system's library
//! search path (`libnvrtc.so`, `libnvrtc.so.12`, `libnvrtc.so.13`); `$CUDA_PATH/lib64`,
//! `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`; and the `nvidia-cuda-nvrtc-cu12` Python
//! wheel (`pip install nvidia-cuda-nvrtc-cu12`, or the CUDA 13 wheel `nvidia-cuda-nvrtc`),
//! found through `python3`. The library found is loaded by its path and kept loaded, and strata
//! calls it through its own table of function pointers, resolved from that library (whatever
//! its soname: NVRTC 12 and 13 both work). Every symbol is resolved when the library is loaded,
//! so an incomplete library is an error, not a panic.
//!
//! **The cache.** Compiled PTX and CUBINs ([`Output`]) are stored in a folder, one file per
//! kernel and output, named by a 128-bit hash of the source, the compile options, the target
//! architecture, the NVRTC version and strata's version (all of which also head the file and
//! are compared when it is read), written to a temporary file and renamed into place, so that
//! concurrent processes never read half a file. A later process that compiles the same kernel
//! for the same architecture with the same NVRTC reads the file instead of compiling. The
//! folder is `$STRATA_CUDA_CACHE` if set (`off` disables the cache), else
//! `$XDG_CACHE_HOME/strata/ptx`, else `~/.cache/strata/ptx`. A cache that cannot be read or
//! written is skipped, never an error.
//!
//! **Damaged entries are never served.** The line after the header holds the length of the
//! compiled output and a 128-bit checksum of it; an entry whose header, length or checksum does
//! not match (a truncated file, a flipped bit, a file of another program) is removed, the
//! kernel is compiled again and the entry rewritten, with one warning on stderr naming the
//! file and what was wrong (`lookup`).

use crate::codegen::Generated;
use crate::disk_cache::{hash128, EntryFormat, Lookup};
use crate::error::{number_lines, Error, Result};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The NVRTC functions strata calls, in the order of the fields of [`Api`].
const SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetErrorString",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
];

/// NVRTC's status code (`nvrtcResult`); 0 is success.
type Status = c_int;
/// An NVRTC program handle (`nvrtcProgram`).
type Program = *mut c_void;

/// NVRTC's C API (the signatures are the same in CUDA 12 and 13), resolved from the library
/// that was loaded. The pointers stay valid while [`Nvrtc::_lib`] is loaded, which is for the
/// life of the process.
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status,
    create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status,
    destroy_program: unsafe extern "C" fn(*mut Program) -> Status,
    get_program_log_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    get_program_log: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    get_ptx_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    get_ptx: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    get_error_string: unsafe extern "C" fn(Status) -> *const c_char,
    get_cubin_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    get_cubin: unsafe extern "C" fn(Program, *mut c_char) -> Status,
}

impl Api {
    /// Resolves every function of the API from `lib`; the names missing, if any.
    fn resolve(lib: &libloading::Library) -> std::result::Result<Api, Vec<&'static str>> {
        let missing = super::missing_symbols(lib, SYMBOLS);
        if !missing.is_empty() {
            return Err(missing);
        }
        /// One symbol as a function pointer of the type the field expects.
        fn get<T: Copy>(lib: &libloading::Library, name: &str) -> T {
            // SAFETY: the symbol exists (checked above) and `T` is the C signature NVRTC
            // documents for it; the pointer is used only while the library stays loaded.
            unsafe {
                *lib.get::<T>(name.as_bytes())
                    .expect("symbol checked present")
            }
        }
        Ok(Api {
            version: get(lib, SYMBOLS[0]),
            create_program: get(lib, SYMBOLS[1]),
            compile_program: get(lib, SYMBOLS[2]),
            destroy_program: get(lib, SYMBOLS[3]),
            get_program_log_size: get(lib, SYMBOLS[4]),
            get_program_log: get(lib, SYMBOLS[5]),
            get_ptx_size: get(lib, SYMBOLS[6]),
            get_ptx: get(lib, SYMBOLS[7]),
            get_error_string: get(lib, SYMBOLS[8]),
            get_cubin_size: get(lib, SYMBOLS[9]),
            get_cubin: get(lib, SYMBOLS[10]),
        })
    }

    /// An NVRTC status as text (`NVRTC_ERROR_COMPILATION`).
    fn describe(&self, status: Status) -> String {
        // SAFETY: NVRTC returns a static NUL-terminated string for every status.
        let p = unsafe { (self.get_error_string)(status) };
        if p.is_null() {
            return format!("NVRTC error {status}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }

    /// `Ok` for success, else the call's name and the status as text.
    fn check(&self, call: &str, status: Status) -> std::result::Result<(), String> {
        if status == 0 {
            Ok(())
        } else {
            Err(format!("{call} failed: {}", self.describe(status)))
        }
    }
}

/// The loaded NVRTC library.
struct Nvrtc {
    path: PathBuf,
    version: (i32, i32),
    api: Api,
    /// Keeps the library (and so every pointer of `api`) loaded for the life of the process.
    _lib: libloading::Library,
}

/// Where NVRTC may be, in the order tried (see the module docs). The pip wheels:
/// `nvidia-cuda-nvrtc-cu12` (`nvidia/cuda_nvrtc/lib`) and CUDA 13's `nvidia-cuda-nvrtc`
/// (`nvidia/cu13/lib`).
fn candidates() -> std::result::Result<Vec<PathBuf>, String> {
    super::library_candidates(
        "STRATA_NVRTC",
        &["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.13"],
        &[("nvidia.cuda_nvrtc", "lib"), ("nvidia.cu13", "lib")],
    )
}

fn load() -> std::result::Result<Nvrtc, String> {
    let candidates = candidates()?;
    let mut tried = Vec::new();
    for c in &candidates {
        // Only files that exist, or bare names (which the system's search path resolves).
        if c.components().count() > 1 && !c.exists() {
            continue;
        }
        // SAFETY: loading NVRTC runs no initialization code with preconditions.
        let lib = match unsafe { libloading::Library::new(c) } {
            Ok(lib) => lib,
            Err(e) => {
                tried.push(format!("{}: {e}", c.display()));
                continue;
            }
        };
        let api = Api::resolve(&lib).map_err(|missing| {
            format!(
                "the NVRTC library `{}` lacks {} (too old? strata needs CUDA 12 or later)",
                c.display(),
                missing.join(", ")
            )
        })?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the pointers are valid for writes.
        api.check("nvrtcVersion", unsafe {
            (api.version)(&mut major, &mut minor)
        })?;
        return Ok(Nvrtc {
            path: c.clone(),
            version: (major, minor),
            api,
            _lib: lib,
        });
    }
    Err(format!(
        "the NVRTC library was not found; install the CUDA toolkit, or \
         `pip install nvidia-cuda-nvrtc-cu12`, or set STRATA_NVRTC to the library or its \
         folder (tried {})",
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

fn nvrtc() -> std::result::Result<&'static Nvrtc, String> {
    static NVRTC: OnceLock<std::result::Result<Nvrtc, String>> = OnceLock::new();
    NVRTC.get_or_init(load).as_ref().map_err(|e| e.clone())
}

/// The NVRTC version (`(12, 9)`), loading NVRTC if needed; or why it cannot be loaded.
pub fn nvrtc_version() -> std::result::Result<(i32, i32), String> {
    nvrtc().map(|n| n.version)
}

/// Where NVRTC was loaded from; or why it cannot be loaded.
pub fn nvrtc_path() -> std::result::Result<PathBuf, String> {
    nvrtc().map(|n| n.path.clone())
}

/// The PTX cache folder, or `None` when `STRATA_CUDA_CACHE=off` (see the module docs).
pub fn ptx_cache_dir() -> Option<PathBuf> {
    crate::settings::user_cache_dir("STRATA_CUDA_CACHE", "ptx")
}

/// Compiled PTX.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Ptx {
    /// The PTX text.
    pub text: String,
    /// Whether it was read from the disk cache rather than compiled.
    pub from_cache: bool,
}

/// What NVRTC produces: PTX (portable, compiled again by the driver when loaded) or a CUBIN
/// (machine code for exactly one architecture, loaded as it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// PTX for `compute_XY` (`90` for compute_90).
    Ptx(u32),
    /// A CUBIN for `sm_XY`.
    Cubin(u32),
}

/// The PTX cache's entries (the format is `disk_cache`'s).
const CACHE: EntryFormat = EntryFormat {
    item: "kernel",
    body: "compiled code",
};

/// Compiles generated CUDA C++ to PTX for compute capability `arch` (`90` for sm_90), with
/// the dialect's options and `extra_options`, through the disk cache. A compile error is
/// [`Error::CompileFailed`] with NVRTC's log and the numbered source.
pub fn compile_ptx(
    kernel: &str,
    generated: &Generated,
    arch: u32,
    extra_options: &[String],
) -> Result<Ptx> {
    let (bytes, from_cache) = compile(kernel, generated, Output::Ptx(arch), extra_options)?;
    Ok(Ptx {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        from_cache,
    })
}

/// Compiles generated CUDA C++ to `output` through the disk cache, like [`compile_ptx`];
/// returns the bytes (PTX text without its final NUL, or the CUBIN image) and whether they
/// came from the cache.
pub fn compile(
    kernel: &str,
    generated: &Generated,
    output: Output,
    extra_options: &[String],
) -> Result<(Vec<u8>, bool)> {
    let lib = nvrtc().map_err(|why| Error::Backend {
        backend: "cuda",
        message: why,
    })?;
    let mut options: Vec<String> = generated.options.clone();
    let (target, ext) = match output {
        Output::Ptx(arch) => (format!("--gpu-architecture=compute_{arch}"), "ptx"),
        Output::Cubin(arch) => (format!("--gpu-architecture=sm_{arch}"), "cubin"),
    };
    options.push(target);
    options.extend(extra_options.iter().cloned());
    let header = format!(
        "// strata PTX cache v2: strata {}, NVRTC {}.{}, options {:?}, source {:032x}",
        env!("CARGO_PKG_VERSION"),
        lib.version.0,
        lib.version.1,
        options,
        hash128(&[generated.source.as_bytes()])
    );
    let file = ptx_cache_dir().map(|d| {
        d.join(format!(
            "{}-{:032x}.{ext}",
            generated.entry,
            hash128(&[header.as_bytes()])
        ))
    });
    if let Some(f) = &file {
        match CACHE.lookup(f, &header) {
            Lookup::Hit(body) => return Ok((body, true)),
            Lookup::Miss => {}
            Lookup::Damaged(why) => {
                eprintln!(
                    "strata: warning: the CUDA cache entry {} is damaged ({why}); compiling kernel `{kernel}` again",
                    f.display()
                );
                let _ = std::fs::remove_file(f);
            }
        }
    }
    let out = compile_uncached(kernel, generated, &options, lib, output)?;
    if let Some(f) = &file {
        CACHE.store(f, &CACHE.entry(&header, &out));
    }
    Ok((out, false))
}

/// A NUL-terminated C buffer as trimmed text.
fn c_text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).trim().to_string()
}

/// A PTX buffer without its terminating NUL.
fn ptx_bytes(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    bytes.truncate(end);
    bytes
}

/// An NVRTC program, destroyed when dropped.
struct LiveProgram<'a> {
    handle: Program,
    api: &'a Api,
}

impl Drop for LiveProgram<'_> {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        let _ = unsafe { (self.api.destroy_program)(&mut self.handle) };
    }
}

impl LiveProgram<'_> {
    /// Reads one of the program's outputs (the log, the PTX, the CUBIN) through its size and
    /// fill functions.
    fn read(
        &self,
        what: &str,
        size: unsafe extern "C" fn(Program, *mut usize) -> Status,
        fill: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    ) -> std::result::Result<Vec<u8>, String> {
        let mut n = 0usize;
        // SAFETY: a live program; `n` is valid for writes.
        self.api.check(&format!("{what} size"), unsafe {
            size(self.handle, &mut n)
        })?;
        let mut buf = vec![0u8; n.max(1)];
        // SAFETY: `buf` holds the `n` bytes NVRTC said it will write.
        self.api
            .check(what, unsafe { fill(self.handle, buf.as_mut_ptr().cast()) })?;
        buf.truncate(n);
        Ok(buf)
    }
}

fn compile_uncached(
    kernel: &str,
    generated: &Generated,
    options: &[String],
    lib: &Nvrtc,
    output: Output,
) -> Result<Vec<u8>> {
    let fail = |message: String| Error::Backend {
        backend: "cuda",
        message,
    };
    let api = &lib.api;
    let src = CString::new(generated.source.as_str())
        .map_err(|_| fail(format!("strata bug: the source of `{kernel}` contains NUL")))?;
    let name = CString::new(format!("{}.cu", generated.entry))
        .map_err(|_| fail(format!("strata bug: the entry of `{kernel}` contains NUL")))?;
    let c_options = options
        .iter()
        .map(|o| CString::new(o.as_str()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| fail(format!("strata bug: an option of `{kernel}` contains NUL")))?;
    let option_ptrs: Vec<*const c_char> = c_options.iter().map(|o| o.as_ptr()).collect();
    let mut handle: Program = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings alive for the call; no headers (count 0, null arrays).
    let created = unsafe {
        (api.create_program)(
            &mut handle,
            src.as_ptr(),
            name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    api.check("nvrtcCreateProgram", created).map_err(fail)?;
    let prog = LiveProgram { handle, api };
    // SAFETY: a live program; `option_ptrs` points at NUL-terminated strings alive here.
    let compiled = unsafe {
        (api.compile_program)(
            prog.handle,
            option_ptrs.len() as c_int,
            option_ptrs.as_ptr(),
        )
    };
    if let Err(e) = api.check("nvrtcCompileProgram", compiled) {
        let log = prog
            .read(
                "nvrtcGetProgramLog",
                api.get_program_log_size,
                api.get_program_log,
            )
            .map(|l| c_text(&l))
            .unwrap_or_default();
        return Err(Error::CompileFailed {
            kernel: kernel.to_string(),
            backend: format!(
                "CUDA (NVRTC {}.{}, {})",
                lib.version.0,
                lib.version.1,
                options.join(" ")
            ),
            log: format!("{e}\n{log}"),
            source_listing: number_lines(&generated.source),
        });
    }
    match output {
        Output::Ptx(_) => prog
            .read("nvrtcGetPTX", api.get_ptx_size, api.get_ptx)
            .map(ptx_bytes),
        Output::Cubin(_) => prog.read("nvrtcGetCUBIN", api.get_cubin_size, api.get_cubin),
    }
    .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of damage to a cache file is found: a truncated body, a flipped bit in the
    /// body, the length or the header, a missing length line, an empty file.
    #[test]
    fn damaged_cache_entries_are_found() {
        let dir = std::env::temp_dir().join(format!("strata-nvrtc-lookup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("k.ptx");
        let header = "// strata PTX cache v2: strata 0, NVRTC 12.9, options [], source 0";
        let body: Vec<u8> = (0..200u8).collect();
        let whole = CACHE.entry(header, &body);
        assert_eq!(CACHE.lookup(&file, header), Lookup::Miss);
        std::fs::write(&file, &whole).unwrap();
        assert_eq!(CACHE.lookup(&file, header), Lookup::Hit(body.clone()));
        let damaged = |contents: &[u8]| {
            std::fs::write(&file, contents).unwrap();
            match CACHE.lookup(&file, header) {
                Lookup::Damaged(why) => why,
                other => panic!("{other:?} from a damaged file"),
            }
        };
        let why = damaged(&whole[..whole.len() - 7]);
        assert_eq!(
            why,
            "193 bytes of compiled code where its length line says 200"
        );
        let body_start = whole.len() - body.len();
        for bit in [
            body_start * 8,
            whole.len() * 8 - 1,
            (body_start + 100) * 8 + 3,
        ] {
            let mut flipped = whole.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let why = damaged(&flipped);
            assert_eq!(why, "its checksum does not match its contents");
        }
        let mut flipped = whole.clone();
        flipped[3] ^= 0x20;
        assert_eq!(damaged(&flipped), "its header is not this kernel's key");
        let len_digit = header.len() + 1 + "// length ".len();
        let mut flipped = whole.clone();
        flipped[len_digit] ^= 0x01; // '2' -> '3'
        assert!(damaged(&flipped).contains("its length line says 300"));
        assert_eq!(
            damaged(format!("{header}\n").as_bytes()),
            "it has no length and checksum line"
        );
        assert_eq!(damaged(b""), "its header is not this kernel's key");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
