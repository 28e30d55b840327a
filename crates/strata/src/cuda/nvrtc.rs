//! NVRTC: finding the library, compiling generated CUDA C++ to PTX, and the PTX cache on disk.
//!
//! This needs no GPU and no CUDA driver, only the NVRTC library, so CI compiles every kernel
//! here even on machines without a GPU.
//!
//! **Finding NVRTC.** In order: the file or folder named by `STRATA_NVRTC`; the system's library
//! search path (`libnvrtc.so`, `libnvrtc.so.12`, `libnvrtc.so.13`); `$CUDA_PATH/lib64`,
//! `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`; and the `nvidia-cuda-nvrtc-cu12` Python
//! wheel (`pip install nvidia-cuda-nvrtc-cu12`), found through `python3`. The library found
//! is loaded by its path and kept loaded, and `cudarc` then finds it by its soname, so cudarc
//! never searches on its own (it panics when it finds nothing). Every symbol strata calls is
//! checked first, so an incomplete library is an error, not a panic.
//!
//! **PTX cache.** Compiled PTX is stored in a folder, one file per kernel, named by a 128-bit
//! hash of the source, the compile options, the target architecture and the NVRTC version (all
//! of which also head the file and are compared when it is read). A later process that
//! compiles the same kernel for the same architecture with the same NVRTC reads the file
//! instead of compiling. The folder is `$STRATA_CUDA_CACHE` if set (`off` disables the cache),
//! else `$XDG_CACHE_HOME/strata/ptx`, else `~/.cache/strata/ptx`. A cache that cannot be read
//! or written is skipped, never an error.

use crate::codegen::Generated;
use crate::error::{number_lines, Error, Result};
use cudarc::nvrtc::{result as nv, sys as nvsys};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The NVRTC functions strata (through cudarc) calls.
const SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
];

/// The loaded NVRTC library.
struct Nvrtc {
    path: PathBuf,
    version: (i32, i32),
    /// Keeps the library loaded for the life of the process.
    _lib: libloading::Library,
}

