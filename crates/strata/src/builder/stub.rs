//! Stub functions (Concurnas' `GPUStubFunction`): helpers whose body is target source, callable
//! from kernels like any built-in.
//!
//! ```
//! use strata::prelude::*;
//! let fma3 = Stub::<(f32, f32, f32), f32>::new("fma3")
//!     .source("opencl", "float fma3(float a, float b, float c) { return fma(a, b, c); }")
//!     .cpu(|a: f32, b: f32, c: f32| a.mul_add(b, c));
//! let k = Kernel::build("use_stub", |k| {
//!     let x = k.read_write::<f32>("x");
//!     let i = global_id(0);
//!     let v = x.at(i);
//!     x.set(i, fma3.call((v, v, lit(1.0f32))));
//! })
//! .unwrap();
//! ```
//!
//! A backend without a body for itself rejects the kernel with
//! [`Error::Unsupported`](crate::Error::Unsupported) naming the stub: the CPU backend needs [`Stub::cpu`], OpenCL a
//! `source("opencl", ...)`, CUDA a `source("cuda", ...)`.

use super::types::Numeric;
use super::{id_of, node_typed, with, Expr};
use crate::ir::{eval::Num, Expr as IrExpr, ExprId, Literal, StubCpuBody, StubDecl, Type};
use std::marker::PhantomData;
use std::sync::Arc;

/// Argument lists of stub functions: tuples of one to four numeric scalar types.
pub trait StubArgs {
    /// The tuple of device values passed at a call.
    type Exprs;
    /// The parameter types.
    fn types() -> Vec<Type>;
    /// The expression ids of a call's arguments.
    fn ids(e: Self::Exprs) -> Vec<ExprId>;
}

/// A Rust function usable as the CPU body of a stub with arguments `A` and result `R`.
pub trait CpuBody<A, R> {
    /// Wraps the function for the CPU backend.
    fn wrap(self) -> StubCpuBody;
}

macro_rules! stub_arity {
    ($($A:ident $i:tt),+) => {
        impl<$($A: Numeric),+> StubArgs for ($($A,)+) {
            type Exprs = ($(Expr<$A>,)+);
            fn types() -> Vec<Type> {
                vec![$($A::TYPE),+]
            }
            fn ids(e: Self::Exprs) -> Vec<ExprId> {
                vec![$(id_of(e.$i)),+]
            }
        }
        impl<F, R: Numeric, $($A: Numeric),+> CpuBody<($($A,)+), R> for F
        where
            F: Fn($($A),+) -> R + Send + Sync + 'static,
        {
            fn wrap(self) -> StubCpuBody {
                Arc::new(move |args: &[Literal]| self($(<$A as Num>::from_lit(args[$i])),+).to_lit())
            }
        }
    };
}
stub_arity!(A0 0);
stub_arity!(A0 0, A1 1);
stub_arity!(A0 0, A1 1, A2 2);
stub_arity!(A0 0, A1 1, A2 2, A3 3);

/// A stub function taking the scalars `A` (a tuple) and returning `R`.
pub struct Stub<A, R> {
    decl: StubDecl,
    _t: PhantomData<fn(A) -> R>,
}

impl<A: StubArgs, R: Numeric> Stub<A, R> {
    /// A stub called `name` (the function's name in its sources, a C identifier), with no body yet.
    pub fn new(name: &str) -> Self {
        Stub {
            decl: StubDecl {
                name: name.to_string(),
                params: A::types(),
                ret: R::TYPE,
                sources: Vec::new(),
                cpu: None,
            },
            _t: PhantomData,
        }
    }

    /// The body for a dialect (`opencl` or `cuda`): a complete C function definition named like
    /// the stub.
    pub fn source(mut self, dialect: &str, source: &str) -> Self {
        self.decl.sources.retain(|(d, _)| d != dialect);
        self.decl
            .sources
            .push((dialect.to_string(), source.to_string()));
        self
    }

    /// The body on the CPU backend: a Rust function of the same arguments.
    pub fn cpu(mut self, f: impl CpuBody<A, R>) -> Self {
        self.decl.cpu = Some(f.wrap());
        self
    }

    /// Calls the stub inside a kernel body.
    pub fn call(&self, args: A::Exprs) -> Expr<R> {
        let ids = A::ids(args);
        let index = with(|t| {
            let same = |s: &StubDecl| s.name == self.decl.name;
            match t.f.stubs.position(same) {
                Some(i) => {
                    let old = &t.f.stubs[i];
                    if old.sources != self.decl.sources
                        || old.params != self.decl.params
                        || old.ret != self.decl.ret
                    {
                        t.errors.push(format!(
                            "two different stub functions are named `{}` in kernel `{}`",
                            self.decl.name, t.f.name
                        ));
                    }
                    i
                }
                None => t.f.stubs.push(self.decl.clone()),
            }
        });
        node_typed(IrExpr::Stub(index, ids), R::TYPE)
    }
}
