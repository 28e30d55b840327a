//! Code generation for C-family targets: one writer, with each target's dialect as data.
//!
//! The writer turns a [`ValidFunction`](crate::ir::ValidFunction) into C source for a dialect
//! (OpenCL C or CUDA C++). The contract with the runtimes that launch the generated kernels:
//!
//! - Kernel parameters follow the IR parameters in order. A buffer parameter becomes **two**
//!   kernel arguments: the pointer, then its element count as a `uint` named `<name>_len`. A
//!   scalar parameter is one argument of its type. A launch-sized local array
//!   ([`ParamKind::LocalLen`](crate::ir::ParamKind::LocalLen)) is one argument: in OpenCL a
//!   `__local` pointer whose size the runtime sets to `len * element size` bytes, in CUDA a
//!   `uint` byte offset into the launch's dynamic shared memory, whose size the runtime sets to
//!   the sum of the arrays' sizes (each at a 16-byte aligned offset).
//! - The entry point has the IR function's name.

mod writer;

pub use writer::{cuda, opencl, write, Collectives, Dialect, Generated, CUDA, OPENCL};

/// The source of `f` in `dialect` for the device `label`, as a backend compiles it: a missing
/// stub source names the device, and `STRATA_DUMP=<dialect key>` prints the source.
#[cfg(any(feature = "opencl", feature = "cuda"))]
pub(crate) fn for_device(
    f: &crate::ir::ValidFunction,
    dialect: &'static Dialect,
    label: &str,
) -> crate::Result<Generated> {
    let generated = write(f, dialect).map_err(|e| match e {
        crate::Error::Unsupported { kernel, reason, .. } => crate::Error::Unsupported {
            kernel,
            device: label.to_string(),
            reason,
        },
        e => e,
    })?;
    if std::env::var("STRATA_DUMP").is_ok_and(|v| v.split(',').any(|p| p == dialect.key)) {
        eprintln!("// {} for {label}\n{}", generated.entry, generated.source);
    }
    Ok(generated)
}
