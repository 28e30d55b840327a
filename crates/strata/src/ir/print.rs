//! The readable text form of the IR, used by tests, error messages and `STRATA_DUMP=ir`.
//!
//! ```text
//! kernel saxpy(a: f32, x: global read [f32], y: global read_write [f32]) {
//!   let i: u32 = global_id(0)
//!   if (i < len(x)) {
//!     load x_i: f32 = x[i]
//!     ...
//! ```

use super::*;
use std::fmt::Write;

/// The name under which a value is printed: its user name with its number, or `%vN`.
pub fn value_name(f: &Function, v: ValueId) -> String {
    match f.values.get(v.0 as usize).and_then(|d| d.name.as_deref()) {
        Some(n) => format!("{n}_{}", v.0),
        None => format!("%v{}", v.0),
    }
}

/// An expression, printed inline.
pub fn expr_to_string(f: &Function, id: ExprId) -> String {
    let mut s = String::new();
    write_expr(f, id, &mut s);
    s
}

fn write_expr(f: &Function, id: ExprId, out: &mut String) {
    if id.0 as usize >= f.exprs.len() {
        let _ = write!(out, "<missing %{}>", id.0);
        return;
    }
    let list = |args: &[ExprId], out: &mut String| {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_expr(f, *a, out);
        }
    };
    match f.exprs.get(id) {
        Expr::Literal(l) => {
            let _ = write!(out, "{l}");
        }
        Expr::Param(p) => out.push_str(f.params.get(*p as usize).map_or("<param?>", |p| &p.name)),
        Expr::BufferLen(p) => {
            let _ = write!(
                out,
                "len({})",
                f.params.get(*p as usize).map_or("<param?>", |p| &p.name)
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
            write_expr(f, *a, out);
        }
        Expr::Binary(op, a, b) => {
            out.push('(');
            write_expr(f, *a, out);
            let _ = write!(out, " {} ", op.symbol());
            write_expr(f, *b, out);
            out.push(')');
        }
        Expr::Select(c, a, b) => {
            out.push_str("select(");
            list(&[*c, *a, *b], out);
            out.push(')');
        }
        Expr::Cast(a, s) => {
            let _ = write!(out, "cast<{s}>(");
            write_expr(f, *a, out);
            out.push(')');
        }
        Expr::Bitcast(a, t) => {
            let _ = write!(out, "bitcast<{t}>(");
            write_expr(f, *a, out);
            out.push(')');
        }
        Expr::Math(m, args) => {
            let _ = write!(out, "{}(", m.name());
            list(args, out);
            out.push(')');
        }
        Expr::Splat(a, w) => {
            let _ = write!(out, "splat{w}(");
            write_expr(f, *a, out);
            out.push(')');
        }
        Expr::Stub(n, args) => {
            let _ = write!(
                out,
                "{}(",
                f.stubs.get(*n as usize).map_or("<stub?>", |s| &s.name)
            );
            list(args, out);
            out.push(')');
        }
        Expr::Compose(parts) => {
            let _ = write!(out, "{}(", f.exprs.ty(id));
            list(parts, out);
            out.push(')');
        }
        Expr::Extract(a, i) => {
            write_expr(f, *a, out);
            let _ = write!(out, ".{}", ["x", "y", "z", "w"][*i as usize % 4]);
        }
    }
}

fn mem_ref(f: &Function, mem: Mem, index: ExprId) -> String {
    let name = f.mem_name(mem);
    match mem {
        Mem::Private(p) if f.privates.get(p as usize).is_some_and(|d| d.len.is_none()) => name,
        _ => format!("{name}[{}]", expr_to_string(f, index)),
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

fn write_block(f: &Function, block: &Block, depth: usize, out: &mut String) {
    for s in block {
        write_stmt(f, s, depth, out);
    }
}

fn write_stmt(f: &Function, s: &Stmt, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let ty = |v: ValueId| {
        f.values
            .get(v.0 as usize)
            .map_or("?".into(), |d| d.ty.to_string())
    };
    match s {
        Stmt::Let { value, expr } => {
            let _ = writeln!(
                out,
                "{pad}let {}: {} = {}",
                value_name(f, *value),
                ty(*value),
                expr_to_string(f, *expr)
            );
        }
        Stmt::Load { value, mem, index } => {
            let _ = writeln!(
                out,
                "{pad}load {}: {} = {}",
                value_name(f, *value),
                ty(*value),
                mem_ref(f, *mem, *index)
            );
        }
        Stmt::AtomicLoad { value, mem, index } => {
            let _ = writeln!(
                out,
                "{pad}{}: {} = atomic_load(&{})",
                value_name(f, *value),
                ty(*value),
                mem_ref(f, *mem, *index)
            );
        }
        Stmt::Store { mem, index, value } => {
            let _ = writeln!(
                out,
                "{pad}store {} = {}",
                mem_ref(f, *mem, *index),
                expr_to_string(f, *value)
            );
        }
        Stmt::Atomic {
            result,
            mem,
            index,
            op,
            operand,
            compare,
        } => {
            let _ = write!(out, "{pad}");
            if let Some(r) = result {
                let _ = write!(out, "{}: {} = ", value_name(f, *r), ty(*r));
            }
            let _ = write!(out, "{}(&{}", op.name(), mem_ref(f, *mem, *index));
            if let Some(c) = compare {
                let _ = write!(out, ", {}", expr_to_string(f, *c));
            }
            let _ = writeln!(out, ", {})", expr_to_string(f, *operand));
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            let _ = writeln!(out, "{pad}if {} {{", expr_to_string(f, *cond));
            write_block(f, then, depth + 1, out);
            if !otherwise.is_empty() {
                let _ = writeln!(out, "{pad}}} else {{");
                write_block(f, otherwise, depth + 1, out);
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
                id.0,
                value_name(f, *var),
                ty(*var),
                expr_to_string(f, *start),
                expr_to_string(f, *end),
                expr_to_string(f, *step)
            );
            write_block(f, body, depth + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Loop { id, body } => {
            let _ = writeln!(out, "{pad}loop'{} {{", id.0);
            write_block(f, body, depth + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Break(id) => {
            let _ = writeln!(out, "{pad}break'{}", id.0);
        }
        Stmt::Continue(id) => {
            let _ = writeln!(out, "{pad}continue'{}", id.0);
        }
        Stmt::Return => {
            let _ = writeln!(out, "{pad}return");
        }
        Stmt::Barrier(fe) => {
            let _ = writeln!(out, "{pad}barrier({})", fence_name(*fe));
        }
        Stmt::MemFence(fe) => {
            let _ = writeln!(out, "{pad}mem_fence({})", fence_name(*fe));
        }
        Stmt::Group {
            value,
            op,
            arg,
            source,
        } => {
            let _ = write!(
                out,
                "{pad}{}: {} = {}({}",
                value_name(f, *value),
                ty(*value),
                op.name(),
                expr_to_string(f, *arg)
            );
            if let Some(src) = source {
                let _ = write!(out, ", {}", expr_to_string(f, *src));
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
                let _ = write!(out, "{}: global {} [{elem}", p.name, access.name());
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
            ArrayLen::Param(p) => f
                .params
                .get(p as usize)
                .map_or("?".into(), |p| p.name.clone()),
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
    write_block(f, &f.body, 1, &mut out);
    out.push_str("}\n");
    out
}
