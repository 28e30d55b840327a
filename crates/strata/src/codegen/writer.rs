//! The C-family writer: the kernel's signature and declarations, its statements and its
//! expressions, written once for every [`Dialect`].
//!
//! The writer walks the validated IR once and prints one C statement per line. It keeps the
//! IR's semantics exact on C targets:
//! - vectors are written component by component (the IR's vector operations are componentwise),
//!   so no dialect needs vector types and results match the CPU backend; local arrays of
//!   vectors are aligned to the vector's size, so that the target compiler can still merge the
//!   component accesses of one element into one vector access;
//! - signed `+ - * <<` and negation are computed in the unsigned type (C leaves signed overflow
//!   undefined); results narrower than `int` are cast back to their type; shift amounts are
//!   masked to the bit width; `MIN / -1` and `MIN % -1` go through helpers;
//! - float to integer conversions saturate and map NaN to 0; floats are printed so they read
//!   back exactly (NaN and infinities by their bits);
//! - built-in functions are called as `helpers` says (`min`, `max`, `clamp` and `mix` written
//!   out with the evaluator's formula; helpers where the target lacks a built-in or answers
//!   special cases otherwise);
//! - no contraction into fused multiply-adds, and correctly rounded division and square root
//!   (OpenCL's `FP_CONTRACT OFF` and `-cl-fp32-correctly-rounded-divide-sqrt`; NVRTC's
//!   `--fmad=false`, whose division and square root are IEEE by default);
//! - a struct that buffers hold is declared with Rust's layout: its fields at their offsets,
//!   vectors as arrays of their components (a `float2` would be aligned to 8 bytes, Rust's
//!   `[f32; 2]` is aligned to 4), `__attribute__((aligned(A)))` with Rust's alignment, and the
//!   layout checked at compile time by the dialect's static check (the size everywhere, every
//!   field's offset on OpenCL under clang, the alignment on CUDA); a field view is written
//!   `buf[i].path[c]`;
//! - collectives are lowered as `collectives` says, atomics and fences as `atomics` says.
//!
//! Expressions used once are written inline; expressions used more than once get a `const`
//! temporary where first needed (the same scoping rule as the CPU backend's lowering).

// Vector operands are written component by component: loops index several operands at once.
#![allow(clippy::needless_range_loop)]

use super::dialect::Dialect;
use super::keywords::{components, entry_name, field_ident, ident, Names};
use crate::ir::{
    self, BinaryOp, Builtin, Expr, ExprId, IdVec, Literal, LocalId, LoopId, Mem, ParamId,
    ParamKind, PrivateId, Scalar, Stmt, StructId, UnaryOp, ValidFunction, ValueId,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

/// The state of writing one kernel: its output so far, the helpers and scratch arrays it
/// needs, the temporaries in scope and the C names of the IR's parameters, arrays and structs.
pub(super) struct Writer<'a> {
    pub(super) f: &'a ir::Function,
    pub(super) d: &'static Dialect,
    /// The lines written so far (the kernel, once [`Writer::kernel`] has run).
    pub(super) out: String,
    /// The definitions of the helper functions the kernel calls, each once, in name order.
    pub(super) helpers: BTreeSet<String>,
    /// How many times each expression is used (more than once: a temporary).
    uses: IdVec<ExprId, u32>,
    /// The expressions whose temporaries are in scope.
    avail: HashSet<ExprId>,
    /// The temporaries declared in each open block, innermost last.
    scopes: Vec<Vec<ExprId>>,
    /// The temporaries in scope, by expression.
    temps: HashMap<ExprId, String>,
    /// The name of each multi-use expression's temporary (claimed before writing).
    temp_names: HashMap<ExprId, String>,
    pub(super) indent: usize,
    /// Enclosing loops, innermost last, with whether a goto label is needed for break / continue.
    loops: Vec<LoopId>,
    labels: HashSet<(LoopId, bool)>,
    /// Whether a collective uses local scratch arrays (sized by `STRATA_MAX_GROUP`).
    pub(super) uses_scratch: bool,
    /// Stub functions without a source for this dialect.
    pub(super) missing: Vec<String>,
    /// The types of the local scratch arrays the collectives use.
    pub(super) scratch_types: BTreeSet<Scalar>,
    pub(super) param_names: IdVec<ParamId, String>,
    local_names: IdVec<LocalId, String>,
    private_names: IdVec<PrivateId, String>,
    struct_names: IdVec<StructId, String>,
    value_names: IdVec<ValueId, String>,
}

