//! Work-group and sub-group collectives (reductions, scans, any/all, broadcasts, shuffles,
//! ballots), lowered as the dialect's [`Collectives`] says: a fold in local-id order in local
//! memory (OpenCL; float sums bit-identical to the CPU backend) or warp shuffles (CUDA; the
//! operand is first combined with the identity, as the evaluator's fold does, so a NaN
//! operand of min/max vanishes the same way). Both are exact for integers, booleans and float
//! `min`/`max`; a float sum by shuffles associates as the shuffle tree does, which the IR
//! allows (see [`GroupOp`]); a work-group broadcast goes through a local array.
//!
//! The local scratch arrays of [`Collectives::LocalSerial`] are sized by the macro
//! `STRATA_MAX_GROUP`, which the backends define at compile time as the device's largest
//! work-group size (1024 when undefined).

use super::dialect::{Collectives, Warp};
use super::writer::Writer;
use crate::ir::{Builtin, ExprId, GroupOp, GroupScope, Literal, Scalar, Type, ValueId};
use std::fmt::Write;

/// The combination of a collective.
#[derive(Clone, Copy)]
enum Comb {
    Add,
    Min,
    Max,
    Or,
    And,
}

impl Writer<'_> {
    /// The collective `op` of `scope` on `arg` (with `source`, for those that take one), into
    /// `value`.
    pub(super) fn collective(
        &mut self,
        value: ValueId,
        op: GroupOp,
        scope: GroupScope,
        arg: ExprId,
        source: Option<ExprId>,
    ) {
        let ty = self.f.exprs.ty(arg);
        match (scope, self.d.collectives) {
            (GroupScope::WorkGroup, _) if op == GroupOp::Broadcast => {
                self.group_broadcast(value, ty, arg, source.expect("validated"))
            }
            (GroupScope::WorkGroup, Collectives::LocalSerial) => {
                self.group_serial(value, op, ty.scalar, arg)
            }
            (GroupScope::WorkGroup, Collectives::WarpShuffle(w)) => {
                self.group_warp(w, value, op, ty.scalar, arg)
            }
            (GroupScope::SubGroup, Collectives::LocalSerial) => {
                self.sub_group_local(value, op, arg, source)
            }
            (GroupScope::SubGroup, Collectives::WarpShuffle(w)) => {
                self.sub_group_warp(w, value, op, arg, source)
            }
        }
    }

    /// The combination of a collective on scratch type `s` and its identity.
    fn group_comb(&self, op: GroupOp, s: Scalar) -> (Comb, String) {
        match op {
            GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => (
                Comb::Add,
                if s.is_float() {
                    self.literal(Literal::from_bits(s, 0))
                } else {
                    format!("({})0", self.ty(s))
                },
            ),
            GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => {
                (Comb::Min, self.extreme(s, true))
            }
            GroupOp::ReduceMax | GroupOp::ScanInclusiveMax | GroupOp::ScanExclusiveMax => {
                (Comb::Max, self.extreme(s, false))
            }
            GroupOp::Any => (Comb::Or, format!("({})0", self.ty(s))),
            // All, and the operations that fold nothing.
            _ => (Comb::And, format!("({})1", self.ty(s))),
        }
    }

    /// `a` combined with `b` (`a` from the lower local ids) in type `s`, as the evaluator
    /// computes it (integer sums wrap).
    fn comb(&self, c: Comb, s: Scalar, a: &str, b: &str) -> String {
        let t = self.ty(s);
        match c {
            Comb::Add if s.is_float() => format!("({a} + {b})"),
            Comb::Add if s.is_signed() && s.size() >= 4 => {
                let u = self.ty(Self::unsigned_of(s));
                format!("({t})(({u}){a} + ({u}){b})")
            }
            Comb::Add => format!("({t})({a} + {b})"),
            Comb::Min if s.is_float() => format!("fmin({a}, {b})"),
            Comb::Max if s.is_float() => format!("fmax({a}, {b})"),
            Comb::Min => format!("({t})min({a}, {b})"),
            Comb::Max => format!("({t})max({a}, {b})"),
            Comb::Or => format!("({t})({a} | {b})"),
            Comb::And => format!("({t})({a} & {b})"),
        }
    }

    /// The work-group size and the local linear id, as `u32` expressions.
    pub(super) fn group_size_and_id(&self) -> (String, String) {
        let size = format!(
            "({} * {} * {})",
            self.id(4, 0),
            self.id(4, 1),
            self.id(4, 2)
        );
        (size, self.builtin(Builtin::LocalLinearId))
    }

    /// Broadcast through a local array indexed by local linear id (any type, any width).
    fn group_broadcast(&mut self, value: ValueId, ty: Type, arg: ExprId, source: ExprId) {
        self.uses_scratch = true;
        let s = if ty.scalar == Scalar::Bool {
            Scalar::U8
        } else {
            ty.scalar
        };
        self.scratch_types.insert(s);
        let t = self.ty(s);
        let vt = self.ty(ty.scalar);
        let u = self.ty(Scalar::U32);
        let scratch = format!("strata_scratch_{t}");
        let (_, lid) = self.group_size_and_id();
        let bl = self.d.barriers[0];
        let a = self.expr(arg);
        let src = self.expr(source)[0].clone();
        let n = self.value_name(value);
        for (c, x) in a.iter().enumerate() {
            let r = if ty.width == 1 {
                n.clone()
            } else {
                format!("{n}_{c}")
            };
            self.line(&format!("{vt} {r};"));
            self.line("{");
            self.indent += 1;
            self.line(&format!("const {t} strata_x = ({t}){x};"));
            self.line(&format!("const {u} strata_src = {src};"));
            self.line(&format!("{scratch}[{lid}] = strata_x;"));
            self.line(&format!("{bl};"));
            let read = format!("{scratch}[strata_src]");
            let read = if ty.scalar == Scalar::Bool {
                format!("({read} != 0)")
            } else {
                read
            };
            self.line(&format!("{r} = {read};"));
            self.line(&format!("{bl};"));
            self.indent -= 1;
            self.line("}");
        }
    }

    /// [`Collectives::LocalSerial`]: the work-items' values in a local scratch array, folded in
    /// local-id order by the first work-item (see there).
    fn group_serial(&mut self, value: ValueId, op: GroupOp, vs: Scalar, arg: ExprId) {
        self.uses_scratch = true;
        let s = if vs == Scalar::Bool { Scalar::U8 } else { vs };
        self.scratch_types.insert(s);
        let (t, vt, u) = (self.ty(s), self.ty(vs), self.ty(Scalar::U32));
        let sc = format!("strata_scratch_{t}");
        let (size, lid) = self.group_size_and_id();
        let bl = self.d.barriers[0];
        let (c, id) = self.group_comb(op, s);
        let x = self.expr(arg)[0].clone();
        let r = self.value_name(value);
        self.line(&format!("{vt} {r};"));
        self.line("{");
        self.indent += 1;
        let x = if vs == Scalar::Bool {
            format!("({t})({x} ? 1 : 0)")
        } else {
            x
        };
        self.line(&format!("const {u} strata_lid = {lid};"));
        self.line(&format!("{sc}[strata_lid] = {x};"));
        self.line(&format!("{bl};"));
        self.line("if (strata_lid == 0u) {");
        self.indent += 1;
        self.line(&format!("{t} strata_acc = {id};"));
        self.line(&format!("const {u} strata_n = {size};"));
        self.line(&format!(
            "for ({u} strata_k = 0u; strata_k < strata_n; strata_k++) {{"
        ));
        self.indent += 1;
        self.line(&format!("const {t} strata_v = {sc}[strata_k];"));
        let acc = self.comb(c, s, "strata_acc", "strata_v");
        let scan = op.is_fold() && !op.is_reduce();
        if op.is_exclusive() {
            self.line(&format!("{sc}[strata_k] = strata_acc;"));
        }
        self.line(&format!("strata_acc = {acc};"));
        if scan && !op.is_exclusive() {
            self.line(&format!("{sc}[strata_k] = strata_acc;"));
        }
        self.indent -= 1;
        self.line("}");
        self.line(&format!("{sc}[STRATA_MAX_GROUP] = strata_acc;"));
        self.indent -= 1;
        self.line("}");
        self.line(&format!("{bl};"));
        let read = if scan {
            format!("{sc}[strata_lid]")
        } else {
            format!("{sc}[STRATA_MAX_GROUP]")
        };
        let read = if vs == Scalar::Bool {
            format!("({read} != 0)")
        } else {
            read
        };
        self.line(&format!("{r} = {read};"));
        self.line(&format!("{bl};"));
        self.indent -= 1;
        self.line("}");
    }

    /// [`Collectives::WarpShuffle`]: a call of a helper per operation and type (see there).
    fn group_warp(&mut self, w: &Warp, value: ValueId, op: GroupOp, vs: Scalar, arg: ExprId) {
        let x = self.expr(arg)[0].clone();
        let call = match op {
            GroupOp::Any => format!("({}({x} ? 1 : 0) != 0)", w.group_any),
            GroupOp::All => format!("({}({x} ? 1 : 0) != 0)", w.group_all),
            _ => {
                let name = self.warp_helper(w, op, vs);
                format!("{name}({x})")
            }
        };
        self.decl(value, &[call]);
    }

    /// Defines (once) the warp helper for a reduction or scan over type `s` and returns its
    /// name. Within a warp of `live` lanes (the last warp of a work-group may be partial; the
    /// shuffles' mask names exactly the lanes present) values move by shuffles; each warp's
    /// total goes to `strata_part[warp]`; after a barrier, every warp combines the totals it
    /// needs (all of them, or those of the warps before it) with shuffles again, and a second
    /// barrier frees `strata_part` for the next call.
    fn warp_helper(&mut self, w: &Warp, op: GroupOp, s: Scalar) -> String {
        let (t, u) = (self.ty(s), self.ty(Scalar::U32));
        let name = format!("strata_{}_{t}", op.name(GroupScope::WorkGroup));
        let st = self.shuffled_type(w, s);
        let (local, barrier) = (self.d.local, self.d.barriers[0]);
        let (c, id) = self.group_comb(op, s);
        let comb = |a: &str, b: &str| self.comb(c, s, a, b);
        let warp_reduce = |v: &str| self.warp_tree(w, c, s, v);
        let mut b = format!(
            "{t} {name}({t} x) {{\n    {local} {t} strata_part[32];\n{prologue}    const {u} warp = lid >> 5;\n    x = {norm};\n",
            prologue = w.prologue,
            norm = comb(&id, "x"),
        );
        let scan = !op.is_reduce();
        if scan {
            b.push_str(&self.warp_scan_steps(w, c, s));
            let _ = write!(
                b,
                "    if (lane == live - 1u) strata_part[warp] = x;\n    {barrier};\n    {t} p = {id};\n    for ({u} j = lane; j < warp; j += live) p = {};\n",
                comb("p", "strata_part[j]"),
            );
            b.push_str(&warp_reduce("p"));
            let _ = writeln!(b, "    p = ({t}){}(mask, ({st})p, 0);", w.shuffle);
            if op.is_exclusive() {
                let _ = write!(
                    b,
                    "    const {t} e = ({t}){}(mask, ({st})x, 1);\n    {barrier};\n    return lane == 0u ? p : {};\n}}\n",
                    w.shuffle_up,
                    comb("p", "e")
                );
            } else {
                let _ = write!(b, "    {barrier};\n    return {};\n}}\n", comb("p", "x"));
            }
        } else {
            b.push_str(&warp_reduce("x"));
            let _ = write!(
                b,
                "    if (lane == 0u) strata_part[warp] = x;\n    {barrier};\n    {t} r = {id};\n    for ({u} j = lane; j < (n + 31u) >> 5; j += live) r = {};\n",
                comb("r", "strata_part[j]"),
            );
            b.push_str(&warp_reduce("r"));
            let _ = write!(
                b,
                "    r = ({t}){}(mask, ({st})r, 0);\n    {barrier};\n    return r;\n}}\n",
                w.shuffle
            );
        }
        self.define(b);
        name
    }

    /// The tree of shuffles down that combines the warp's values of `v` into lane 0 (lanes
    /// past `live` take no part).
    fn warp_tree(&self, w: &Warp, c: Comb, s: Scalar, v: &str) -> String {
        let (t, u, st) = (self.ty(s), self.ty(Scalar::U32), self.shuffled_type(w, s));
        format!(
            "    #pragma unroll\n    for ({u} d = 16u; d > 0u; d >>= 1) {{\n        const {t} y = ({t}){}(mask, ({st}){v}, d);\n        if (lane + d < live) {v} = {};\n    }}\n",
            w.shuffle_down,
            self.comb(c, s, v, "y")
        )
    }

    /// The steps of shuffles up that turn `x` into the warp's inclusive scan.
    fn warp_scan_steps(&self, w: &Warp, c: Comb, s: Scalar) -> String {
        let (t, u, st) = (self.ty(s), self.ty(Scalar::U32), self.shuffled_type(w, s));
        format!(
            "    #pragma unroll\n    for ({u} d = 1u; d < 32u; d <<= 1) {{\n        const {t} y = ({t}){}(mask, ({st})x, d);\n        if (lane >= d) x = {};\n    }}\n",
            w.shuffle_up,
            self.comb(c, s, "y", "x")
        )
    }

    /// The type a value of `s` is shuffled as (see [`Warp::shuffle_types`]).
    fn shuffled_type(&self, w: &Warp, s: Scalar) -> &'static str {
        match (s.size(), s.is_float(), s.is_signed()) {
            (8, false, true) => w.shuffle_types[0],
            (8, false, false) => w.shuffle_types[1],
            (_, true, _) | (4, _, _) => self.ty(s),
            (_, _, true) => w.shuffle_types[2],
            _ => w.shuffle_types[3],
        }
    }

    /// A lane's source for a shuffle-like `op` with second operand `strata_s`, as C: whether
    /// the source is a lane of the sub-group (of `len` lanes; this work-item is `lane`), and
    /// which lane. The conditions avoid unsigned wrap-around.
    fn shuffle_source(op: GroupOp, lane: &str, len: &str) -> (String, String) {
        match op {
            GroupOp::ShuffleXor => (
                format!("(({lane} ^ strata_s) < {len})"),
                format!("({lane} ^ strata_s)"),
            ),
            GroupOp::ShuffleUp => (
                format!("(strata_s <= {lane})"),
                format!("({lane} - strata_s)"),
            ),
            GroupOp::ShuffleDown => (
                format!("(strata_s < {len} - {lane})"),
                format!("({lane} + strata_s)"),
            ),
            // Shuffle, and broadcast (whose source outside the sub-group is unspecified).
            _ => (format!("(strata_s < {len})"), "strata_s".into()),
        }
    }

    /// A sub-group collective through local memory ([`Collectives::LocalSerial`]): each
    /// component goes to the scratch array at the local linear id; after a barrier, every
    /// work-item computes its result from its sub-group's entries, folding in lane order (so
    /// float sums equal the CPU backend's bit for bit); a second barrier frees the scratch.
    fn sub_group_local(
        &mut self,
        value: ValueId,
        op: GroupOp,
        arg: ExprId,
        source: Option<ExprId>,
    ) {
        self.uses_scratch = true;
        let ty = self.f.exprs.ty(arg);
        let vs = ty.scalar;
        let s = if vs == Scalar::Bool { Scalar::U8 } else { vs };
        self.scratch_types.insert(s);
        let (t, u) = (self.ty(s), self.ty(Scalar::U32));
        let rt = op.result_type(ty);
        let sc = format!("strata_scratch_{t}");
        let (size, lid) = self.group_size_and_id();
        let sg = self.d.sub_group_size;
        let bl = self.d.barriers[0];
        let a = self.expr(arg);
        let src = source.map(|x| self.expr(x)[0].clone());
        let r = self.value_name(value);
        let names: Vec<String> = if rt.width == 1 {
            vec![r]
        } else {
            (0..rt.width).map(|c| format!("{r}_{c}")).collect()
        };
        for n in &names {
            self.line(&format!("{} {n};", self.ty(rt.scalar)));
        }
        self.line("{");
        self.indent += 1;
        self.line(&format!("const {u} strata_lid = {lid};"));
        self.line(&format!(
            "const {u} strata_base = strata_lid / {sg}u * {sg}u;"
        ));
        self.line(&format!(
            "const {u} strata_lane = strata_lid - strata_base;"
        ));
        self.line(&format!(
            "const {u} strata_len = min({sg}u, {size} - strata_base);"
        ));
        if let Some(src) = src {
            let (ok, from) = Self::shuffle_source(op, "strata_lane", "strata_len");
            self.line(&format!("const {u} strata_s = {src};"));
            self.line(&format!(
                "const {u} strata_from = {ok} ? strata_base + {from} : strata_lid;"
            ));
        }
        let as_bool = |x: String| {
            if vs == Scalar::Bool {
                format!("({x} != 0)")
            } else {
                x
            }
        };
        for (c, x) in a.iter().enumerate() {
            let x = if vs == Scalar::Bool {
                format!("({t})({x} ? 1 : 0)")
            } else {
                x.clone()
            };
            self.line(&format!("{sc}[strata_lid] = {x};"));
            self.line(&format!("{bl};"));
            if op.takes_source() {
                let read = as_bool(format!("{sc}[strata_from]"));
                self.line(&format!("{} = {read};", names[c]));
            } else if op == GroupOp::Ballot {
                self.line(&format!("{u} strata_m = 0u;"));
                self.line(&format!(
                    "for ({u} strata_k = 0u; strata_k < strata_len; strata_k++) strata_m |= ({u})({sc}[strata_base + strata_k] != 0) << strata_k;"
                ));
                self.line(&format!("{} = strata_m;", names[0]));
            } else {
                let (cb, id) = self.group_comb(op, s);
                let end = if op.is_reduce() || !op.is_fold() {
                    "strata_len"
                } else if op.is_exclusive() {
                    "strata_lane"
                } else {
                    "strata_lane + 1u"
                };
                self.line(&format!("{t} strata_acc = {id};"));
                let acc = self.comb(
                    cb,
                    s,
                    "strata_acc",
                    &format!("{sc}[strata_base + strata_k]"),
                );
                self.line(&format!(
                    "for ({u} strata_k = 0u; strata_k < {end}; strata_k++) strata_acc = {acc};"
                ));
                self.line(&format!("{} = {};", names[0], as_bool("strata_acc".into())));
            }
            self.line(&format!("{bl};"));
        }
        self.indent -= 1;
        self.line("}");
    }

    /// A sub-group collective by warp intrinsics ([`Collectives::WarpShuffle`]): a call of a
    /// helper per operation and type (per component for vectors). The shuffles' and ballot's
    /// mask names exactly the warp's lanes present (the last warp of a work-group may be
    /// partial); reductions combine shuffles down in a tree and take lane 0's result, scans
    /// step by shuffles up.
    fn sub_group_warp(
        &mut self,
        w: &Warp,
        value: ValueId,
        op: GroupOp,
        arg: ExprId,
        source: Option<ExprId>,
    ) {
        let ty = self.f.exprs.ty(arg);
        let s = ty.scalar;
        let (t, u) = (self.ty(s), self.ty(Scalar::U32));
        let st = self.shuffled_type(w, s);
        let name = format!("strata_{}_{t}", op.name(GroupScope::SubGroup));
        let rt = self.ty(op.result_type(ty).scalar);
        let param = if op.takes_source() {
            format!(", {u} strata_s")
        } else {
            String::new()
        };
        let mut b = format!("{rt} {name}({t} x{param}) {{\n{}", w.prologue);
        match op {
            GroupOp::Ballot => {
                let _ = writeln!(b, "    return {}(mask, x);", w.ballot);
            }
            GroupOp::Any => {
                let _ = writeln!(b, "    return {}(mask, x) != 0;", w.any);
            }
            GroupOp::All => {
                let _ = writeln!(b, "    return {}(mask, x) != 0;", w.all);
            }
            _ if op.takes_source() => {
                let (ok, from) = Self::shuffle_source(op, "lane", "live");
                let _ = writeln!(
                    b,
                    "    return ({t}){}(mask, ({st})x, {ok} ? {from} : lane);",
                    w.shuffle
                );
            }
            _ => {
                let (c, id) = self.group_comb(op, s);
                let comb = |a: &str, b: &str| self.comb(c, s, a, b);
                let _ = writeln!(b, "    x = {};", comb(&id, "x"));
                if op.is_reduce() {
                    b.push_str(&self.warp_tree(w, c, s, "x"));
                    let _ = writeln!(b, "    return ({t}){}(mask, ({st})x, 0);", w.shuffle);
                } else {
                    b.push_str(&self.warp_scan_steps(w, c, s));
                    if op.is_exclusive() {
                        let _ = write!(
                            b,
                            "    const {t} e = ({t}){}(mask, ({st})x, 1);\n    return lane == 0u ? {id} : e;\n",
                            w.shuffle_up
                        );
                    } else {
                        b.push_str("    return x;\n");
                    }
                }
            }
        }
        b.push_str("}\n");
        self.define(b);
        let a = self.expr(arg);
        let src = source.map(|x| format!(", {}", self.expr(x)[0]));
        let calls: Vec<String> = a
            .iter()
            .map(|x| format!("{name}({x}{})", src.as_deref().unwrap_or("")))
            .collect();
        self.decl(value, &calls);
    }

    /// The least (`max`: the greatest) value of type `s`, the identity of `max` (`min`).
    fn extreme(&self, s: Scalar, max: bool) -> String {
        let l = match (s, max) {
            (Scalar::F32, true) => Literal::from_bits(s, f32::INFINITY.to_bits() as u64),
            (Scalar::F32, false) => Literal::from_bits(s, f32::NEG_INFINITY.to_bits() as u64),
            (Scalar::F64, true) => Literal::from_bits(s, f64::INFINITY.to_bits()),
            (Scalar::F64, false) => Literal::from_bits(s, f64::NEG_INFINITY.to_bits()),
            _ => {
                use crate::ir::eval::{with_int, Num};
                let bits = with_int!(s, T => if max { T::greatest().to_lit().bits } else { T::least().to_lit().bits }, _ => 0);
                Literal::from_bits(s, bits)
            }
        };
        self.literal(l)
    }
}
