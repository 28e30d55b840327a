//! Code generation for C-family targets: one writer, with each target's dialect as data.
//!
//! The writer turns a [`ValidFunction`] into C source for a dialect (OpenCL C now, CUDA C++
//! next). The contract with the runtimes that launch the generated kernels:
//!
//! - Kernel parameters follow the IR parameters in order. A buffer parameter becomes **two**
//!   kernel arguments: the pointer, then its element count as a `uint` named `<name>_len`. A
//!   scalar parameter is one argument of its type. A launch-sized local array
//!   ([`ParamKind::LocalLen`](crate::ir::ParamKind::LocalLen)) is one `__local` pointer argument
//!   whose size the runtime sets to `len * element size` bytes.
//! - The entry point has the IR function's name.

mod writer;

pub use writer::{cuda, opencl, write, Dialect, Generated, CUDA, OPENCL};