fn axis(d: u8) -> char {
    ['x', 'y', 'z'][d as usize % 3]
}

impl<'a> Writer<'a> {
    pub(super) fn new(vf: &'a ValidFunction, d: &'static Dialect) -> Self {
        let f = vf.function();
        let uses = ir::expr_uses(f);
        let mut labels = HashSet::new();
        find_labels(&f.body, &mut Vec::new(), &mut labels);
        // Every name of the kernel, claimed once (see `Names`), in an order that gives a
        // kernel without clashes the names it asks for.
        let mut names = Names::default();
        let none = |_: &str| Vec::new();
        let param_names = f
            .params
            .iter()
            .map(|p| match p.kind {
                ParamKind::Buffer { .. } => {
                    names.claim(ident(&p.name), |n| vec![format!("{n}_len")])
                }
                _ => names.claim(ident(&p.name), none),
            })
            .collect();
        let local_names = f
            .locals
            .iter()
            .map(|l| names.claim(ident(&l.name), none))
            .collect();
        let private_names = f
            .privates
            .iter()
            .map(|p| names.claim(ident(&p.name), none))
            .collect();
        let struct_names = f
            .structs
            .iter()
            .map(|d| names.claim(ident(&d.name), none))
            .collect();
        let value_names = f
            .values
            .iter_enumerated()
            .map(|(v, d)| {
                let base = match &d.name {
                    Some(n) => format!("{}_{v}", ident(n)),
                    None => format!("v{v}"),
                };
                names.claim(base, components(d.ty.width))
            })
            .collect();
        let temp_names = f
            .exprs
            .iter()
            .filter(|&(id, _, _)| uses[id] > 1)
            .map(|(id, _, ty)| (id, names.claim(format!("e{id}"), components(ty.width))))
            .collect();
        Writer {
            f,
            d,
            out: String::new(),
            helpers: BTreeSet::new(),
            uses,
            avail: HashSet::new(),
            scopes: vec![Vec::new()],
            temps: HashMap::new(),
            temp_names,
            indent: 1,
            loops: Vec::new(),
            labels,
            uses_scratch: false,
            missing: Vec::new(),
            scratch_types: BTreeSet::new(),
            param_names,
            local_names,
            private_names,
            struct_names,
            value_names,
        }
    }

    /// The declarations of the structs buffers hold, in Rust's `#[repr(C)]` layout: scalar
    /// fields, vectors as arrays of their components (a `float2` would be aligned to 8 bytes,
    /// Rust's `[f32; 2]` is aligned to 4), nested structs and fixed arrays, the struct aligned
    /// as in Rust; then checks of the size and of every offset or of the alignment, as far as
    /// the dialect can spell them, that fail to compile if the C compiler laid the struct out
    /// otherwise.
    pub(super) fn structs(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.f.structs.iter_enumerated() {
            let n = &self.struct_names[i];
            let _ = writeln!(
                out,
                "typedef struct __attribute__((aligned({}))) {n} {{",
                d.align
            );
            for fd in &d.fields {
                let (t, width) = match fd.ty {
                    ir::Elem::Value(t) => (self.ty(t.scalar), t.width as u32),
                    ir::Elem::Struct(k) => (self.struct_names[k].as_str(), 1),
                };
                let count = fd.len.unwrap_or(1) * width;
                let name = field_ident(&fd.name);
                if fd.len.is_none() && width == 1 {
                    let _ = writeln!(out, "    {t} {name};");
                } else {
                    let _ = writeln!(out, "    {t} {name}[{count}];");
                }
            }
            let _ = writeln!(out, "}} {n};");
            let check = |id: String, cond: String| {
                self.d
                    .static_check
                    .replace("{id}", &id)
                    .replace("{cond}", &cond)
                    + "\n"
            };
            out.push_str(&check(
                format!("strata_layout_{n}"),
                format!("sizeof({n}) == {}", d.size),
            ));
            if let Some(offset_of) = self.d.offset_of {
                out.push_str("#ifdef __clang__\n");
                for fd in &d.fields {
                    let name = field_ident(&fd.name);
                    let off = offset_of.replace("{t}", n).replace("{f}", &name);
                    out.push_str(&check(
                        format!("strata_layout_{n}_{name}"),
                        format!("{off} == {}", fd.offset),
                    ));
                }
                out.push_str("#endif\n");
            }
            if let Some(align_of) = self.d.align_of {
                out.push_str(&check(
                    format!("strata_layout_{n}_align"),
                    format!("{} == {}", align_of.replace("{t}", n), d.align),
                ));
            }
        }
        out
    }

