//! The readable text form of the IR, used by tests, error messages and the `ir` dump
//! ([`Dump::ir`](crate::settings::Dump::ir) in a device's [`Settings`](crate::Settings)). It is
//! printed only when asked for; kernels are identified by
//! [`Function::fingerprint`](super::Function::fingerprint), never by their text.
//!
//! ```text
//! kernel saxpy(a: f32, x: global read [f32], y: global read_write [f32]) {
//!   let i: u32 = global_id(0)
//!   if (i < len(x)) {
//!     load x_i: f32 = x[i]
//!     ...
//! ```
//!
//! Large sub-expressions used more than once are written once, after the body:
//!
//! ```text
//!   store out[global_id(0)] = (select(($e42 > 6u32), ...) + ($e42 & 1u32))
//!   where
//!     $e42 = (select(...) + ...)
//! ```
//!
//! Sub-expressions are written inline, except those larger than 32 nodes and used more than
//! once, so the text stays linear in the function's size: inline, a chain of `select`s that
//! each use the previous one twice would double with every link. Source locations are left
//! out, so a kernel and its `#[kernel]` twin print the same text.

use super::*;
use std::fmt::Write;

/// The name under which a value is printed: its user name with its number, or `%vN`.
pub fn value_name(f: &Function, v: ValueId) -> String {
    match f.values.get(v).and_then(|d| d.name.as_deref()) {
        Some(n) => format!("{n}_{}", v),
        None => format!("%v{}", v),
    }
}

/// Largest inline size (in expression nodes) of a sub-expression that is written out at each
/// of its uses; a larger one used more than once is written once, as `$eN = ...` after the
/// body (or after the expression), and referred to as `$eN`.
const INLINE_MAX: u64 = 32;

/// What a printing of `f` needs besides `f`: which expressions are written once under a name.
/// Deciding in arena order (operands come before their users) keeps the text linear in the
/// function's size; written inline, a chain of expressions that each use the previous one
/// twice would double with every link.
struct Printer<'a> {
    f: &'a Function,
    bound: IdVec<ExprId, bool>,
}

impl<'a> Printer<'a> {
    fn new(f: &'a Function) -> Printer<'a> {
        let n = f.exprs.len();
        let uses = expr_uses(f);
        let mut size: IdVec<ExprId, u64> = vec![1u64; n].into();
        let mut bound: IdVec<ExprId, bool> = vec![false; n].into();
        for (id, e, _) in f.exprs.iter() {
            let mut s = 1u64;
            for a in expr_operands(e) {
                // A well-formed arena refers only to earlier expressions.
                if a < id && !bound[a] {
                    s = s.saturating_add(size[a]);
                } else {
                    s = s.saturating_add(1);
                }
            }
            size[id] = s;
            bound[id] = s > INLINE_MAX && uses[id] > 1;
        }
        Printer { f, bound }
    }

    fn is_bound(&self, id: ExprId) -> bool {
        self.bound.get(id).copied().unwrap_or(false)
    }

    fn string(&self, id: ExprId) -> String {
        let mut s = String::new();
        write_expr(self, id, &mut s);
        s
    }

    /// The named expressions among `roots` and what they use, in arena order.
    fn bound_under(&self, roots: &[ExprId]) -> Vec<ExprId> {
        let mut seen: IdVec<ExprId, bool> = vec![false; self.f.exprs.len()].into();
        let mut stack: Vec<ExprId> = roots.to_vec();
        let mut found = Vec::new();
        while let Some(id) = stack.pop() {
            match seen.get_mut(id) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            if self.bound[id] {
                found.push(id);
            }
            stack.extend(
                expr_operands(self.f.exprs.get(id))
                    .into_iter()
                    .filter(|&a| a < id),
            );
        }
        found.sort();
        found
    }

    /// `$eN = ...` for each named expression in `ids`.
    fn definitions(&self, ids: &[ExprId]) -> Vec<String> {
        ids.iter()
            .map(|&id| {
                let mut s = format!("$e{} = ", id);
                write_inline(self, id, &mut s);
                s
            })
            .collect()
    }
}

/// An expression, printed inline; sub-expressions that are large and used more than once are
/// written once after it (`... where $e7 = ...`).
pub fn expr_to_string(f: &Function, id: ExprId) -> String {
    let p = Printer::new(f);
    let mut s = p.string(id);
    let defs = p.definitions(&p.bound_under(&[id]));
    if !defs.is_empty() {
        let _ = write!(s, " where {}", defs.join(", "));
    }
    s
}

fn write_expr(p: &Printer, id: ExprId, out: &mut String) {
    if p.is_bound(id) {
        let _ = write!(out, "$e{}", id);
    } else {
        write_inline(p, id, out);
    }
}

fn write_inline(p: &Printer, id: ExprId, out: &mut String) {
    let f = p.f;
    if id.index() >= f.exprs.len() {
        let _ = write!(out, "<missing %{}>", id);
        return;
    }
    // An operand at or after its user (only in malformed IR) is named, not followed: a cycle
    // would never end.
    let write_expr = |p: &Printer, a: ExprId, out: &mut String| {
        if a >= id {
            let _ = write!(out, "%{}", a);
        } else {
            write_expr(p, a, out);
        }
    };
    let list = |args: &[ExprId], out: &mut String| {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_expr(p, *a, out);
        }
    };
    match f.exprs.get(id) {
        Expr::Literal(l) => {
            let _ = write!(out, "{l}");
        }
        Expr::Param(p) => out.push_str(f.params.get(*p).map_or("<param?>", |p| &p.name)),
        Expr::BufferLen(p) => {
            let _ = write!(
                out,
                "len({})",
                f.params.get(*p).map_or("<param?>", |p| &p.name)
            );
        }
        Expr::Value(v) => out.push_str(&value_name(f, *v)),
        Expr::Builtin(b) => match b.dim() {
            Some(d) => {
                let _ = write!(out, "{}({d})", b.name());
            }
            None => {
                let _ = write!(out, "{}()", b.name());
            }
        },
        Expr::Unary(op, a) => {
            out.push_str(match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
            });
            write_expr(p, *a, out);
        }
        Expr::Binary(op, a, b) => {
            out.push('(');
            write_expr(p, *a, out);
            let _ = write!(out, " {} ", op.symbol());
            write_expr(p, *b, out);
            out.push(')');
        }
        Expr::Select(c, a, b) => {
            out.push_str("select(");
            list(&[*c, *a, *b], out);
            out.push(')');
        }
        Expr::Cast(a, s) => {
            let _ = write!(out, "cast<{s}>(");
            write_expr(p, *a, out);
            out.push(')');
        }
        Expr::Bitcast(a, t) => {
            let _ = write!(out, "bitcast<{t}>(");
            write_expr(p, *a, out);
            out.push(')');
        }
        Expr::Math(m, args) => {
            let _ = write!(out, "{}(", m.name());
            list(args, out);
            out.push(')');
        }
        Expr::Splat(a, w) => {
            let _ = write!(out, "splat{w}(");
            write_expr(p, *a, out);
            out.push(')');
        }
        Expr::Stub(n, args) => {
            let _ = write!(out, "{}(", f.stubs.get(*n).map_or("<stub?>", |s| &s.name));
            list(args, out);
            out.push(')');
        }
        Expr::Compose(parts) => {
            let _ = write!(out, "{}(", f.exprs.ty(id));
            list(parts, out);
            out.push(')');
        }
        Expr::Extract(a, i) => {
            write_expr(p, *a, out);
            let _ = write!(out, ".{}", ["x", "y", "z", "w"][*i as usize % 4]);
        }
    }
}

