//! Settings: the switches a program gives strata (what to print while compiling kernels, how
//! to load CUDA code), and the one place where strata reads environment variables.
//!
//! **Switches are values.** A [`Settings`] is set on a device
//! ([`Device::set_settings`](crate::Device::set_settings)) and reaches its backend with every
//! kernel the device compiles; nothing inside strata reads a switch from the environment. A
//! program that wants the documented variables to work reads them itself with
//! [`Settings::from_env`] and sets the result on its devices; the `strata` command does, and
//! also takes `--dump`:
//!
//! ```no_run
//! # fn main() -> strata::Result<()> {
//! let device = strata::Device::from_spec("best")?;
//! device.set_settings(strata::Settings::from_env());
//! # Ok(())
//! # }
//! ```
//!
//! Settings live on the device (every clone of it shares them, like its memory budget) rather
//! than in a process-wide switch, so one program can print the code of one device and not of
//! another, and a library linked into a program changes nothing behind its back.
//!
//! **Locations are found in the environment.** Where strata finds what it loads and keeps
//! (NVRTC, its caches, the tuning records) and which OpenCL platforms it lists are read from
//! environment variables when they are first needed, here and nowhere else:
//!
//! | variable | read by | meaning |
//! |---|---|---|
//! | `STRATA_DUMP` | [`Settings::from_env`] | [`Settings::dump`]: `ir`, `opencl`, `cuda`, comma-separated |
//! | `STRATA_CPU_DISASM` | [`Settings::from_env`] | [`Settings::cpu_disasm`], when set (to anything) |
//! | `STRATA_CUDA_LOAD` | [`Settings::from_env`] | [`Settings::cuda_load`]: `ptx` for [`CudaLoad::Ptx`] |
//! | `STRATA_NVRTC` | the CUDA backend | the NVRTC library, or its folder (nothing else is tried when set) |
//! | `CUDA_PATH`, `CUDA_HOME` | the CUDA backend | CUDA toolkits whose `lib64` is searched for NVRTC |
//! | `STRATA_CUDA_CACHE` | the CUDA backend | the PTX and CUBIN disk cache (`off`, `0` or empty: none) |
//! | `STRATA_TUNE_DIR` | [`patterns::tune`](crate::patterns::tune) | the folder of the tuning records (`off`, `0` or empty: none) |
//! | `XDG_CACHE_HOME`, `HOME` | both caches | the default folders: `$XDG_CACHE_HOME/strata/..`, else `~/.cache/strata/..` |
//! | `STRATA_OPENCL_PLATFORM` | the OpenCL backend | only the platforms whose name contains it (case-insensitive) |
//!
//! (`cuda::library_candidates`, which the `strata` command uses to find cuBLAS, reads the
//! variable its caller names, `STRATA_CUBLAS`, the way strata reads `STRATA_NVRTC`.) Tests read
//! `STRATA_REQUIRE` themselves; the library never does.

use std::ffi::OsString;
use std::path::PathBuf;

/// The switches of a device's kernel compilation: what to print and how to load code. The
/// default prints nothing and loads machine code. Set with
/// [`Device::set_settings`](crate::Device::set_settings); read from the documented
/// environment variables with [`Settings::from_env`].
///
/// New settings may be added: it is `#[non_exhaustive]`; start from `Settings::default()` (or
/// [`Settings::from_env`]) and set fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// Print, on standard error, what the device compiles: the optimized IR of each kernel
    /// (the instrumented IR on a device in checked mode) and the OpenCL C or CUDA C++
    /// generated for it. Once per kernel and device: a kernel found in the device's cache is
    /// not compiled, nor printed, again.
    pub dump: Dump,
    /// On the `cpu` backend, print each region's Cranelift IR and machine code for every kernel
    /// compiled.
    pub cpu_disasm: bool,
    /// How the CUDA backend loads the code NVRTC compiled.
    pub cuda_load: CudaLoad,
}

/// What [`Settings::dump`] prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dump {
    /// The optimized IR of every kernel compiled (`ir`).
    pub ir: bool,
    /// The OpenCL C generated for an OpenCL device (`opencl`).
    pub opencl: bool,
    /// The CUDA C++ generated for a CUDA device (`cuda`).
    pub cuda: bool,
}