    pub(super) fn ty(&self, s: Scalar) -> &'static str {
        self.d.types[Scalar::ALL.iter().position(|&x| x == s).expect("scalar")]
    }

    pub(super) fn unsigned_of(s: Scalar) -> Scalar {
        match s {
            Scalar::I8 => Scalar::U8,
            Scalar::I16 => Scalar::U16,
            Scalar::I32 => Scalar::U32,
            Scalar::I64 => Scalar::U64,
            s => s,
        }
    }

    pub(super) fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    pub(super) fn value_name(&self, v: ValueId) -> String {
        self.value_names[v].clone()
    }

    pub(super) fn id(&self, b: usize, d: u8) -> String {
        format!(
            "({}){}",
            self.ty(Scalar::U32),
            self.d.ids[b]
                .replace("{d}", &d.to_string())
                .replace("{c}", &axis(d).to_string())
        )
    }

    pub(super) fn builtin(&self, b: Builtin) -> String {
        match b {
            Builtin::GlobalId(d) => self.id(0, d),
            Builtin::LocalId(d) => self.id(1, d),
            Builtin::GroupId(d) => self.id(2, d),
            Builtin::GlobalSize(d) => self.id(3, d),
            Builtin::LocalSize(d) => self.id(4, d),
            Builtin::NumGroups(d) => self.id(5, d),
            Builtin::LocalLinearId => format!(
                "({} + {} * ({} + {} * {}))",
                self.id(1, 0),
                self.id(4, 0),
                self.id(1, 1),
                self.id(4, 1),
                self.id(1, 2)
            ),
            Builtin::GroupLinearId => format!(
                "({} + {} * ({} + {} * {}))",
                self.id(2, 0),
                self.id(5, 0),
                self.id(2, 1),
                self.id(5, 1),
                self.id(2, 2)
            ),
            // The formulas of `Builtin::sub_group_value`.
            Builtin::MaxSubGroupSize => format!("{}u", self.d.sub_group_size),
            Builtin::SubGroupId
            | Builtin::SubGroupLocalId
            | Builtin::NumSubGroups
            | Builtin::SubGroupSize => {
                let (size, lid) = self.group_size_and_id();
                let sg = self.d.sub_group_size;
                match b {
                    Builtin::SubGroupId => format!("({lid} / {sg}u)"),
                    Builtin::SubGroupLocalId => format!("({lid} % {sg}u)"),
                    Builtin::NumSubGroups => format!("(({size} + {}u) / {sg}u)", sg - 1),
                    _ => format!("min({sg}u, {size} - {lid} / {sg}u * {sg}u)"),
                }
            }
        }
    }

    /// The dialect's reinterpretation of the integer expression `bits` as type `t`.
    pub(super) fn bits_as(&self, t: &str, bits: &str) -> String {
        self.d.bitcast.replace("{t}", t).replace("{x}", bits)
    }

    pub(super) fn literal(&self, l: Literal) -> String {
        let t = self.ty(l.scalar);
        match l.scalar {
            Scalar::Bool => if l.bits != 0 { "true" } else { "false" }.into(),
            Scalar::F32 => {
                let v = f32::from_bits(l.bits as u32);
                if v.is_finite() {
                    format!("{v:?}f")
                } else {
                    self.bits_as(t, &format!("0x{:08x}u", l.bits))
                }
            }
            Scalar::F64 => {
                let v = f64::from_bits(l.bits);
                if v.is_finite() {
                    format!("{v:?}")
                } else {
                    self.bits_as(t, &format!("0x{:016x}ul", l.bits))
                }
            }
            Scalar::I32 => {
                let v = l.as_i128() as i32;
                if v == i32::MIN {
                    "(-2147483647 - 1)".into()
                } else {
                    v.to_string()
                }
            }
            Scalar::I64 => {
                let v = l.as_i128() as i64;
                if v == i64::MIN {
                    "(-9223372036854775807L - 1L)".into()
                } else {
                    format!("{v}L")
                }
            }
            Scalar::U32 => format!("{}u", l.bits),
            Scalar::U64 => format!("{}ul", l.bits),
            Scalar::F16 => {
                let u = self.ty(Scalar::U16);
                self.bits_as(t, &format!("(({u})0x{:04x})", l.bits))
            }
            _ => format!("(({t}){})", l.as_i128()),
        }
    }

    /// The components of an expression: one C expression per component.
    pub(super) fn expr(&mut self, id: ExprId) -> Vec<String> {
        if let Some(t) = self.temps.get(&id) {
            let w = self.f.exprs.ty(id).width;
            return if w == 1 {
                vec![t.clone()]
            } else {
                (0..w).map(|c| format!("{t}_{c}")).collect()
            };
        }
        self.render(id)
    }

    fn render(&mut self, id: ExprId) -> Vec<String> {
        let ty = self.f.exprs.ty(id);
        let w = ty.width as usize;
        let e = self.f.exprs.get(id).clone();
        match e {
            Expr::Literal(l) => vec![self.literal(l)],
            Expr::Param(p) => {
                let n = self.param_names[p].clone();
                vec![if ty.scalar == Scalar::Bool {
                    format!("({n} != 0)")
                } else {
                    n
                }]
            }
            Expr::BufferLen(p) => vec![format!("{}_len", self.param_names[p])],
            Expr::Value(v) => {
                let n = self.value_name(v);
                if w == 1 {
                    vec![n]
                } else {
                    (0..w).map(|c| format!("{n}_{c}")).collect()
                }
            }
            Expr::Builtin(b) => vec![self.builtin(b)],
            Expr::Unary(op, a) => {
                let a = self.expr(a);
                a.iter().map(|x| self.unary(op, ty.scalar, x)).collect()
            }
            Expr::Binary(op, a, b) => {
                let s = self.f.exprs.ty(a).scalar;
                let (a, b) = (self.expr(a), self.expr(b));
                (0..w).map(|c| self.binary(op, s, &a[c], &b[c])).collect()
            }
            Expr::Select(c, a, b) => {
                let (cv, a, b) = (self.expr(c), self.expr(a), self.expr(b));
                // `?:` promotes types narrower than `int` to `int`; cast back so that overloaded
                // built-ins taking the result (`min`, `mul_hi`, ...) see the IR's type.
                let narrow = ty.scalar.is_int() && ty.scalar.size() < 4;
                let t = self.ty(ty.scalar);
                (0..w)
                    .map(|k| {
                        let sel = format!("{} ? {} : {}", cv[k % cv.len()], a[k], b[k]);
                        if narrow {
                            format!("(({t})({sel}))")
                        } else {
                            format!("({sel})")
                        }
                    })
                    .collect()
            }
            Expr::Cast(a, to) => {
                let from = self.f.exprs.ty(a).scalar;
                let a = self.expr(a);
                a.iter().map(|x| self.cast(from, to, x)).collect()
            }
            Expr::Bitcast(a, to) => {
                let t = self.ty(to.scalar);
                let a = self.expr(a);
                a.iter()
                    .map(|x| self.d.bitcast.replace("{t}", t).replace("{x}", x))
                    .collect()
            }
            Expr::Math(m, args) => {
                let at = self.f.exprs.ty(args[0]);
                let vals: Vec<Vec<String>> = args.iter().map(|&a| self.expr(a)).collect();
                self.math(m, at, &vals)
            }
            Expr::Splat(a, n) => {
                let a = self.expr(a);
                vec![a[0].clone(); n as usize]
            }
            Expr::Compose(parts) => parts.iter().map(|&p| self.expr(p)[0].clone()).collect(),
            Expr::Extract(a, i) => {
                let a = self.expr(a);
                vec![a[i as usize].clone()]
            }
            Expr::Stub(n, args) => {
                let stub = &self.f.stubs[n];
                match stub.source(self.d.key) {
                    Some(src) => {
                        self.helpers.insert(format!("{}\n", src.trim()));
                    }
                    None => self.missing.push(format!(
                        "stub function `{}` has no {} source; give it one with `Stub::source(\"{}\", ...)`",
                        stub.name, self.d.name, self.d.key
                    )),
                }
                let name = stub.name.clone();
                let a: Vec<String> = args.iter().map(|&x| self.expr(x)[0].clone()).collect();
                vec![format!("{name}({})", a.join(", "))]
            }
        }
    }

    fn unary(&mut self, op: UnaryOp, s: Scalar, x: &str) -> String {
        let t = self.ty(s);
        match (op, s) {
            (UnaryOp::Not, Scalar::Bool) => format!("(!{x})"),
            (UnaryOp::Not, _) => format!("(({t})~{x})"),
            (UnaryOp::Neg, _) if s.is_float() => format!("(-{x})"),
            (UnaryOp::Neg, _) => {
                let u = self.ty(Self::unsigned_of(s));
                format!("(({t})(({u})0 - ({u}){x}))")
            }
        }
    }

    fn binary(&mut self, op: BinaryOp, s: Scalar, a: &str, b: &str) -> String {
        use BinaryOp::*;
        let t = self.ty(s);
        if op.is_comparison() || s == Scalar::Bool {
            let sym = match (op, s) {
                (And, Scalar::Bool) => "&&",
                (Or, Scalar::Bool) => "||",
                (Xor, Scalar::Bool) => "!=",
                _ => op.symbol(),
            };
            return format!("({a} {sym} {b})");
        }
        if s.is_float() {
            return match op {
                Rem => format!("fmod({a}, {b})"),
                _ => format!("({a} {} {b})", op.symbol()),
            };
        }
        let bits = s.bits();
        let narrow = s.size() < 4;
        // The unsigned type the operation is computed in: C promotes narrow types to `int`, where
        // `ushort * ushort` and left shifts of negative values are undefined.
        let wide_u = if narrow {
            self.ty(Scalar::U32)
        } else {
            self.ty(Self::unsigned_of(s))
        };
        match op {
            Add | Sub | Mul if s.is_signed() && !narrow => {
                format!("(({t})(({wide_u}){a} {} ({wide_u}){b}))", op.symbol())
            }
            Mul if narrow => format!("(({t})(({wide_u}){a} * ({wide_u}){b}))"),
            Shl => format!("(({t})(({wide_u}){a} << ({b} & {})))", bits - 1),
            Shr => format!("(({t})({a} >> ({b} & {})))", bits - 1),
            Div | Rem if s.is_signed() && !narrow => {
                let name = self.div_rem(s, op == Div);
                format!("{name}({a}, {b})")
            }
            _ if narrow => format!("(({t})({a} {} {b}))", op.symbol()),
            _ => format!("({a} {} {b})", op.symbol()),
        }
    }

    fn cast(&mut self, from: Scalar, to: Scalar, x: &str) -> String {
        let t = self.ty(to);
        if from == to {
            return x.to_string();
        }
        if from == Scalar::F16 || to == Scalar::F16 {
            let k = match (from, to) {
                (Scalar::F16, Scalar::F32) => 0,
                (Scalar::F32, Scalar::F16) => 1,
                (Scalar::F16, Scalar::F64) => 2,
                (Scalar::F64, Scalar::F16) => 3,
                // Through f32, as `lower_f16` writes them (exact; see there).
                (Scalar::F16, _) => {
                    let w = self.cast(from, Scalar::F32, x);
                    return self.cast(Scalar::F32, to, &w);
                }
                _ => {
                    let w = self.cast(from, Scalar::F32, x);
                    return self.cast(Scalar::F32, to, &w);
                }
            };
            return self.d.f16_casts[k].replace("{x}", x);
        }
        if to == Scalar::Bool {
            return format!("({x} != 0)");
        }
        if from.is_float() && to.is_int() {
            if !self.d.convert_sat_nan_guard {
                return self.d.convert_sat.replace("{t}", t).replace("{x}", x);
            }
            let name = self.convert_sat_guarded(from, to);
            return format!("{name}({x})");
        }
        format!("(({t}){x})")
    }

    /// Emits temporaries for the multi-use expressions `id` needs, operands first.
    fn need(&mut self, id: ExprId) {
        if self.avail.contains(&id) || self.temps.contains_key(&id) {
            return;
        }
        let e = self.f.exprs.get(id).clone();
        if matches!(
            e,
            Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) | Expr::Value(_)
        ) {
            return;
        }
        for o in ir::expr_operands(&e) {
            self.need(o);
        }
        if self.uses[id] > 1 {
            let ty = self.f.exprs.ty(id);
            let name = self.temp_names[&id].clone();
            let comps = self.render(id);
            let t = self.ty(ty.scalar);
            for (c, x) in comps.iter().enumerate() {
                let n = if ty.width == 1 {
                    name.clone()
                } else {
                    format!("{name}_{c}")
                };
                self.line(&format!("const {t} {n} = {x};"));
            }
            self.temps.insert(id, name);
            self.avail.insert(id);
            self.scopes.last_mut().expect("scope").push(id);
        }
    }

    fn operands(&mut self, s: &Stmt) {
        for o in ir::stmt_operands(s) {
            self.need(o);
        }
    }

    fn block(&mut self, b: &ir::Block) {
        self.scopes.push(Vec::new());
        self.indent += 1;
        for s in b {
            self.stmt(s);
        }
        self.indent -= 1;
        for id in self.scopes.pop().expect("scope") {
            self.avail.remove(&id);
            self.temps.remove(&id);
        }
    }

    pub(super) fn mem_ref(&mut self, mem: Mem, index: ExprId, c: usize) -> String {
        let w = self.f.mem_elem(mem).expect("validated").width as usize;
        let i = self.expr(index)[0].clone();
        let (name, scalar_var) = match mem {
            Mem::Field(v) => {
                let v = &self.f.fields[v];
                let base = &self.param_names[v.buffer];
                let suffix = self.f.path_suffix_named(v, field_ident);
                return match w {
                    1 => format!("{base}[{i}]{suffix}"),
                    _ => format!("{base}[{i}]{suffix}[{c}]"),
                };
            }
            Mem::Buffer(p) => (self.param_names[p].clone(), false),
            Mem::Local(l) => (self.local_names[l].clone(), false),
            Mem::Private(p) => (
                self.private_names[p].clone(),
                self.f.privates[p].len.is_none(),
            ),
        };
        match (scalar_var, w) {
            (true, 1) => name,
            (true, _) => format!("{name}[{c}]"),
            (false, 1) => format!("{name}[{i}]"),
            (false, _) => format!("{name}[({i}) * {w} + {c}]"),
        }
    }

    pub(super) fn decl(&mut self, v: ValueId, comps: &[String]) {
        let ty = self.f.values[v].ty;
        let t = self.ty(ty.scalar);
        let n = self.value_name(v);
        if ty.width == 1 {
            self.line(&format!("const {t} {n} = {};", comps[0]));
        } else {
            for (c, x) in comps.iter().enumerate() {
                self.line(&format!("const {t} {n}_{c} = {x};"));
            }
        }
    }

    fn jump(&mut self, id: LoopId, brk: bool) {
        if self.loops.last() == Some(&id) {
            self.line(if brk { "break;" } else { "continue;" });
        } else {
            self.line(&format!(
                "goto L{}_{};",
                id,
                if brk { "break" } else { "continue" }
            ));
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        self.operands(s);
        match s {
            Stmt::Let { value, expr } => {
                let c = self.expr(*expr);
                self.decl(*value, &c);
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                let w = self.f.values[*value].ty.width as usize;
                let comps: Vec<String> = (0..w).map(|c| self.mem_ref(*mem, *index, c)).collect();
                self.decl(*value, &comps);
            }
            Stmt::Store {
                mem, index, value, ..
            } => {
                let v = self.expr(*value);
                for (c, x) in v.iter().enumerate() {
                    let r = self.mem_ref(*mem, *index, c);
                    self.line(&format!("{r} = {x};"));
                }
            }
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                ..
            } => {
                let read = self.atomic_load(*mem, *index);
                self.decl(*value, &[read]);
                self.order_fence(*order, false);
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
                let call = self.atomic(*mem, *index, *op, *operand, *compare);
                self.order_fence(*order, true);
                match result {
                    Some(r) => self.decl(*r, &[call]),
                    None => self.line(&format!("(void){call};")),
                }
                self.order_fence(*order, false);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(*cond)[0].clone();
                self.line(&format!("if ({}) {{", strip_parens(&c)));
                self.block(then);
                if !otherwise.is_empty() {
                    self.line("} else {");
                    self.block(otherwise);
                }
                self.line("}");
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let s = self.f.values[*var].ty.scalar;
                let t = self.ty(s);
                let n = self.value_name(*var);
                let (a, e, st) = (
                    self.expr(*start)[0].clone(),
                    self.expr(*end)[0].clone(),
                    self.expr(*step)[0].clone(),
                );
                let cond = match self.f.exprs.literal(*step) {
                    Some(l) if l.as_i128() > 0 => format!("{n} < {e}"),
                    Some(_) => format!("{n} > {e}"),
                    // An unsigned step cannot be negative (a zero step is an error in the IR).
                    None if !s.is_signed() => format!("{n} < {e}"),
                    None => format!("({st} > 0 ? {n} < {e} : {n} > {e})"),
                };
                let u = self.ty(Self::unsigned_of(s));
                let inc = if self
                    .f
                    .exprs
                    .literal(*step)
                    .is_some_and(|l| l.as_i128() == 1)
                {
                    format!("{n}++")
                } else if s.is_signed() || s.size() < 4 {
                    format!("{n} = ({t})(({u}){n} + ({u}){st})")
                } else {
                    format!("{n} += {st}")
                };
                self.line(&format!("for ({t} {n} = {a}; {cond}; {inc}) {{"));
                self.loop_body(*id, body);
                self.line("}");
                if self.labels.contains(&(*id, true)) {
                    self.line(&format!("L{}_break:;", id));
                }
            }
            Stmt::Loop { id, body } => {
                self.line("for (;;) {");
                self.loop_body(*id, body);
                self.line("}");
                if self.labels.contains(&(*id, true)) {
                    self.line(&format!("L{}_break:;", id));
                }
            }
            Stmt::Break(id) => self.jump(*id, true),
            Stmt::Continue(id) => self.jump(*id, false),
            Stmt::Return => self.line("return;"),
            Stmt::Barrier(f) => {
                let b = self.d.barriers[Self::fence_index(*f)];
                self.line(&format!("{b};"));
            }
            Stmt::MemFence { spaces, order } => {
                let b = self.fence(*spaces, order.scope);
                self.line(&format!("{b};"));
            }
            Stmt::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => self.collective(*value, *op, *scope, *arg, *source),
        }
    }

    fn loop_body(&mut self, id: LoopId, body: &ir::Block) {
        self.loops.push(id);
        if self.labels.contains(&(id, false)) {
            // The body in its own block, so that `goto` to the label skips no declaration in
            // the label's scope (C++ forbids that).
            self.indent += 1;
            self.line("{");
            self.block(body);
            self.line("}");
            self.line(&format!("L{}_continue:;", id));
            self.indent -= 1;
        } else {
            self.block(body);
        }
        self.loops.pop();
    }

    pub(super) fn kernel(&mut self) {
        let f = self.f;
        let mut params = Vec::new();
        let mut dynamic = Vec::new();
        for (i, p) in f.params.iter_enumerated() {
            let n = self.param_names[i].clone();
            match p.kind {
                ParamKind::Buffer { elem, access, .. } => {
                    let t = match elem {
                        ir::Elem::Value(t) => self.ty(t.scalar),
                        ir::Elem::Struct(k) => self.struct_names[k].as_str(),
                    };
                    let c = if access.is_read_only() { "const " } else { "" };
                    let space = match self.d.global {
                        "" => String::new(),
                        q => format!("{q} "),
                    };
                    if access == ir::Access::Constant {
                        params.push(self.d.constant_buffer.replace("{t}", t).replace("{n}", &n));
                    } else {
                        params.push(format!("{space}{c}{t}* {n}"));
                    }
                    params.push(format!("const {} {n}_len", self.ty(Scalar::U32)));
                }
                ParamKind::Scalar(t) => {
                    let t = if t.scalar == Scalar::Bool {
                        self.ty(Scalar::U8)
                    } else {
                        self.ty(t.scalar)
                    };
                    params.push(format!("const {t} {n}"));
                }
                ParamKind::LocalLen => {
                    let (li, l) = f
                        .locals
                        .iter_enumerated()
                        .find(|(_, l)| l.len == ir::ArrayLen::Param(i))
                        .expect("validated");
                    let t = self.ty(l.elem.scalar);
                    let n = &self.local_names[li];
                    match self.d.dynamic_local {
                        None => params.push(format!("{} {t}* {n}", self.d.local_ptr)),
                        Some(_) => {
                            let u = self.ty(Scalar::U32);
                            params.push(format!("const {u} strata_offset_{n}"));
                            dynamic.push(format!(
                                "{t}* const {n} = ({t}*)(strata_dyn_local + strata_offset_{n});"
                            ));
                        }
                    }
                }
            }
        }
        // The body first (it decides which helpers and scratch arrays are needed).
        let mut body = std::mem::take(&mut self.out);
        if let (Some(decl), false) = (self.d.dynamic_local, dynamic.is_empty()) {
            self.line(decl);
            for line in &dynamic {
                self.line(line);
            }
        }
        for (i, l) in f.locals.iter_enumerated() {
            if let ir::ArrayLen::Fixed(n) = l.len {
                let t = self.ty(l.elem.scalar);
                // An array of 2- or 4-vectors is aligned to the vector's size, so that the
                // compiler may merge the component accesses of one element into one vector
                // access (`ld.shared.v4`); both dialects take the GNU attribute.
                let w = l.elem.width as usize;
                let align = if w > 1 {
                    format!(" __attribute__((aligned({})))", w * l.elem.scalar.size())
                } else {
                    String::new()
                };
                let line = format!(
                    "{} {t} {}[{}]{align};",
                    self.d.local,
                    self.local_names[i],
                    n as usize * w
                );
                self.line(&line);
            }
        }
        for (i, p) in f.privates.iter_enumerated() {
            let t = self.ty(p.elem.scalar);
            let n = self.private_names[i].clone();
            let count = p.count() as usize * p.elem.width as usize;
            match p.len {
                None if p.elem.width == 1 => self.line(&format!("{t} {n} = 0;")),
                _ => self.line(&format!("{t} {n}[{count}] = {{0}};")),
            }
        }
        let decls = std::mem::take(&mut self.out);
        for s in &f.body {
            self.stmt(s);
        }
        let stmts = std::mem::take(&mut self.out);
        let mut scratch = String::new();
        for s in &self.scratch_types {
            let t = self.ty(*s);
            let _ = writeln!(
                scratch,
                "    {} {t} strata_scratch_{t}[STRATA_MAX_GROUP + 1];",
                self.d.local
            );
        }
        let _ = writeln!(body, "{} {}(", self.d.kernel_prefix, entry_name(&f.name));
        for (i, p) in params.iter().enumerate() {
            let _ = writeln!(
                body,
                "    {p}{}",
                if i + 1 < params.len() { "," } else { "" }
            );
        }
        body.push_str(") {\n");
        body.push_str(&scratch);
        body.push_str(&decls);
        body.push_str(&stmts);
        body.push_str("}\n");
        self.out = body;
    }
}

/// Finds the loops that need goto labels: a `break` or `continue` aimed past an inner loop.
fn find_labels(b: &ir::Block, loops: &mut Vec<LoopId>, out: &mut HashSet<(LoopId, bool)>) {
    for s in b {
        match s {
            Stmt::Break(id) | Stmt::Continue(id) if loops.last() != Some(id) => {
                out.insert((*id, matches!(s, Stmt::Break(_))));
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                find_labels(then, loops, out);
                find_labels(otherwise, loops, out);
            }
            Stmt::For { id, body, .. } | Stmt::Loop { id, body } => {
                loops.push(*id);
                find_labels(body, loops, out);
                loops.pop();
            }
            _ => {}
        }
    }
}

/// `(x)` without its outer parentheses, for `if (...)`.
fn strip_parens(s: &str) -> &str {
    let b = s.as_bytes();
    if b.first() == Some(&b'(') && b.last() == Some(&b')') {
        let mut depth = 0;
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 && i != b.len() - 1 {
                        return s;
                    }
                }
                _ => {}
            }
        }
        return &s[1..s.len() - 1];
    }
    s
}
