//! `interp`: the lockstep interpreter, the reference semantics of strata and its debug backend.
//!
//! A validated kernel is lowered ([`lower`]) to a [`Program`]: every expression and every value
//! gets a register (a [`Column`] holding one value per work-item of the
//! group), and every statement carries the operations that compute the expressions it needs.
//! The program is then run ([`run`]) one work-group at a time, all its work-items in lockstep
//! under an execution mask. In checked mode the run also keeps shadow memory ([`shadow`]) to
//! report data races and reads of memory nobody wrote. What the interpreter shares with the
//! compiled backend (collectives, atomics) is in [`super::semantics`].
//!
//! This file holds the program's shape, which the three parts have in common.

mod lower;
mod run;
mod shadow;

use crate::ir::eval::Column;
use crate::ir::{
    self, AtomicOp, BinaryOp, Builtin, GroupOp, GroupScope, Literal, LoopId, MathFn, Mem, Scalar,
    SourceLoc, Type, UnaryOp,
};

/// A register: the index of a column of the worker's registers (expressions first, then values).
type Reg = ir::Id<Column>;

/// An operation that computes one expression for every work-item of the group.
#[derive(Clone, Debug)]
enum Op {
    Lit {
        dst: Reg,
        lit: Literal,
    },
    Param {
        dst: Reg,
        p: ir::ParamId,
    },
    BufLen {
        dst: Reg,
        p: ir::ParamId,
    },
    Builtin {
        dst: Reg,
        b: Builtin,
    },
    Unary {
        dst: Reg,
        op: UnaryOp,
        a: Reg,
        s: Scalar,
        w: usize,
    },
    Binary {
        dst: Reg,
        op: BinaryOp,
        a: Reg,
        b: Reg,
        s: Scalar,
        w: usize,
    },
    Select {
        dst: Reg,
        c: Reg,
        a: Reg,
        b: Reg,
        s: Scalar,
        w: usize,
        cw: usize,
    },
    Cast {
        dst: Reg,
        a: Reg,
        from: Scalar,
        to: Scalar,
        w: usize,
    },
    Bitcast {
        dst: Reg,
        a: Reg,
        bytes: usize,
    },
    Math {
        dst: Reg,
        f: MathFn,
        args: Vec<Reg>,
        s: Scalar,
        w: usize,
    },
    Splat {
        dst: Reg,
        a: Reg,
        size: usize,
        w: usize,
    },
    Compose {
        dst: Reg,
        parts: Vec<Reg>,
        size: usize,
    },
    Extract {
        dst: Reg,
        a: Reg,
        i: usize,
        size: usize,
    },
    Stub {
        dst: Reg,
        name: String,
        body: StubFn,
        args: Vec<(Reg, Scalar)>,
        ret: Scalar,
    },
}

/// A stub's CPU body, printable for debugging.
#[derive(Clone)]
struct StubFn(ir::StubCpuBody);

impl std::fmt::Debug for StubFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<cpu body>")
    }
}

/// The memory a load, store or atomic accesses, as the interpreter addresses it.
#[derive(Clone, Copy, Debug)]
struct MemRef {
    /// The memory addressed: a field view's buffer for a field.
    mem: Mem,
    /// The memory the kernel named (a field view), for messages.
    shown: Mem,
    elem: Type,
    /// Components (of the element's scalar) from one element to the next: the width, or a
    /// struct's size for a field of a buffer of structs.
    stride: usize,
    /// Components from the start of an element to the field.
    offset: usize,
    /// The user's line of the access, for messages.
    at: SourceLoc,
}

/// A statement of the lowered program, with the operations that compute its operands first
/// (`ops`).
#[derive(Clone, Debug)]
enum CStmt {
    Let {
        ops: Vec<Op>,
        value: Reg,
        src: Reg,
        bytes: usize,
    },
    Load {
        ops: Vec<Op>,
        value: Reg,
        m: MemRef,
        index: Reg,
        is: Scalar,
        /// An acquiring atomic load: a fence follows the read.
        acquire: bool,
        /// An atomic load (not part of data races).
        atomic: bool,
    },
    Store {
        ops: Vec<Op>,
        m: MemRef,
        index: Reg,
        is: Scalar,
        value: Reg,
    },
    Atomic {
        ops: Vec<Op>,
        result: Option<Reg>,
        m: MemRef,
        index: Reg,
        is: Scalar,
        op: AtomicOp,
        operand: Reg,
        compare: Option<Reg>,
    },
    If {
        ops: Vec<Op>,
        cond: Reg,
        then: Vec<CStmt>,
        els: Vec<CStmt>,
        exits: bool,
    },
    For {
        ops: Vec<Op>,
        id: LoopId,
        var: Reg,
        start: Reg,
        end: Reg,
        step: Reg,
        s: Scalar,
        body: Vec<CStmt>,
        exits: bool,
    },
    Loop {
        id: LoopId,
        body: Vec<CStmt>,
        exits: bool,
    },
    Break(LoopId),
    Continue(LoopId),
    Return,
    Barrier,
    Fence,
    Group {
        ops: Vec<Op>,
        value: Reg,
        op: GroupOp,
        scope: GroupScope,
        arg: Reg,
        source: Option<Reg>,
        ty: Type,
    },
}

impl CStmt {
    /// Whether running the statement may remove work-items from the enclosing block's mask.
    fn exits(&self) -> bool {
        match self {
            CStmt::Break(_) | CStmt::Continue(_) | CStmt::Return => true,
            CStmt::If { exits, .. } | CStmt::For { exits, .. } | CStmt::Loop { exits, .. } => {
                *exits
            }
            _ => false,
        }
    }
}

/// A kernel lowered for the CPU backend.
pub(crate) struct Program {
    decls: crate::cpu::Decls,
    once: Vec<Op>,
    per_group: Vec<Op>,
    body: Vec<CStmt>,
    n_regs: usize,
    /// Which privates are scalar variables (not arrays): their index is always 0.
    private_is_var: ir::IdVec<ir::PrivateId, bool>,
    /// Checked mode ([`ir::Function::is_checked`]): keep shadow memory, report data races and
    /// uninitialized reads.
    checked: bool,
    /// Checked mode: report races between work-groups (not when the kernel orders work-groups
    /// itself with fences or ordered atomics, which the shadow memory does not follow).
    cross_group: bool,
}