/// Where NVRTC may be, in the order tried.
fn candidates() -> std::result::Result<Vec<PathBuf>, String> {
    const NAMES: [&str; 3] = ["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.13"];
    let in_dir = |d: &Path| NAMES.iter().map(|n| d.join(n)).collect::<Vec<_>>();
    if let Some(v) = std::env::var_os("STRATA_NVRTC").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        return if p.is_dir() {
            Ok(in_dir(&p))
        } else if p.exists() {
            Ok(vec![p])
        } else {
            Err(format!(
                "STRATA_NVRTC is set to `{}`, which does not exist",
                p.display()
            ))
        };
    }
    let mut c: Vec<PathBuf> = NAMES.iter().map(PathBuf::from).collect();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(d) = std::env::var_os(var) {
            c.extend(in_dir(&PathBuf::from(d).join("lib64")));
        }
    }
    c.extend(in_dir(Path::new("/usr/local/cuda/lib64")));
    // The pip wheel `nvidia-cuda-nvrtc-cu12`: ask Python where it is.
    if let Ok(out) = std::process::Command::new("python3")
        .args([
            "-c",
            "import nvidia.cuda_nvrtc as m; print(list(m.__path__)[0])",
        ])
        .stderr(std::process::Stdio::null())
        .output()
    {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && !dir.is_empty() {
            c.extend(in_dir(&Path::new(&dir).join("lib")));
        }
    }
    Ok(c)
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
        let missing = super::missing_symbols(&lib, SYMBOLS);
        if !missing.is_empty() {
            return Err(format!(
                "the NVRTC library `{}` lacks {} (too old? strata needs CUDA 12 or later)",
                c.display(),
                missing.join(", ")
            ));
        }
        // cudarc opens NVRTC by name; with this library loaded, the dynamic loader matches
        // that name against its soname.
        // SAFETY: only tries to open the library.
        if !unsafe { nvsys::is_culib_present() } {
            return Err(format!(
                "found NVRTC at `{}`, but cudarc cannot open it by any of the names it tries \
                 (libnvrtc.so, libnvrtc.so.12, ...); put a `libnvrtc.so` link to it on \
                 LD_LIBRARY_PATH",
                c.display()
            ));
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the symbol exists (checked above); the pointers are valid for writes.
        let r = unsafe { nvsys::nvrtcVersion(&mut major, &mut minor) };
        if r != nvsys::nvrtcResult::NVRTC_SUCCESS {
            return Err(format!("nvrtcVersion failed: {r:?}"));
        }
        return Ok(Nvrtc {
            path: c.clone(),
            version: (major, minor),
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
    match std::env::var_os("STRATA_CUDA_CACHE") {
        Some(v) if v == "off" || v == "0" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("strata").join("ptx")),
    }
}

/// Compiled PTX.
#[derive(Clone, Debug)]
pub struct Ptx {
    /// The PTX text.
    pub text: String,
    /// Whether it was read from the disk cache rather than compiled.
    pub from_cache: bool,
}

/// 128-bit FNV-1a (two 64-bit lanes with different offsets): a cache key, not a checksum
/// against tampering.
fn hash128(parts: &[&[u8]]) -> u128 {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for p in parts {
        for &x in p.iter().chain(&[0xff]) {
            a = (a ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
            b = (b ^ x as u64)
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    ((a as u128) << 64) | b as u128
}

/// Compiles generated CUDA C++ to PTX for compute capability `arch` (`90` for sm_90), with
/// the dialect's options and `extra_options`, through the disk cache. A compile error is
/// [`Error::CompileFailed`] with NVRTC's log and the numbered source.
pub fn compile_ptx(
    kernel: &str,
    generated: &Generated,
    arch: u32,
    extra_options: &[String],
) -> Result<Ptx> {
    let lib = nvrtc().map_err(|why| Error::Backend {
        backend: "cuda",
        message: why,
    })?;
    let mut options: Vec<String> = generated.options.clone();
    options.push(format!("--gpu-architecture=compute_{arch}"));
    options.extend(extra_options.iter().cloned());
    let header = format!(
        "// strata PTX cache v1: NVRTC {}.{}, options {:?}, source {:032x}",
        lib.version.0,
        lib.version.1,
        options,
        hash128(&[generated.source.as_bytes()])
    );
    let file = ptx_cache_dir().map(|d| {
        d.join(format!(
            "{}-{:032x}.ptx",
            generated.entry,
            hash128(&[header.as_bytes()])
        ))
    });
    if let Some(text) = file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
        if let Some(ptx) = text
            .strip_prefix(&header)
            .and_then(|t| t.strip_prefix('\n'))
        {
            return Ok(Ptx {
                text: ptx.to_string(),
                from_cache: true,
            });
        }
    }
    let ptx = compile_uncached(kernel, generated, &options, lib)?;
    if let Some(f) = &file {
        store(f, &format!("{header}\n{ptx}"));
    }
    Ok(Ptx {
        text: ptx,
        from_cache: false,
    })
}

/// Writes a cache file atomically (a temporary file renamed into place), so that concurrent
/// processes never read half a file. Failures are ignored: the cache is only a cache.
fn store(file: &Path, contents: &str) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        file.file_name().and_then(|n| n.to_str()).unwrap_or("ptx"),
        std::process::id()
    ));
    if std::fs::write(&tmp, contents).is_ok() && std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn c_text(v: Vec<std::ffi::c_char>) -> String {
    let bytes: Vec<u8> = v
        .into_iter()
        .map(|c| c as u8)
        .take_while(|&c| c != 0)
        .collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

fn compile_uncached(
    kernel: &str,
    generated: &Generated,
    options: &[String],
    lib: &Nvrtc,
) -> Result<String> {
    let fail = |message: String| Error::Backend {
        backend: "cuda",
        message,
    };
    let src = CString::new(generated.source.as_str())
        .map_err(|_| fail(format!("strata bug: the source of `{kernel}` contains NUL")))?;
    let name = CString::new(format!("{}.cu", generated.entry))
        .map_err(|_| fail(format!("strata bug: the entry of `{kernel}` contains NUL")))?;
    let prog = nv::create_program(&src, Some(&name))
        .map_err(|e| fail(format!("nvrtcCreateProgram failed: {e:?}")))?;
    struct Program(nvsys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
            let _ = unsafe { nv::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    // SAFETY: `prog` is a live program; the options are NUL-free strings.
    let compiled = unsafe { nv::compile_program(prog.0, options) };
    if let Err(e) = compiled {
        // SAFETY: `prog` is a live program.
        let log = unsafe { nv::get_program_log(prog.0) }
            .map(c_text)
            .unwrap_or_default();
        return Err(Error::CompileFailed {
            kernel: kernel.to_string(),
            backend: format!(
                "CUDA (NVRTC {}.{}, {})",
                lib.version.0,
                lib.version.1,
                options.join(" ")
            ),
            log: format!("nvrtcCompileProgram failed: {e:?}\n{log}"),
            source_listing: number_lines(&generated.source),
        });
    }
    // SAFETY: `prog` compiled successfully.
    let ptx =
        unsafe { nv::get_ptx(prog.0) }.map_err(|e| fail(format!("nvrtcGetPTX failed: {e:?}")))?;
    Ok(c_text(ptx))
}