/// How the CUDA backend loads a kernel ([`Settings::cuda_load`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CudaLoad {
    /// Machine code for the device (CUBIN), with no compilation by the driver, cached on
    /// disk; PTX, compiled by the driver, when the driver refuses the CUBIN (an NVRTC newer
    /// than the driver, say).
    #[default]
    Cubin,
    /// Always PTX, compiled by the driver when loaded (`STRATA_CUDA_LOAD=ptx`).
    Ptx,
}

impl Dump {
    /// The words accepted in a dump list.
    pub const WORDS: [&'static str; 3] = ["ir", "opencl", "cuda"];

    /// A comma-separated list of `ir`, `opencl` and `cuda` (`"ir,cuda"`; empty: nothing);
    /// fails on any other word, naming it.
    pub fn parse(list: &str) -> Result<Dump, String> {
        let mut d = Dump::default();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if !d.set(word) {
                return Err(format!(
                    "`{word}` is not something to dump; the choices are {}",
                    Dump::WORDS.join(", ")
                ));
            }
        }
        Ok(d)
    }

    /// Turns on `word`'s part; `false` for an unknown word.
    fn set(&mut self, word: &str) -> bool {
        match word {
            "ir" => self.ir = true,
            "opencl" => self.opencl = true,
            "cuda" => self.cuda = true,
            _ => return false,
        }
        true
    }

    /// Whether the source generated for the dialect `key` (`"opencl"`, `"cuda"`) is printed.
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    pub(crate) fn source(&self, key: &str) -> bool {
        match key {
            "opencl" => self.opencl,
            "cuda" => self.cuda,
            _ => false,
        }
    }

    /// Everything `o` prints as well.
    pub fn union(self, o: Dump) -> Dump {
        Dump {
            ir: self.ir || o.ir,
            opencl: self.opencl || o.opencl,
            cuda: self.cuda || o.cuda,
        }
    }
}

impl Settings {
    /// The settings the documented environment variables give (see the module's table):
    /// `STRATA_DUMP` (unknown words are ignored), `STRATA_CPU_DISASM` and `STRATA_CUDA_LOAD`;
    /// the default for each variable that is not set.
    pub fn from_env() -> Settings {
        let mut s = Settings::default();
        if let Some(list) = var("STRATA_DUMP") {
            for word in list.to_string_lossy().split(',') {
                s.dump.set(word.trim());
            }
        }
        s.cpu_disasm = std::env::var_os("STRATA_CPU_DISASM").is_some();
        if var("STRATA_CUDA_LOAD").is_some_and(|v| v == "ptx") {
            s.cuda_load = CudaLoad::Ptx;
        }
        s
    }
}

/// The value of the environment variable `name`, unless unset or empty.
fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The path a location variable of the table names (`STRATA_NVRTC`, `CUDA_PATH`, `CUDA_HOME`,
/// or the variable a caller of `cuda::library_candidates` names), unless unset or empty.
#[cfg(feature = "cuda")]
pub(crate) fn location(name: &str) -> Option<PathBuf> {
    var(name).map(PathBuf::from)
}

/// `STRATA_OPENCL_PLATFORM`: the text the names of the listed OpenCL platforms must contain.
#[cfg(feature = "opencl")]
pub(crate) fn opencl_platform() -> Option<String> {
    var("STRATA_OPENCL_PLATFORM").map(|v| v.to_string_lossy().into_owned())
}

/// A folder of strata's under the user's cache: `$VAR` if set (`off`, `0` or empty: none),
/// else `$XDG_CACHE_HOME/strata/SUB`, else `~/.cache/strata/SUB` (`VAR` is
/// `STRATA_CUDA_CACHE` or `STRATA_TUNE_DIR`).
pub(crate) fn user_cache_dir(env: &str, sub: &str) -> Option<PathBuf> {
    match std::env::var_os(env) {
        Some(v) if v == "off" || v == "0" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("strata").join(sub)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_lists() {
        let d = Dump::parse("ir, cuda").unwrap();
        assert!(d.ir && d.cuda && !d.opencl);
        #[cfg(any(feature = "opencl", feature = "cuda"))]
        assert!(d.source("cuda") && !d.source("opencl"));
        assert_eq!(Dump::parse("").unwrap(), Dump::default());
        let e = Dump::parse("ir,ptx").unwrap_err();
        assert!(e.contains("`ptx`") && e.contains("ir, opencl, cuda"), "{e}");
        let all = Dump::parse("opencl").unwrap().union(d);
        assert!(all.ir && all.opencl && all.cuda);
    }
}