fn mem_ref(p: &Printer, mem: Mem, index: ExprId) -> String {
    let f = p.f;
    let name = f.mem_name(mem);
    match mem {
        Mem::Private(p) if f.privates.get(p).is_some_and(|d| d.len.is_none()) => name,
        Mem::Field(v) => match f.fields.get(v) {
            Some(d) => format!(
                "{}[{}]{}",
                f.mem_name(Mem::Buffer(d.buffer)),
                p.string(index),
                f.path_suffix(d)
            ),
            None => format!("{name}[{}]", p.string(index)),
        },
        _ => format!("{name}[{}]", p.string(index)),
    }
}

/// `, order, scope` after an atomic's operands, when it is not relaxed at device scope.
fn order_suffix(order: AtomicOrder) -> String {
    if order == AtomicOrder::RELAXED {
        String::new()
    } else {
        format!(", {order}")
    }
}

fn fence_name(fe: Fence) -> &'static str {
    match (fe.local, fe.global) {
        (true, true) => "local+global",
        (true, false) => "local",
        (false, true) => "global",
        (false, false) => "none",
    }
}

fn write_block(p: &Printer, block: &Block, depth: usize, out: &mut String) {
    for s in block {
        write_stmt(p, s, depth, out);
    }
}

fn write_stmt(p: &Printer, s: &Stmt, depth: usize, out: &mut String) {
    let f = p.f;
    let pad = "  ".repeat(depth);
    let ty = |v: ValueId| f.values.get(v).map_or("?".into(), |d| d.ty.to_string());
    match s {
        Stmt::Let { value, expr } => {
            let _ = writeln!(
                out,
                "{pad}let {}: {} = {}",
                value_name(f, *value),
                ty(*value),
                p.string(*expr)
            );
        }
        Stmt::Load {
            value, mem, index, ..
        } => {
            let _ = writeln!(
                out,
                "{pad}load {}: {} = {}",
                value_name(f, *value),
                ty(*value),
                mem_ref(p, *mem, *index)
            );
        }
        Stmt::AtomicLoad {
            value,
            mem,
            index,
            order,
            ..
        } => {
            let _ = writeln!(
                out,
                "{pad}{}: {} = atomic_load(&{}{})",
                value_name(f, *value),
                ty(*value),
                mem_ref(p, *mem, *index),
                order_suffix(*order)
            );
        }
        Stmt::Store {
            mem, index, value, ..
        } => {
            let _ = writeln!(
                out,
                "{pad}store {} = {}",
                mem_ref(p, *mem, *index),
                p.string(*value)
            );
        }
        Stmt::Atomic {
            result,
            mem,
            index,
            op,
            operand,
            compare,
            order,
            ..
        } => {
            let _ = write!(out, "{pad}");
            if let Some(r) = result {
                let _ = write!(out, "{}: {} = ", value_name(f, *r), ty(*r));
            }
            let _ = write!(out, "{}(&{}", op.name(), mem_ref(p, *mem, *index));
            if let Some(c) = compare {
                let _ = write!(out, ", {}", p.string(*c));
            }
            let _ = writeln!(out, ", {}{})", p.string(*operand), order_suffix(*order));
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            let _ = writeln!(out, "{pad}if {} {{", p.string(*cond));
            write_block(p, then, depth + 1, out);
            if !otherwise.is_empty() {
                let _ = writeln!(out, "{pad}}} else {{");
                write_block(p, otherwise, depth + 1, out);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        } => {
            let _ = writeln!(
                out,
                "{pad}for'{} {}: {} in {}..{} step {} {{",
                id,
                value_name(f, *var),
                ty(*var),
                p.string(*start),
                p.string(*end),
                p.string(*step)
            );
            write_block(p, body, depth + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Loop { id, body } => {
            let _ = writeln!(out, "{pad}loop'{} {{", id);
            write_block(p, body, depth + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Break(id) => {
            let _ = writeln!(out, "{pad}break'{}", id);
        }
        Stmt::Continue(id) => {
            let _ = writeln!(out, "{pad}continue'{}", id);
        }
        Stmt::Return => {
            let _ = writeln!(out, "{pad}return");
        }
        Stmt::Barrier(fe) => {
            let _ = writeln!(out, "{pad}barrier({})", fence_name(*fe));
        }
        Stmt::MemFence { spaces, order } => {
            let _ = writeln!(out, "{pad}mem_fence({}, {order})", fence_name(*spaces));
        }
        Stmt::Group {
            value,
            op,
            scope,
            arg,
            source,
        } => {
            let _ = write!(
                out,
                "{pad}{}: {} = {}({}",
                value_name(f, *value),
                ty(*value),
                op.name(*scope),
                p.string(*arg)
            );
            if let Some(src) = source {
                let _ = write!(out, ", {}", p.string(*src));
            }
            let _ = writeln!(out, ")");
        }
    }
}

/// The whole function in text form.
pub fn function_to_string(f: &Function) -> String {
    let mut out = String::new();
    let _ = write!(out, "kernel {}(", f.name);
    for (i, p) in f.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match p.kind {
            ParamKind::Buffer { elem, access, len } => {
                let _ = write!(
                    out,
                    "{}: global {} [{}",
                    p.name,
                    access.name(),
                    f.elem_name(elem)
                );
                if let Some(n) = len {
                    let _ = write!(out, "; {n}");
                }
                out.push(']');
            }
            ParamKind::Scalar(t) => {
                let _ = write!(out, "{}: {t}", p.name);
            }
            ParamKind::LocalLen => {
                let _ = write!(out, "{}: local_len", p.name);
            }
        }
    }
    out.push_str(") {\n");
    for d in &f.structs {
        let fields: Vec<String> = d
            .fields
            .iter()
            .map(|x| {
                let ty = f.elem_name(x.ty);
                match x.len {
                    Some(n) => format!("{}: [{ty}; {n}] @{}", x.name, x.offset),
                    None => format!("{}: {ty} @{}", x.name, x.offset),
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "  struct {} {{ {} }} size {} align {}",
            d.name,
            fields.join(", "),
            d.size,
            d.align
        );
    }
    for s in &f.stubs {
        let params: Vec<String> = s.params.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(
            out,
            "  stub {}({}) -> {}{}",
            s.name,
            params.join(", "),
            s.ret,
            if s.cpu.is_some() { " [cpu]" } else { "" }
        );
        for (d, src) in &s.sources {
            let _ = writeln!(out, "    {d}: {}", src.trim().replace('\n', "\n      "));
        }
    }
    for l in &f.locals {
        let len = match l.len {
            ArrayLen::Fixed(n) => n.to_string(),
            ArrayLen::Param(p) => f.params.get(p).map_or("?".into(), |p| p.name.clone()),
        };
        let _ = writeln!(out, "  local {}: [{}; {len}]", l.name, l.elem);
    }
    for p in &f.privates {
        match p.len {
            Some(n) => {
                let _ = writeln!(out, "  private {}: [{}; {n}]", p.name, p.elem);
            }
            None => {
                let _ = writeln!(out, "  private {}: {}", p.name, p.elem);
            }
        }
    }
    let p = Printer::new(f);
    write_block(&p, &f.body, 1, &mut out);
    let named: Vec<ExprId> = f
        .exprs
        .iter()
        .map(|(id, _, _)| id)
        .filter(|&id| p.is_bound(id))
        .collect();
    let defs = p.definitions(&named);
    if !defs.is_empty() {
        out.push_str("  where\n");
        for d in defs {
            let _ = writeln!(out, "    {d}");
        }
    }
    out.push_str("}\n");
    out
}
