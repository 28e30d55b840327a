//! The walk over a validated kernel that produces its SPIR-V: declarations (buffers, push
//! constants, built-ins, local and private memory), then the statements as structured
//! control flow and the expressions as instructions.
//!
//! - Every IR value lives in a `Function` variable (stored by its statement, loaded where an
//!   expression reads it; the driver's compiler promotes them to registers). Expressions are
//!   computed where used and reused within one basic block (the cache is cleared at every
//!   label, so every use is dominated by its definition).
//! - `If` is a selection construct, `For` and `Loop` are loop constructs with a continue block;
//!   `Break`/`Continue` of the innermost loop branch to its merge/continue block, of an outer
//!   loop through a `jump` variable checked after each inner loop.
//! - The IR's semantics where SPIR-V differs: shift amounts masked, `MIN / -1`, float to
//!   integer casts saturating with NaN to 0, `NoContraction` on every float operation, float
//!   `min`/`max` as `NMin`/`NMax` (IEEE minNum), `round` half away from zero.
//! - Work-group collectives are the C writer's serial fold in workgroup scratch; sub-group
//!   ones are `OpGroupNonUniform*` (shuffles guard their lane as the evaluator does).

use super::module::{inst, Module, Ty};
use super::op;
use super::{ArgLayout, ArgSlot, SpirvModule, SpirvTarget};
use crate::ir::{
    self, AtomicOp, BinaryOp, Builtin, Elem, Expr, ExprId, FieldStep, GroupOp, GroupScope,
    HiddenRole, Literal, LoopId, Mem, MemOrder, MemScope, ParamId, ParamKind, Scalar, Stmt, Type,
    UnaryOp, ValidFunction, ValueId,
};
use crate::ir::{ArrayLen, MathFn};
use std::collections::HashMap;

mod exact;
mod llvmpipe;
mod math;
mod math64;
mod math_special;

type R<T> = std::result::Result<T, String>;

struct LoopFrame {
    id: LoopId,
    merge: u32,
    cont: u32,
    /// Whether a jump to an outer loop leaves through this loop's merge.
    jumpy: bool,
}

struct Lower<'a> {
    f: &'a ir::Function,
    t: &'a SpirvTarget,
    m: Module,
    cache: HashMap<ExprId, u32>,
    value_vars: HashMap<ValueId, u32>,
    /// Buffer variables by parameter.
    buffers: HashMap<ParamId, u32>,
    pc_var: u32,
    /// Push-constant member index and IR scalar of each scalar parameter / buffer length.
    pc_scalar: HashMap<ParamId, (u32, Scalar)>,
    pc_len: HashMap<ParamId, u32>,
    pc_member_types: Vec<u32>,
    /// The push-constant member of the number of work-groups in x (y, z follow).
    pc_groups: u32,
    /// The storage class of the argument block: push constants, or a storage buffer.
    pc_sc: u32,
    local_vars: Vec<u32>,
    private_vars: Vec<u32>,
    builtins: HashMap<u32, u32>,
    interface: Vec<u32>,
    wg_size: [u32; 3],
    wg_composite: u32,
    loops: Vec<LoopFrame>,
    jump_var: Option<u32>,
    terminated: bool,
    scratch: HashMap<Scalar, u32>,
    scratch_bytes: u32,
    fixed_shared: u32,
    struct_types: HashMap<ir::StructId, u32>,
    /// The buffer block structs already decorated.
    blocks: std::collections::HashSet<u32>,
    /// The work-group word of [`Lower::fence_by_atomic`], once made.
    fence_word: Option<u32>,
}

pub(super) fn write(vf: &ValidFunction, t: &SpirvTarget) -> R<SpirvModule> {
    let f = vf.function();
    let mut l = Lower {
        f,
        t,
        m: Module::new(),
        cache: HashMap::new(),
        value_vars: HashMap::new(),
        buffers: HashMap::new(),
        pc_var: 0,
        pc_scalar: HashMap::new(),
        pc_len: HashMap::new(),
        pc_member_types: Vec::new(),
        pc_groups: 0,
        pc_sc: op::SC_PUSH_CONSTANT,
        local_vars: Vec::new(),
        private_vars: Vec::new(),
        builtins: HashMap::new(),
        interface: Vec::new(),
        wg_size: [0; 3],
        wg_composite: 0,
        loops: Vec::new(),
        jump_var: None,
        terminated: false,
        scratch: HashMap::new(),
        scratch_bytes: 0,
        fixed_shared: 0,
        struct_types: HashMap::new(),
        blocks: Default::default(),
        fence_word: None,
    };
    l.m.cap(op::CAP_SHADER);
    if t.spirv_version < (1, 3) {
        return Err("SPIR-V before 1.3 (Vulkan 1.0)".into());
    }
    let void = l.m.ty(Ty::Void);
    let fn_ty = l.m.ty(Ty::Function(void, vec![]));
    let main = l.m.id();
    l.m.name(main, "main");
    l.workgroup_size();
    let layout = l.params()?;
    l.memories()?;
    // The function: header, variables, body.
    let entry_label = l.m.id();
    inst(&mut l.m.fn_head, op::FUNCTION, &[void, main, 0, fn_ty]);
    inst(&mut l.m.fn_head, op::LABEL, &[entry_label]);
    l.block(&f.body)?;
    if !l.terminated {
        l.emit(op::RETURN, &[]);
    }
    inst(&mut l.m.body, op::FUNCTION_END, &[]);
    if l.fixed_shared > t.max_shared_memory {
        return Err(format!(
            "{} bytes of local memory, more than the device's {}",
            l.fixed_shared, t.max_shared_memory
        ));
    }
    // The entry point and its interface (every global variable from SPIR-V 1.4 on, the
    // inputs before).
    let mut ops = vec![5, main];
    ops.extend(super::module::string_words("main"));
    ops.extend(&l.interface);
    inst(&mut l.m.entry, op::ENTRY_POINT, &ops);
    l.float_controls(main);
    let version = t.spirv_version;
    Ok(SpirvModule {
        words: l.m.finish(version),
        entry_point: "main".into(),
        layout,
        workgroup_size_spec_ids: [0, 1, 2],
        fixed_shared_bytes: l.fixed_shared,
        scratch_bytes_per_item: l.scratch_bytes,
    })
}

/// The unsigned type of the same size (the writer's integer types are all unsigned).
fn bits_lit(l: Literal) -> Vec<u32> {
    match l.scalar.bits() {
        64 => vec![l.bits as u32, (l.bits >> 32) as u32],
        _ => vec![l.bits as u32],
    }
}

impl Lower<'_> {
    /// `SignedZeroInfNanPreserve` and `DenormPreserve` for every float width the module uses
    /// (32 always) where the target offers them: without them a driver may assume no NaN or
    /// infinity (lavapipe folded `x - x` and `0 * x` to 0 and `x / 0` to 0) or flush
    /// subnormals (NVIDIA), and the IR's floats are IEEE's.
    fn float_controls(&mut self, main: u32) {
        let widths = [
            (16, self.m.capabilities.contains(&op::CAP_FLOAT16)),
            (32, true),
            (64, self.m.capabilities.contains(&op::CAP_FLOAT64)),
        ];
        for (i, (bits, used)) in widths.into_iter().enumerate() {
            let modes = [
                (
                    self.t.signed_zero_inf_nan_preserve[i],
                    op::CAP_SIGNED_ZERO_INF_NAN_PRESERVE,
                    op::MODE_SIGNED_ZERO_INF_NAN_PRESERVE,
                ),
                (
                    self.t.denorm_preserve[i],
                    op::CAP_DENORM_PRESERVE,
                    op::MODE_DENORM_PRESERVE,
                ),
            ];
            for (offered, cap, mode) in modes {
                if used && offered {
                    self.m.cap(cap);
                    if self.t.spirv_version < (1, 4) {
                        self.m.extensions.insert("SPV_KHR_float_controls");
                    }
                    inst(&mut self.m.modes, op::EXECUTION_MODE, &[main, mode, bits]);
                }
            }
        }
    }

    // ---- Types and constants ----

    fn scalar_ty(&mut self, s: Scalar) -> R<u32> {
        let t = self.t;
        let need = |ok: bool, what: &str| -> R<()> {
            if ok {
                Ok(())
            } else {
                Err(format!("{s} needs {what}, which the device lacks"))
            }
        };
        Ok(match s {
            Scalar::Bool => self.m.ty(Ty::Bool),
            Scalar::I8 | Scalar::U8 => {
                need(t.int8, "shaderInt8")?;
                self.m.cap(op::CAP_INT8);
                self.m.ty(Ty::Int(8))
            }
            Scalar::I16 | Scalar::U16 => {
                need(t.int16, "shaderInt16")?;
                self.m.cap(op::CAP_INT16);
                self.m.ty(Ty::Int(16))
            }
            Scalar::I32 | Scalar::U32 => self.m.ty(Ty::Int(32)),
            Scalar::I64 | Scalar::U64 => {
                need(t.int64, "shaderInt64")?;
                self.m.cap(op::CAP_INT64);
                self.m.ty(Ty::Int(64))
            }
            Scalar::F16 => {
                need(t.float16, "shaderFloat16")?;
                self.m.cap(op::CAP_FLOAT16);
                self.m.ty(Ty::Float(16))
            }
            Scalar::F32 => self.m.ty(Ty::Float(32)),
            Scalar::F64 => {
                need(t.float64, "shaderFloat64")?;
                self.m.cap(op::CAP_FLOAT64);
                self.m.ty(Ty::Float(64))
            }
        })
    }

    fn vty(&mut self, t: Type) -> R<u32> {
        let s = self.scalar_ty(t.scalar)?;
        Ok(if t.width > 1 {
            self.m.ty(Ty::Vector(s, t.width as u32))
        } else {
            s
        })
    }

    /// The type a buffer stores a scalar as (`bool` is a byte).
    fn mem_scalar(s: Scalar) -> Scalar {
        if s == Scalar::Bool {
            Scalar::U8
        } else {
            s
        }
    }

    /// Declares the storage access a buffer scalar needs.
    fn storage_access(&mut self, s: Scalar) -> R<()> {
        match s.size() {
            1 => {
                if !self.t.storage_buffer_8bit {
                    return Err(format!(
                        "buffers of {s} need storageBuffer8BitAccess, which the device lacks"
                    ));
                }
                self.m.cap(op::CAP_STORAGE_BUFFER_8BIT_ACCESS);
                if self.t.spirv_version < (1, 5) {
                    self.m.extensions.insert("SPV_KHR_8bit_storage");
                }
            }
            2 => {
                if !self.t.storage_buffer_16bit {
                    return Err(format!(
                        "buffers of {s} need storageBuffer16BitAccess, which the device lacks"
                    ));
                }
                self.m.cap(op::CAP_STORAGE_BUFFER_16BIT_ACCESS);
            }
            _ => {}
        }
        Ok(())
    }

    fn u32_ty(&mut self) -> u32 {
        self.m.ty(Ty::Int(32))
    }

    fn u32c(&mut self, v: u32) -> u32 {
        let t = self.u32_ty();
        self.m.constant(t, &[v])
    }

    fn lit(&mut self, l: Literal) -> R<u32> {
        if l.scalar == Scalar::Bool {
            return Ok(self.m.bool_const(l.bits != 0));
        }
        let t = self.scalar_ty(l.scalar)?;
        Ok(self.m.constant(t, &bits_lit(l)))
    }

    /// A constant of type `t` (splatted for vectors) from bits.
    fn const_of(&mut self, t: Type, bits: u64) -> R<u32> {
        let c = self.lit(Literal::from_bits(t.scalar, bits))?;
        self.splat_const(t, c)
    }

    fn splat_const(&mut self, t: Type, c: u32) -> R<u32> {
        if t.width == 1 {
            return Ok(c);
        }
        let vt = self.vty(t)?;
        Ok(self.m.constant_composite(vt, &vec![c; t.width as usize]))
    }

    fn float_const(&mut self, t: Type, v: f64) -> R<u32> {
        let bits = match t.scalar {
            Scalar::F16 => half::f16::from_f64(v).to_bits() as u64,
            Scalar::F32 => (v as f32).to_bits() as u64,
            _ => v.to_bits(),
        };
        self.const_of(t, bits)
    }

    fn ptr(&mut self, sc: u32, t: u32) -> u32 {
        self.m.ty(Ty::Pointer(sc, t))
    }

    // ---- Emission ----

    fn emit(&mut self, opcode: u32, ops: &[u32]) {
        inst(&mut self.m.body, opcode, ops);
    }

    /// An instruction with a result of type `ty`; returns the result id.
    fn op(&mut self, opcode: u32, ty: u32, ops: &[u32]) -> u32 {
        let id = self.m.id();
        let mut all = vec![ty, id];
        all.extend_from_slice(ops);
        inst(&mut self.m.body, opcode, &all);
        id
    }

    /// A float operation, decorated `NoContraction` (the IR never fuses).
    fn fop(&mut self, opcode: u32, ty: u32, ops: &[u32]) -> u32 {
        let id = self.op(opcode, ty, ops);
        self.m.decorate(id, op::DEC_NO_CONTRACTION, &[]);
        id
    }

    fn glsl(&mut self, ty: u32, f: u32, args: &[u32]) -> u32 {
        let mut ops = vec![self.m.glsl, f];
        ops.extend_from_slice(args);
        self.op(op::EXT_INST, ty, &ops)
    }

    fn label(&mut self, id: u32) {
        self.emit(op::LABEL, &[id]);
        self.cache.clear();
        self.terminated = false;
    }

    fn branch(&mut self, to: u32) {
        self.emit(op::BRANCH, &[to]);
        self.terminated = true;
    }

    fn var(&mut self, sc: u32, ty: u32) -> u32 {
        let p = self.ptr(sc, ty);
        let id = self.m.id();
        if sc == op::SC_FUNCTION {
            inst(&mut self.m.vars, op::VARIABLE, &[p, id, sc]);
        } else {
            inst(&mut self.m.globals, op::VARIABLE, &[p, id, sc]);
            if sc == op::SC_INPUT || self.t.spirv_version >= (1, 4) {
                self.interface.push(id);
            }
        }
        id
    }

    // ---- Declarations ----

    fn workgroup_size(&mut self) {
        let u = self.u32_ty();
        for d in 0..3 {
            let id = self.m.id();
            inst(&mut self.m.globals, op::SPEC_CONSTANT, &[u, id, 1]);
            self.m.decorate(id, op::DEC_SPEC_ID, &[d as u32]);
            self.wg_size[d] = id;
        }
        let v3 = self.m.ty(Ty::Vector(u, 3));
        let id = self.m.id();
        inst(
            &mut self.m.globals,
            op::SPEC_CONSTANT_COMPOSITE,
            &[v3, id, self.wg_size[0], self.wg_size[1], self.wg_size[2]],
        );
        self.m
            .decorate(id, op::DEC_BUILTIN, &[op::BI_WORKGROUP_SIZE]);
        self.m.name(id, "workgroup_size");
        self.wg_composite = id;
    }

    /// The buffers, push constants and specialization constants of the parameters.
    fn params(&mut self) -> R<ArgLayout> {
        let f = self.f;
        let used_len: std::collections::HashSet<ParamId> = f
            .exprs
            .iter()
            .filter_map(|(_, e, _)| match e {
                Expr::BufferLen(p) => Some(*p),
                _ => None,
            })
            .collect();
        let mut layout = ArgLayout::default();
        let mut offset = 0u32;
        let mut members: Vec<(u32, u32)> = Vec::new(); // (type, offset)
        let mut spec = 3u32;
        for (p, param) in f.params.iter_enumerated() {
            let slot = match param.kind {
                ParamKind::Buffer { elem, access, .. } => {
                    let binding = layout.bindings;
                    layout.bindings += 1;
                    let var = self.buffer_var(elem, binding, access.is_read_only())?;
                    self.m.name(var, &param.name);
                    self.buffers.insert(p, var);
                    let len_offset = if used_len.contains(&p) {
                        let u = self.u32_ty();
                        self.pc_len.insert(p, members.len() as u32);
                        members.push((u, offset));
                        offset += 4;
                        Some(offset - 4)
                    } else {
                        None
                    };
                    ArgSlot::Buffer {
                        binding,
                        len_offset,
                    }
                }
                ParamKind::Scalar(ty) => {
                    if ty.width != 1 {
                        return Err("a vector scalar parameter".into());
                    }
                    let s = ty.scalar;
                    let size = if s.size() == 8 { 8 } else { 4 };
                    let mt = if size == 8 || s == Scalar::F32 {
                        self.scalar_ty(s)?
                    } else {
                        self.u32_ty()
                    };
                    offset = offset.div_ceil(size) * size;
                    self.pc_scalar.insert(p, (members.len() as u32, s));
                    members.push((mt, offset));
                    offset += size;
                    ArgSlot::Scalar {
                        offset: offset - size,
                        size,
                    }
                }
                ParamKind::LocalLen => {
                    spec += 1;
                    ArgSlot::LocalLen { spec_id: spec - 1 }
                }
            };
            layout.params.push(slot);
        }
        // The launch's number of work-groups (not the `NumWorkgroups` built-in: the runtime
        // may split a launch into several dispatches with a base).
        let needs_groups = f.exprs.iter().any(|(_, e, _)| {
            matches!(
                e,
                Expr::Builtin(
                    Builtin::NumGroups(_) | Builtin::GlobalSize(_) | Builtin::GroupLinearId
                )
            )
        });
        if needs_groups {
            let u = self.u32_ty();
            self.pc_groups = members.len() as u32;
            layout.num_groups_offset = Some(offset);
            for _ in 0..3 {
                members.push((u, offset));
                offset += 4;
            }
        }
        if !members.is_empty() {
            let types: Vec<u32> = members.iter().map(|m| m.0).collect();
            let tag = self.m.id();
            let st = self.m.ty(Ty::Struct(types, tag));
            self.m.decorate(st, op::DEC_BLOCK, &[]);
            for (i, (_, o)) in members.iter().enumerate() {
                self.m.member_decorate(st, i as u32, op::DEC_OFFSET, &[*o]);
            }
            self.pc_member_types = members.iter().map(|m| m.0).collect();
            let size = offset.div_ceil(8) * 8;
            if size <= self.t.max_push_constants {
                self.pc_sc = op::SC_PUSH_CONSTANT;
                layout.push_constant_size = size;
                self.pc_var = self.var(op::SC_PUSH_CONSTANT, st);
            } else {
                // More than the device's push constants: the same block in a read-only
                // storage buffer at the next binding.
                self.pc_sc = op::SC_STORAGE_BUFFER;
                let binding = layout.bindings;
                layout.bindings += 1;
                layout.args_buffer = Some((binding, size));
                self.pc_var = self.var(op::SC_STORAGE_BUFFER, st);
                self.m.decorate(self.pc_var, op::DEC_DESCRIPTOR_SET, &[0]);
                self.m.decorate(self.pc_var, op::DEC_BINDING, &[binding]);
                self.m.decorate(self.pc_var, op::DEC_NON_WRITABLE, &[]);
            }
            self.m.name(self.pc_var, "args");
        }
        Ok(layout)
    }

    /// The explicitly laid-out type of a struct a buffer holds.
    fn struct_ty(&mut self, s: ir::StructId) -> R<u32> {
        if let Some(&t) = self.struct_types.get(&s) {
            return Ok(t);
        }
        let d = self.f.structs[s].clone();
        let mut members = Vec::new();
        for fd in &d.fields {
            let (et, esize, count) = match fd.ty {
                Elem::Value(t) => {
                    let ms = Self::mem_scalar(t.scalar);
                    self.storage_access(ms)?;
                    let st = self.scalar_ty(ms)?;
                    (st, ms.size() as u32, fd.len.unwrap_or(1) * t.width as u32)
                }
                Elem::Struct(k) => {
                    let st = self.struct_ty(k)?;
                    let size = self.f.structs[k].size;
                    (st, size, fd.len.unwrap_or(1))
                }
            };
            let is_array = fd.len.is_some() || matches!(fd.ty, Elem::Value(t) if t.width > 1);
            let mt = if is_array {
                let n = self.u32c(count);
                self.m.ty(Ty::Array(et, n, Some(esize)))
            } else {
                et
            };
            members.push(mt);
        }
        let tag = self.m.id();
        let st = self.m.ty(Ty::Struct(members, tag));
        self.m.name(st, &d.name);
        for (i, fd) in d.fields.iter().enumerate() {
            self.m
                .member_decorate(st, i as u32, op::DEC_OFFSET, &[fd.offset]);
        }
        self.struct_types.insert(s, st);
        Ok(st)
    }

    fn buffer_var(&mut self, elem: Elem, binding: u32, read_only: bool) -> R<u32> {
        let (et, stride) = match elem {
            Elem::Value(t) => {
                let ms = Self::mem_scalar(t.scalar);
                self.storage_access(ms)?;
                (self.scalar_ty(ms)?, ms.size() as u32)
            }
            Elem::Struct(s) => (self.struct_ty(s)?, self.f.structs[s].size),
        };
        let arr = self.m.ty(Ty::RuntimeArray(et, stride));
        // One block type per element type (the tag is the array, which is interned).
        let st = self.m.ty(Ty::Struct(vec![arr], 0));
        if !self.blocks_decorated(st) {
            self.m.decorate(st, op::DEC_BLOCK, &[]);
            self.m.member_decorate(st, 0, op::DEC_OFFSET, &[0]);
        }
        let var = self.var(op::SC_STORAGE_BUFFER, st);
        self.m.decorate(var, op::DEC_DESCRIPTOR_SET, &[0]);
        self.m.decorate(var, op::DEC_BINDING, &[binding]);
        if read_only {
            self.m.decorate(var, op::DEC_NON_WRITABLE, &[]);
        }
        Ok(var)
    }

    fn blocks_decorated(&mut self, st: u32) -> bool {
        !self.blocks.insert(st)
    }

    /// Local (workgroup) and private arrays.
    fn memories(&mut self) -> R<()> {
        let f = self.f;
        let mut spec_of: HashMap<ParamId, u32> = HashMap::new();
        let mut spec = 3u32;
        for (p, param) in f.params.iter_enumerated() {
            if param.kind == ParamKind::LocalLen {
                spec_of.insert(p, spec);
                spec += 1;
            }
        }
        let mut spec_consts: HashMap<ParamId, u32> = HashMap::new();
        for d in f.locals.iter() {
            let et = self.vty(d.elem)?;
            let len = match d.len {
                ArrayLen::Fixed(n) => {
                    self.fixed_shared += n * d.elem.size() as u32;
                    self.u32c(n)
                }
                ArrayLen::Param(p) => match spec_consts.get(&p) {
                    Some(&c) => c,
                    None => {
                        let u = self.u32_ty();
                        let id = self.m.id();
                        inst(&mut self.m.globals, op::SPEC_CONSTANT, &[u, id, 1]);
                        self.m.decorate(id, op::DEC_SPEC_ID, &[spec_of[&p]]);
                        self.m.name(id, &format!("{}_len", f.params[p].name));
                        spec_consts.insert(p, id);
                        id
                    }
                },
            };
            let at = self.m.ty(Ty::Array(et, len, None));
            let v = self.var(op::SC_WORKGROUP, at);
            self.m.name(v, &d.name);
            self.local_vars.push(v);
        }
        for d in f.privates.iter() {
            let et = self.vty(d.elem)?;
            let t = match d.len {
                Some(n) => {
                    let len = self.u32c(n);
                    self.m.ty(Ty::Array(et, len, None))
                }
                None => et,
            };
            let v = self.var(op::SC_FUNCTION, t);
            self.m.name(v, &d.name);
            self.private_vars.push(v);
        }
        Ok(())
    }

    fn builtin_var(&mut self, b: u32) -> u32 {
        if let Some(&v) = self.builtins.get(&b) {
            return v;
        }
        let u = self.u32_ty();
        let v3 = self.m.ty(Ty::Vector(u, 3));
        let v = self.var(op::SC_INPUT, v3);
        self.m.decorate(v, op::DEC_BUILTIN, &[b]);
        self.builtins.insert(b, v);
        v
    }

    // ---- Expressions ----

    fn builtin_component(&mut self, b: u32, d: u8) -> u32 {
        let var = self.builtin_var(b);
        let u = self.u32_ty();
        let v3 = self.m.ty(Ty::Vector(u, 3));
        let all = self.op(op::LOAD, v3, &[var]);
        self.op(op::COMPOSITE_EXTRACT, u, &[all, d.min(2) as u32])
    }

    /// The launch's number of work-groups in dimension `d`, from the push constants.
    fn num_groups(&mut self, d: u8) -> u32 {
        let u = self.u32_ty();
        let pt = self.ptr(self.pc_sc, u);
        let mc = self.u32c(self.pc_groups + d.min(2) as u32);
        let pcv = self.pc_var;
        let ptr = self.op(op::ACCESS_CHAIN, pt, &[pcv, mc]);
        self.op(op::LOAD, u, &[ptr])
    }

    fn local_size(&mut self, d: u8) -> u32 {
        let u = self.u32_ty();
        let c = self.wg_composite;
        self.op(op::COMPOSITE_EXTRACT, u, &[c, d.min(2) as u32])
    }

    fn group_size(&mut self) -> u32 {
        let u = self.u32_ty();
        let (x, y, z) = (self.local_size(0), self.local_size(1), self.local_size(2));
        let xy = self.op(op::I_MUL, u, &[x, y]);
        self.op(op::I_MUL, u, &[xy, z])
    }

    fn builtin(&mut self, b: Builtin) -> u32 {
        let u = self.u32_ty();
        match b {
            Builtin::GlobalId(d) => self.builtin_component(op::BI_GLOBAL_INVOCATION_ID, d),
            Builtin::LocalId(d) => self.builtin_component(op::BI_LOCAL_INVOCATION_ID, d),
            Builtin::GroupId(d) => self.builtin_component(op::BI_WORKGROUP_ID, d),
            Builtin::NumGroups(d) => self.num_groups(d),
            Builtin::LocalSize(d) => self.local_size(d),
            Builtin::GlobalSize(d) => {
                let n = self.num_groups(d);
                let l = self.local_size(d);
                self.op(op::I_MUL, u, &[n, l])
            }
            Builtin::LocalLinearId => self.linear(op::BI_LOCAL_INVOCATION_ID, true),
            Builtin::GroupLinearId => self.linear(op::BI_WORKGROUP_ID, false),
            Builtin::MaxSubGroupSize => self.u32c(self.t.subgroup_size),
            Builtin::SubGroupId
            | Builtin::SubGroupLocalId
            | Builtin::NumSubGroups
            | Builtin::SubGroupSize => {
                let sg = self.u32c(self.t.subgroup_size);
                let lid = self.linear(op::BI_LOCAL_INVOCATION_ID, true);
                match b {
                    Builtin::SubGroupId => self.op(op::U_DIV, u, &[lid, sg]),
                    Builtin::SubGroupLocalId => self.op(op::U_MOD, u, &[lid, sg]),
                    Builtin::NumSubGroups => {
                        let size = self.group_size();
                        let m1 = self.u32c(self.t.subgroup_size - 1);
                        let s = self.op(op::I_ADD, u, &[size, m1]);
                        self.op(op::U_DIV, u, &[s, sg])
                    }
                    _ => {
                        let size = self.group_size();
                        let q = self.op(op::U_DIV, u, &[lid, sg]);
                        let first = self.op(op::I_MUL, u, &[q, sg]);
                        let rest = self.op(op::I_SUB, u, &[size, first]);
                        self.glsl(u, op::GLSL_U_MIN, &[sg, rest])
                    }
                }
            }
        }
    }

    /// `x + y*sx + z*sx*sy` of a built-in id vector, over the local size or the group count.
    fn linear(&mut self, b: u32, local: bool) -> u32 {
        let u = self.u32_ty();
        let (x, y, z) = (
            self.builtin_component(b, 0),
            self.builtin_component(b, 1),
            self.builtin_component(b, 2),
        );
        let (sx, sy) = if local {
            (self.local_size(0), self.local_size(1))
        } else {
            (self.num_groups(0), self.num_groups(1))
        };
        let zy = self.op(op::I_MUL, u, &[z, sy]);
        let inner = self.op(op::I_ADD, u, &[y, zy]);
        let t = self.op(op::I_MUL, u, &[sx, inner]);
        self.op(op::I_ADD, u, &[x, t])
    }

    fn value_var(&mut self, v: ValueId) -> R<u32> {
        if let Some(&var) = self.value_vars.get(&v) {
            return Ok(var);
        }
        let d = &self.f.values[v];
        let name = d.name.clone();
        let t = self.vty(d.ty)?;
        let var = self.var(op::SC_FUNCTION, t);
        if let Some(n) = name {
            self.m.name(var, &n);
        }
        self.value_vars.insert(v, var);
        Ok(var)
    }

    fn expr(&mut self, id: ExprId) -> R<u32> {
        if let Some(&v) = self.cache.get(&id) {
            return Ok(v);
        }
        let v = self.render(id)?;
        self.cache.insert(id, v);
        Ok(v)
    }

    fn render(&mut self, id: ExprId) -> R<u32> {
        let ty = self.f.exprs.ty(id);
        let e = self.f.exprs.get(id).clone();
        Ok(match e {
            Expr::Literal(l) => self.lit(l)?,
            Expr::Param(p) => self.param(p)?,
            Expr::BufferLen(p) => {
                let m = *self.pc_len.get(&p).ok_or("a buffer length")?;
                let u = self.u32_ty();
                let pt = self.ptr(self.pc_sc, u);
                let mc = self.u32c(m);
                let pcv = self.pc_var;
                let ptr = self.op(op::ACCESS_CHAIN, pt, &[pcv, mc]);
                self.op(op::LOAD, u, &[ptr])
            }
            Expr::Value(v) => {
                let var = self.value_var(v)?;
                let t = self.vty(ty)?;
                self.op(op::LOAD, t, &[var])
            }
            Expr::Builtin(b) => self.builtin(b),
            Expr::Unary(o, a) => {
                let x = self.expr(a)?;
                let t = self.vty(ty)?;
                match (o, ty.scalar) {
                    (UnaryOp::Not, Scalar::Bool) => self.op(op::LOGICAL_NOT, t, &[x]),
                    (UnaryOp::Not, _) => self.op(op::NOT, t, &[x]),
                    (UnaryOp::Neg, s) if s.is_float() => self.fop(op::F_NEGATE, t, &[x]),
                    (UnaryOp::Neg, _) => self.op(op::S_NEGATE, t, &[x]),
                }
            }
            Expr::Binary(o, a, b) => {
                let at = self.f.exprs.ty(a);
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                self.binary(o, at, ty, x, y)?
            }
            Expr::Select(c, a, b) => {
                let ct = self.f.exprs.ty(c);
                let (cv, x, y) = (self.expr(c)?, self.expr(a)?, self.expr(b)?);
                let cv = if ct.width == 1 && ty.width > 1 {
                    let bt = self.vty(Type::vector(Scalar::Bool, ty.width))?;
                    self.op(op::COMPOSITE_CONSTRUCT, bt, &vec![cv; ty.width as usize])
                } else {
                    cv
                };
                let t = self.vty(ty)?;
                self.op(op::SELECT, t, &[cv, x, y])
            }
            Expr::Cast(a, to) => {
                let from = self.f.exprs.ty(a);
                let x = self.expr(a)?;
                self.cast(from, to, x)?
            }
            Expr::Bitcast(a, to) => {
                let x = self.expr(a)?;
                let t = self.vty(to)?;
                self.op(op::BITCAST, t, &[x])
            }
            Expr::Math(m, args) => {
                let at = self.f.exprs.ty(args[0]);
                let mut vals = Vec::new();
                for &a in &args {
                    vals.push(self.expr(a)?);
                }
                self.math(m, at, ty, &vals)?
            }
            Expr::Splat(a, n) => {
                let x = self.expr(a)?;
                let t = self.vty(ty)?;
                self.op(op::COMPOSITE_CONSTRUCT, t, &vec![x; n as usize])
            }
            Expr::Compose(parts) => {
                let mut xs = Vec::new();
                for p in parts {
                    xs.push(self.expr(p)?);
                }
                let t = self.vty(ty)?;
                self.op(op::COMPOSITE_CONSTRUCT, t, &xs)
            }
            Expr::Extract(a, i) => {
                let x = self.expr(a)?;
                let t = self.vty(ty)?;
                self.op(op::COMPOSITE_EXTRACT, t, &[x, i as u32])
            }
            Expr::Stub(n, _) => {
                return Err(format!(
                    "stub function `{}` (stubs have C sources only)",
                    self.f.stubs[n].name
                ))
            }
        })
    }

    fn param(&mut self, p: ParamId) -> R<u32> {
        let (m, s) = *self
            .pc_scalar
            .get(&p)
            .ok_or("a non-scalar parameter read")?;
        let mt = self.pc_member_types[m as usize];
        let pt = self.ptr(self.pc_sc, mt);
        let mc = self.u32c(m);
        let pcv = self.pc_var;
        let ptr = self.op(op::ACCESS_CHAIN, pt, &[pcv, mc]);
        let raw = self.op(op::LOAD, mt, &[ptr]);
        Ok(match s {
            Scalar::Bool => {
                let b = self.m.ty(Ty::Bool);
                let z = self.u32c(0);
                self.op(op::I_NOT_EQUAL, b, &[raw, z])
            }
            Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => {
                let t = self.scalar_ty(s)?;
                self.op(op::U_CONVERT, t, &[raw])
            }
            Scalar::F16 => {
                let h = self.scalar_ty(Scalar::U16)?;
                let bits = self.op(op::U_CONVERT, h, &[raw]);
                let t = self.scalar_ty(s)?;
                self.op(op::BITCAST, t, &[bits])
            }
            _ => raw,
        })
    }

    fn binary(&mut self, o: BinaryOp, at: Type, rt: Type, x: u32, y: u32) -> R<u32> {
        use BinaryOp::*;
        let s = at.scalar;
        let t = self.vty(rt)?;
        if s == Scalar::Bool {
            let opc = match o {
                And => op::LOGICAL_AND,
                Or => op::LOGICAL_OR,
                Xor | Ne => op::LOGICAL_NOT_EQUAL,
                Eq => op::LOGICAL_EQUAL,
                _ => {
                    // Orderings of booleans: as integers.
                    let ut = at.with_scalar(Scalar::U32);
                    let (xi, yi) = (
                        self.cast(at, Scalar::U32, x)?,
                        self.cast(at, Scalar::U32, y)?,
                    );
                    return self.binary(o, ut, rt, xi, yi);
                }
            };
            return Ok(self.op(opc, t, &[x, y]));
        }
        if s.is_float() {
            let opc = match o {
                Add => op::F_ADD,
                Sub => op::F_SUB,
                Mul => op::F_MUL,
                Div => op::F_DIV,
                Rem => op::F_REM,
                Eq => op::F_ORD_EQUAL,
                Ne => op::F_UNORD_NOT_EQUAL,
                Lt => op::F_ORD_LESS_THAN,
                Le => op::F_ORD_LESS_THAN_EQUAL,
                Gt => op::F_ORD_GREATER_THAN,
                Ge => op::F_ORD_GREATER_THAN_EQUAL,
                _ => return Err(format!("float operator {}", o.symbol())),
            };
            if o == Rem {
                return self.fmod(at, x, y);
            }
            if o == Div && self.core_in_f64(s) {
                return self.via_f64(at, &[x, y], |l, dt, w| l.f2(dt, op::F_DIV, w[0], w[1]));
            }
            if self.t.llvmpipe_float_fixes && matches!(o, Add | Sub | Mul | Div) {
                let r = self.fop(opc, t, &[x, y]);
                return self.llvmpipe_fix(o, at, x, y, r);
            }
            return Ok(if o.is_comparison() {
                self.op(opc, t, &[x, y])
            } else {
                self.fop(opc, t, &[x, y])
            });
        }
        let signed = s.is_signed();
        let opc = match o {
            Add => op::I_ADD,
            Sub => op::I_SUB,
            Mul => op::I_MUL,
            And => op::BITWISE_AND,
            Or => op::BITWISE_OR,
            Xor => op::BITWISE_XOR,
            Eq => op::I_EQUAL,
            Ne => op::I_NOT_EQUAL,
            Lt if signed => op::S_LESS_THAN,
            Lt => op::U_LESS_THAN,
            Le if signed => op::S_LESS_THAN_EQUAL,
            Le => op::U_LESS_THAN_EQUAL,
            Gt if signed => op::S_GREATER_THAN,
            Gt => op::U_GREATER_THAN,
            Ge if signed => op::S_GREATER_THAN_EQUAL,
            Ge => op::U_GREATER_THAN_EQUAL,
            Shl | Shr => {
                let mask = self.const_of(at, s.bits() as u64 - 1)?;
                let amount = self.op(op::BITWISE_AND, t, &[y, mask]);
                let opc = match (o, signed) {
                    (Shl, _) => op::SHIFT_LEFT_LOGICAL,
                    (_, true) => op::SHIFT_RIGHT_ARITHMETIC,
                    _ => op::SHIFT_RIGHT_LOGICAL,
                };
                return Ok(self.op(opc, t, &[x, amount]));
            }
            Div | Rem if !signed => {
                let opc = if o == Div { op::U_DIV } else { op::U_MOD };
                return Ok(self.op(opc, t, &[x, y]));
            }
            Rem => {
                // Vulkan's SPIR-V environment leaves `OpSRem` and `OpSMod` undefined when an
                // operand is negative (NVIDIA's driver gave the remainder the divisor's sign,
                // and MIN % (MIN | 1) = MIN): the remainder of the magnitudes (`OpUMod`; every
                // integer type here is unsigned in SPIR-V), with the dividend's sign. |MIN| is
                // 2^(n-1) as unsigned, and MIN % -1 = 0 comes out of the rule.
                let zero = self.const_of(at, 0)?;
                let bt = self.vty(at.with_scalar(Scalar::Bool))?;
                let ax = self.int_magnitude(at, x)?;
                let ay = self.int_magnitude(at, y)?;
                let r = self.op(op::U_MOD, t, &[ax, ay]);
                let minus = self.op(op::S_NEGATE, t, &[r]);
                let xneg = self.op(op::S_LESS_THAN, bt, &[x, zero]);
                return Ok(self.op(op::SELECT, t, &[xneg, minus, r]));
            }
            Div => {
                // `MIN / -1` wraps to `MIN`: divide by 1 instead of -1 and negate.
                let m1 = self.const_of(at, u64::MAX)?;
                let one = self.const_of(at, 1)?;
                let bt = self.vty(at.with_scalar(Scalar::Bool))?;
                let is_m1 = self.op(op::I_EQUAL, bt, &[y, m1]);
                let d = self.op(op::SELECT, t, &[is_m1, one, y]);
                let q = self.op(op::S_DIV, t, &[x, d]);
                let neg = self.op(op::S_NEGATE, t, &[x]);
                return Ok(self.op(op::SELECT, t, &[is_m1, neg, q]));
            }
        };
        Ok(self.op(opc, t, &[x, y]))
    }

    /// Value conversion of `x` (of type `from`) to component type `to`, with the IR's rules.
    fn cast(&mut self, from: Type, to: Scalar, x: u32) -> R<u32> {
        let fs = from.scalar;
        let tt = from.with_scalar(to);
        if fs == to {
            return Ok(x);
        }
        let t = self.vty(tt)?;
        if fs == Scalar::Bool {
            let one = self.one(tt)?;
            let zero = self.const_of(tt, 0)?;
            return Ok(self.op(op::SELECT, t, &[x, one, zero]));
        }
        if to == Scalar::Bool {
            let zero = self.const_of(from, 0)?;
            let opc = if fs.is_float() {
                op::F_UNORD_NOT_EQUAL
            } else {
                op::I_NOT_EQUAL
            };
            return Ok(self.op(opc, t, &[x, zero]));
        }
        if fs == Scalar::F16 && to != Scalar::F32 && to != Scalar::F64 {
            let w = self.cast(from, Scalar::F32, x)?;
            return self.cast(from.with_scalar(Scalar::F32), to, w);
        }
        if to == Scalar::F16 && !fs.is_float() {
            let w = self.cast(from, Scalar::F32, x)?;
            return self.cast(from.with_scalar(Scalar::F32), to, w);
        }
        Ok(match (fs.is_float(), to.is_float()) {
            (true, true) if fs == Scalar::F64 && to == Scalar::F16 => self.f64_to_f16(from, x)?,
            (true, true) => self.fop(op::F_CONVERT, t, &[x]),
            (false, true) => {
                let opc = if fs.is_signed() {
                    op::CONVERT_S_TO_F
                } else {
                    op::CONVERT_U_TO_F
                };
                self.op(opc, t, &[x])
            }
            (false, false) => {
                if fs.size() == to.size() {
                    x
                } else if fs.size() < to.size() && fs.is_signed() {
                    self.op(op::S_CONVERT, t, &[x])
                } else {
                    self.op(op::U_CONVERT, t, &[x])
                }
            }
            (true, false) => self.float_to_int(from, to, x)?,
        })
    }

    /// `|x|` of a signed integer `x` (of type `at`), `MIN` for `MIN` (2^(n-1) as unsigned):
    /// `(x ^ m) - m` with `m = x >> (n - 1)`, not GLSL's `SAbs`, which a compiler may take
    /// to be non-negative: NVIDIA's folded `abs(MIN) < 0` to false for `i32` (its `i64`
    /// `abs(MIN) % (MIN | 1)` is still wrong, docs/BENCHMARKS.md).
    fn int_magnitude(&mut self, at: Type, x: u32) -> R<u32> {
        let t = self.vty(at)?;
        let sh = self.const_of(at, at.scalar.bits() as u64 - 1)?;
        let m = self.op(op::SHIFT_RIGHT_ARITHMETIC, t, &[x, sh]);
        let flipped = self.op(op::BITWISE_XOR, t, &[x, m]);
        Ok(self.op(op::I_SUB, t, &[flipped, m]))
    }

    fn one(&mut self, t: Type) -> R<u32> {
        if t.scalar.is_float() {
            self.float_const(t, 1.0)
        } else {
            self.const_of(t, 1)
        }
    }

    /// Saturating, truncating float-to-integer conversion with NaN to 0.
    fn float_to_int(&mut self, from: Type, to: Scalar, x: u32) -> R<u32> {
        let bits = to.bits();
        let (lo, hi) = if to.is_signed() {
            (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1))
        } else {
            (0.0, 2f64.powi(bits as i32))
        };
        let (min, max) = if to.is_signed() {
            (1u64 << (bits - 1), (1u64 << (bits - 1)) - 1)
        } else {
            (
                0,
                if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                },
            )
        };
        let tt = from.with_scalar(to);
        let t = self.vty(tt)?;
        // Convert into at least 32 bits, then narrow.
        let wide = if bits < 32 {
            if to.is_signed() {
                Scalar::I32
            } else {
                Scalar::U32
            }
        } else {
            to
        };
        let wt = self.vty(from.with_scalar(wide))?;
        let opc = if to.is_signed() {
            op::CONVERT_F_TO_S
        } else {
            op::CONVERT_F_TO_U
        };
        let conv = self.op(opc, wt, &[x]);
        let conv = if wide != to {
            self.op(op::U_CONVERT, t, &[conv])
        } else {
            conv
        };
        let bt = self.vty(from.with_scalar(Scalar::Bool))?;
        let hic = self.float_const(from, hi)?;
        let loc = self.float_const(from, lo)?;
        let too_big = self.op(op::F_ORD_GREATER_THAN_EQUAL, bt, &[x, hic]);
        let too_small = self.op(op::F_ORD_LESS_THAN, bt, &[x, loc]);
        let nan = self.op(op::IS_NAN, bt, &[x]);
        let maxc = self.const_of(tt, max)?;
        let minc = self.const_of(tt, min)?;
        let zero = self.const_of(tt, 0)?;
        let r = self.op(op::SELECT, t, &[too_big, maxc, conv]);
        let r = self.op(op::SELECT, t, &[too_small, minc, r]);
        Ok(self.op(op::SELECT, t, &[nan, zero, r]))
    }

    fn math(&mut self, m: MathFn, at: Type, rt: Type, a: &[u32]) -> R<u32> {
        let s = at.scalar;
        let t = self.vty(rt)?;
        let g = |l: &mut Self, f: u32| l.glsl(t, f, a);
        if s.is_float() {
            if let Some(r) = self.math64(m, at, a)? {
                return Ok(r);
            }
            let simple = match m {
                MathFn::Sqrt => Some(op::GLSL_SQRT),
                MathFn::Floor => Some(op::GLSL_FLOOR),
                MathFn::Ceil => Some(op::GLSL_CEIL),
                MathFn::Trunc => Some(op::GLSL_TRUNC),
                MathFn::Rint => Some(op::GLSL_ROUND_EVEN),
                MathFn::Abs => Some(op::GLSL_F_ABS),
                MathFn::Min => Some(op::GLSL_N_MIN),
                MathFn::Max => Some(op::GLSL_N_MAX),
                _ => None,
            };
            if m == MathFn::Sqrt && self.core_in_f64(s) {
                return self.via_f64(at, a, |l, dt, w| l.g1(dt, op::GLSL_SQRT, w[0]));
            }
            if let Some(f) = simple {
                return Ok(g(self, f));
            }
            let transcendental = match m {
                MathFn::Rsqrt => Some(op::GLSL_INVERSE_SQRT),
                MathFn::Exp2 => Some(op::GLSL_EXP2),
                MathFn::Log => Some(op::GLSL_LOG),
                MathFn::Log2 => Some(op::GLSL_LOG2),
                MathFn::Sin => Some(op::GLSL_SIN),
                MathFn::Cos => Some(op::GLSL_COS),
                MathFn::Tan => Some(op::GLSL_TAN),
                MathFn::Tanh => Some(op::GLSL_TANH),
                MathFn::Asinh => Some(op::GLSL_ASINH),
                MathFn::Acosh => Some(op::GLSL_ACOSH),
                MathFn::Atanh => Some(op::GLSL_ATANH),
                _ => None,
            };
            if let Some(f) = transcendental {
                if s == Scalar::F64 {
                    return self.glsl64(at, f, a);
                }
                let trig = matches!(f, op::GLSL_SIN | op::GLSL_COS | op::GLSL_TAN);
                let r = if f == op::GLSL_LOG || f == op::GLSL_LOG2 || (trig && self.core_in_f64(s))
                {
                    self.glsl_f32(at, f, a, m.name())?
                } else if trig && s == Scalar::F32 && self.t.llvmpipe_float_fixes && self.t.float64
                {
                    // lavapipe's f32 `Sin`/`Cos`/`Tan` are 1 or -1 from |x| of about 1e10 on:
                    // the argument reduced in f64 first.
                    self.trig_f32_reduced(at, f, a[0])?
                } else if matches!(f, op::GLSL_ASINH | op::GLSL_ACOSH) && s == Scalar::F32 {
                    // `log(x + sqrt(x * x + 1))` overflows from |x| of 2^64 on (lavapipe's
                    // asinh(2^124) was inf): above 2^32, `log(|x|) + ln 2`, signed for asinh.
                    let r = g(self, f);
                    let ax = self.g1(at, op::GLSL_F_ABS, a[0])?;
                    let big = self.float_const(at, 4_294_967_296.0)?;
                    let tested = if f == op::GLSL_ASINH { ax } else { a[0] };
                    let is_big = self.fcmp(at, op::F_ORD_GREATER_THAN, tested, big)?;
                    let l = self.glsl_f32(at, op::GLSL_LOG, &[ax], "asinh")?;
                    let ln2 = self.float_const(at, std::f64::consts::LN_2)?;
                    let l = self.f2(at, op::F_ADD, l, ln2)?;
                    let l = if f == op::GLSL_ASINH {
                        self.copysign(at, l, a[0])?
                    } else {
                        l
                    };
                    let r = self.sel(at, is_big, l, r)?;
                    if f == op::GLSL_ACOSH {
                        // And NaN below 1 (lavapipe's acosh(-2e37) was inf).
                        let one = self.float_const(at, 1.0)?;
                        let nan = self.float_const(at, f64::NAN)?;
                        let below = self.fcmp(at, op::F_ORD_LESS_THAN, a[0], one)?;
                        self.sel(at, below, nan, r)?
                    } else {
                        r
                    }
                } else {
                    g(self, f)
                };
                // NaN in, NaN out (lavapipe's atan2(NaN, 1) is 0).
                return self.nan_through(at, a, r);
            }
            return match m {
                MathFn::Clamp => {
                    let lo = self.glsl(t, op::GLSL_N_MAX, &[a[0], a[1]]);
                    Ok(self.glsl(t, op::GLSL_N_MIN, &[lo, a[2]]))
                }
                MathFn::Mix => {
                    // Through `binary`, for its lavapipe fixes (`mix(x, x, 0)` of a NaN).
                    let d = self.binary(BinaryOp::Sub, at, at, a[1], a[0])?;
                    let p = self.binary(BinaryOp::Mul, at, at, d, a[2])?;
                    self.binary(BinaryOp::Add, at, at, a[0], p)
                }
                MathFn::Fmod => self.fmod(at, a[0], a[1]),
                MathFn::Degrees | MathFn::Radians => {
                    let k = if m == MathFn::Degrees {
                        180.0 / std::f64::consts::PI
                    } else {
                        std::f64::consts::PI / 180.0
                    };
                    let c = self.float_const(at, k)?;
                    Ok(self.fop(op::F_MUL, t, &[a[0], c]))
                }
                MathFn::Round => {
                    // Half away from zero: trunc(x), plus sign(x) when |x - trunc(x)| >= 0.5.
                    let tr = self.glsl(t, op::GLSL_TRUNC, &[a[0]]);
                    let d = self.fop(op::F_SUB, t, &[a[0], tr]);
                    let ad = self.glsl(t, op::GLSL_F_ABS, &[d]);
                    let half = self.float_const(at, 0.5)?;
                    let bt = self.vty(at.with_scalar(Scalar::Bool))?;
                    let up = self.op(op::F_ORD_GREATER_THAN_EQUAL, bt, &[ad, half]);
                    let one = self.float_const(at, 1.0)?;
                    let sgn = self.copysign(at, one, a[0])?;
                    let r = self.fop(op::F_ADD, t, &[tr, sgn]);
                    Ok(self.op(op::SELECT, t, &[up, r, tr]))
                }
                MathFn::Copysign => self.copysign(at, a[0], a[1]),
                MathFn::Sign => {
                    let one = self.float_const(at, 1.0)?;
                    let s1 = self.copysign(at, one, a[0])?;
                    let zero = self.float_const(at, 0.0)?;
                    let bt = self.vty(at.with_scalar(Scalar::Bool))?;
                    let is0 = self.op(op::F_ORD_EQUAL, bt, &[a[0], zero]);
                    let r = self.op(op::SELECT, t, &[is0, a[0], s1]);
                    let nan = self.op(op::IS_NAN, bt, &[a[0]]);
                    Ok(self.op(op::SELECT, t, &[nan, zero, r]))
                }
                MathFn::Fract => {
                    let fl = self.glsl(t, op::GLSL_FLOOR, &[a[0]]);
                    let d = self.fop(op::F_SUB, t, &[a[0], fl]);
                    let below = match s {
                        Scalar::F64 => f64::from_bits(1f64.to_bits() - 1),
                        _ => f32::from_bits(1f32.to_bits() - 1) as f64,
                    };
                    let c = self.float_const(at, below)?;
                    let r = self.glsl(t, op::GLSL_N_MIN, &[d, c]);
                    // fract(+-0) = +-0 and fract(NaN) = NaN (x itself), fract(+-inf) = +-0.
                    let zero = self.float_const(at, 0.0)?;
                    let x0 = self.fcmp(at, op::F_ORD_EQUAL, a[0], zero)?;
                    let xn = self.is_nan(at, a[0])?;
                    let keep = self.or(at, x0, xn)?;
                    let r = self.sel(at, keep, a[0], r)?;
                    let xi = self.is_inf(at, a[0])?;
                    let z = self.copysign(at, zero, a[0])?;
                    self.sel(at, xi, z, r)
                }
                MathFn::Fdim => {
                    let d = self.fop(op::F_SUB, t, &[a[0], a[1]]);
                    let bt = self.vty(at.with_scalar(Scalar::Bool))?;
                    let gt = self.op(op::F_ORD_GREATER_THAN, bt, &[a[0], a[1]]);
                    let zero = self.float_const(at, 0.0)?;
                    let r = self.op(op::SELECT, t, &[gt, d, zero]);
                    let nx = self.op(op::IS_NAN, bt, &[a[0]]);
                    let ny = self.op(op::IS_NAN, bt, &[a[1]]);
                    let r = self.op(op::SELECT, t, &[ny, a[1], r]);
                    Ok(self.op(op::SELECT, t, &[nx, a[0], r]))
                }
                MathFn::Ldexp => self.ldexp(at, a[0], a[1]),
                MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite | MathFn::Signbit => {
                    let bt = t;
                    match m {
                        MathFn::IsNan => Ok(self.op(op::IS_NAN, bt, &[a[0]])),
                        MathFn::IsInf => Ok(self.op(op::IS_INF, bt, &[a[0]])),
                        MathFn::IsFinite => {
                            let n = self.op(op::IS_NAN, bt, &[a[0]]);
                            let i = self.op(op::IS_INF, bt, &[a[0]]);
                            let either = self.op(op::LOGICAL_OR, bt, &[n, i]);
                            Ok(self.op(op::LOGICAL_NOT, bt, &[either]))
                        }
                        _ => {
                            let ut = at.with_scalar(Self::uint_of_size(s.size()));
                            let u = self.vty(ut)?;
                            let bits = self.op(op::BITCAST, u, &[a[0]]);
                            let sh = self.const_of(ut, s.bits() as u64 - 1)?;
                            let top = self.op(op::SHIFT_RIGHT_LOGICAL, u, &[bits, sh]);
                            let zero = self.const_of(ut, 0)?;
                            Ok(self.op(op::I_NOT_EQUAL, bt, &[top, zero]))
                        }
                    }
                }
                MathFn::Dot | MathFn::Length | MathFn::Distance => {
                    let st = self.vty(at.component())?;
                    let mut acc = self.float_const(at.component(), 0.0)?;
                    for c in 0..at.width as u32 {
                        let x = if at.width > 1 {
                            self.op(op::COMPOSITE_EXTRACT, st, &[a[0], c])
                        } else {
                            a[0]
                        };
                        let v = match m {
                            MathFn::Dot => {
                                let y = if at.width > 1 {
                                    self.op(op::COMPOSITE_EXTRACT, st, &[a[1], c])
                                } else {
                                    a[1]
                                };
                                self.fop(op::F_MUL, st, &[x, y])
                            }
                            MathFn::Distance => {
                                let y = if at.width > 1 {
                                    self.op(op::COMPOSITE_EXTRACT, st, &[a[1], c])
                                } else {
                                    a[1]
                                };
                                let d = self.fop(op::F_SUB, st, &[x, y]);
                                self.fop(op::F_MUL, st, &[d, d])
                            }
                            _ => self.fop(op::F_MUL, st, &[x, x]),
                        };
                        acc = self.fop(op::F_ADD, st, &[acc, v]);
                    }
                    Ok(if m == MathFn::Dot {
                        acc
                    } else {
                        self.glsl(st, op::GLSL_SQRT, &[acc])
                    })
                }
                MathFn::Normalize => {
                    let st = self.vty(at.component())?;
                    let mut acc = self.float_const(at.component(), 0.0)?;
                    for c in 0..at.width as u32 {
                        let x = if at.width > 1 {
                            self.op(op::COMPOSITE_EXTRACT, st, &[a[0], c])
                        } else {
                            a[0]
                        };
                        let sq = self.fop(op::F_MUL, st, &[x, x]);
                        acc = self.fop(op::F_ADD, st, &[acc, sq]);
                    }
                    let len = self.glsl(st, op::GLSL_SQRT, &[acc]);
                    let lv = if at.width > 1 {
                        self.op(op::COMPOSITE_CONSTRUCT, t, &vec![len; at.width as usize])
                    } else {
                        len
                    };
                    Ok(self.fop(op::F_DIV, t, &[a[0], lv]))
                }
                MathFn::Cross => {
                    let st = self.vty(at.component())?;
                    let mut xs = Vec::new();
                    let mut ys = Vec::new();
                    for c in 0..at.width as u32 {
                        xs.push(self.op(op::COMPOSITE_EXTRACT, st, &[a[0], c]));
                        ys.push(self.op(op::COMPOSITE_EXTRACT, st, &[a[1], c]));
                    }
                    let mut out = Vec::new();
                    for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                        let p = self.fop(op::F_MUL, st, &[xs[i], ys[j]]);
                        let q = self.fop(op::F_MUL, st, &[xs[j], ys[i]]);
                        out.push(self.fop(op::F_SUB, st, &[p, q]));
                    }
                    if at.width == 4 {
                        out.push(self.float_const(at.component(), 0.0)?);
                    }
                    Ok(self.op(op::COMPOSITE_CONSTRUCT, t, &out))
                }
                _ => self.float_math_more(m, at, a),
            };
        }
        let signed = s.is_signed();
        match m {
            MathFn::Abs if signed => self.int_magnitude(at, a[0]),
            MathFn::Abs => Ok(a[0]),
            MathFn::Min => Ok(g(
                self,
                if signed {
                    op::GLSL_S_MIN
                } else {
                    op::GLSL_U_MIN
                },
            )),
            MathFn::Max => Ok(g(
                self,
                if signed {
                    op::GLSL_S_MAX
                } else {
                    op::GLSL_U_MAX
                },
            )),
            MathFn::Clamp => {
                let (mx, mn) = if signed {
                    (op::GLSL_S_MAX, op::GLSL_S_MIN)
                } else {
                    (op::GLSL_U_MAX, op::GLSL_U_MIN)
                };
                let lo = self.glsl(t, mx, &[a[0], a[1]]);
                Ok(self.glsl(t, mn, &[lo, a[2]]))
            }
            MathFn::Popcount | MathFn::Clz if s.size() <= 4 => {
                let ut = at.with_scalar(Scalar::U32);
                let u = self.vty(ut)?;
                let x = if s.size() < 4 {
                    self.op(op::U_CONVERT, u, &[a[0]])
                } else {
                    a[0]
                };
                let r = if m == MathFn::Popcount {
                    self.op(op::BIT_COUNT, u, &[x])
                } else {
                    // FindUMsb(0) is -1: 31 - msb counts 32 leading zeros for 0.
                    let msb = self.glsl(u, op::GLSL_FIND_U_MSB, &[x]);
                    let k = self.const_of(ut, s.bits() as u64 - 1)?;
                    self.op(op::I_SUB, u, &[k, msb])
                };
                Ok(if s.size() < 4 {
                    self.op(op::U_CONVERT, t, &[r])
                } else {
                    r
                })
            }
            MathFn::Rotate => {
                let mask = self.const_of(at, s.bits() as u64 - 1)?;
                let n = self.op(op::BITWISE_AND, t, &[a[1], mask]);
                let w = self.const_of(at, s.bits() as u64)?;
                let back = self.op(op::I_SUB, t, &[w, n]);
                let back = self.op(op::BITWISE_AND, t, &[back, mask]);
                let l = self.op(op::SHIFT_LEFT_LOGICAL, t, &[a[0], n]);
                let r = self.op(op::SHIFT_RIGHT_LOGICAL, t, &[a[0], back]);
                Ok(self.op(op::BITWISE_OR, t, &[l, r]))
            }
            MathFn::MulHi if s.size() >= 4 => {
                let st = self.m.ty(Ty::Struct(vec![t, t], 0));
                let opc = if signed {
                    op::S_MUL_EXTENDED
                } else {
                    op::U_MUL_EXTENDED
                };
                let r = self.op(opc, st, &[a[0], a[1]]);
                Ok(self.op(op::COMPOSITE_EXTRACT, t, &[r, 1]))
            }
            MathFn::MulHi | MathFn::AddSat | MathFn::SubSat | MathFn::Hadd | MathFn::Rhadd
                if s.size() < 8 =>
            {
                // In 64 bits (exact for every 8/16/32-bit operand), then back.
                let ws = if signed { Scalar::I64 } else { Scalar::U64 };
                let wt = at.with_scalar(ws);
                let x = self.cast(at, ws, a[0])?;
                let y = self.cast(at, ws, a[1])?;
                let w = self.vty(wt)?;
                let r = match m {
                    MathFn::MulHi => {
                        let p = self.op(op::I_MUL, w, &[x, y]);
                        let sh = self.const_of(wt, s.bits() as u64)?;
                        let opc = if signed {
                            op::SHIFT_RIGHT_ARITHMETIC
                        } else {
                            op::SHIFT_RIGHT_LOGICAL
                        };
                        self.op(opc, w, &[p, sh])
                    }
                    MathFn::AddSat | MathFn::SubSat => {
                        let opc = if m == MathFn::AddSat {
                            op::I_ADD
                        } else {
                            op::I_SUB
                        };
                        let r = self.op(opc, w, &[x, y]);
                        let bits = s.bits();
                        let (lo, hi) = if signed {
                            (
                                (1u64 << (bits - 1)).wrapping_neg(),
                                (1u64 << (bits - 1)) - 1,
                            )
                        } else {
                            (0, (1u64 << bits) - 1)
                        };
                        let loc = self.const_of(wt, lo)?;
                        let hic = self.const_of(wt, hi)?;
                        let (mx, mn) = if signed {
                            (op::GLSL_S_MAX, op::GLSL_S_MIN)
                        } else {
                            (op::GLSL_U_MAX, op::GLSL_U_MIN)
                        };
                        if !signed && m == MathFn::SubSat {
                            // Unsigned: below zero wraps in 64 bits; clamp through the compare.
                            let bt = self.vty(at.with_scalar(Scalar::Bool))?;
                            let under = self.op(op::U_LESS_THAN, bt, &[x, y]);
                            let zero = self.const_of(wt, 0)?;
                            self.op(op::SELECT, w, &[under, zero, r])
                        } else {
                            let r = self.glsl(w, mx, &[r, loc]);
                            self.glsl(w, mn, &[r, hic])
                        }
                    }
                    _ => {
                        let sum = self.op(op::I_ADD, w, &[x, y]);
                        let sum = if m == MathFn::Rhadd {
                            let one = self.const_of(wt, 1)?;
                            self.op(op::I_ADD, w, &[sum, one])
                        } else {
                            sum
                        };
                        let one = self.const_of(wt, 1)?;
                        let opc = if signed {
                            op::SHIFT_RIGHT_ARITHMETIC
                        } else {
                            op::SHIFT_RIGHT_LOGICAL
                        };
                        self.op(opc, w, &[sum, one])
                    }
                };
                Ok(self.op(op::U_CONVERT, t, &[r]))
            }
            _ => self.int_math_more(m, at, a),
        }
    }

    fn uint_of_size(n: usize) -> Scalar {
        match n {
            1 => Scalar::U8,
            2 => Scalar::U16,
            4 => Scalar::U32,
            _ => Scalar::U64,
        }
    }

    /// `|x|` with the sign bit of `y`. On lavapipe, `x`'s magnitude is `FAbs`, negated by a
    /// select on `y`'s sign bit: its code generator mangled the bit operations on a long
    /// computed `x` in a kernel with a barrier (`f64` `asinh` of 2.5 was 2^-1021 there: the
    /// `AND` with `0x7fff...` and `OR` of the sign of `asinh64`, after an `fmod` loop).
    fn copysign(&mut self, at: Type, x: u32, y: u32) -> R<u32> {
        let s = at.scalar;
        let ut = at.with_scalar(Self::uint_of_size(s.size()));
        let u = self.vty(ut)?;
        let t = self.vty(at)?;
        let sign = 1u64 << (s.bits() - 1);
        if self.t.llvmpipe_float_fixes {
            let yb = self.op(op::BITCAST, u, &[y]);
            let sm = self.const_of(ut, sign)?;
            let sg = self.op(op::BITWISE_AND, u, &[yb, sm]);
            let zu = self.const_of(ut, 0)?;
            let bt = self.b(at)?;
            let neg = self.op(op::I_NOT_EQUAL, bt, &[sg, zu]);
            let ax = self.g1(at, op::GLSL_F_ABS, x)?;
            let nx = self.op(op::F_NEGATE, t, &[ax]);
            return self.sel(at, neg, nx, ax);
        }
        let xb = self.op(op::BITCAST, u, &[x]);
        let yb = self.op(op::BITCAST, u, &[y]);
        let sm = self.const_of(ut, sign)?;
        let mm = self.const_of(ut, sign - 1)?;
        let mag = self.op(op::BITWISE_AND, u, &[xb, mm]);
        let sg = self.op(op::BITWISE_AND, u, &[yb, sm]);
        let r = self.op(op::BITWISE_OR, u, &[mag, sg]);
        Ok(self.op(op::BITCAST, t, &[r]))
    }

    // ---- Memory ----

    /// A 32-bit (or 64-bit) index from an IR index of any integer type.
    fn index(&mut self, index: ExprId) -> R<u32> {
        let it = self.f.exprs.ty(index);
        let x = self.expr(index)?;
        if it.scalar.size() >= 4 {
            return Ok(x);
        }
        let to = if it.scalar.is_signed() {
            Scalar::I32
        } else {
            Scalar::U32
        };
        self.cast(it, to, x)
    }

    /// Pointers to the scalars (one per component) or to the element of `mem[index]`, with
    /// the type each holds in memory; `whole` is true when one pointer covers the element.
    fn pointers(&mut self, mem: Mem, index: ExprId) -> R<(Vec<u32>, Scalar, bool, u32)> {
        let elem = self
            .f
            .mem_elem(mem)
            .ok_or("memory without an element type")?;
        let idx = self.index(index)?;
        match mem {
            Mem::Buffer(p) => {
                let var = self.buffers[&p];
                let ms = Self::mem_scalar(elem.scalar);
                let st = self.scalar_ty(ms)?;
                let pt = self.ptr(op::SC_STORAGE_BUFFER, st);
                let zero = self.u32c(0);
                let mut ptrs = Vec::new();
                if elem.width == 1 {
                    ptrs.push(self.op(op::ACCESS_CHAIN, pt, &[var, zero, idx]));
                } else {
                    let it = self.f.exprs.ty(index);
                    let it = if it.scalar.size() < 4 {
                        Type::U32
                    } else {
                        it.component()
                    };
                    let itt = self.vty(it)?;
                    let w = self.const_of(it, elem.width as u64)?;
                    let base = self.op(op::I_MUL, itt, &[idx, w]);
                    for c in 0..elem.width as u64 {
                        let cc = self.const_of(it, c)?;
                        let i = self.op(op::I_ADD, itt, &[base, cc]);
                        ptrs.push(self.op(op::ACCESS_CHAIN, pt, &[var, zero, i]));
                    }
                }
                Ok((ptrs, ms, false, op::SC_STORAGE_BUFFER))
            }
            Mem::Field(v) => {
                let view = self.f.fields[v].clone();
                let var = self.buffers[&view.buffer];
                let ms = Self::mem_scalar(elem.scalar);
                let st = self.scalar_ty(ms)?;
                let pt = self.ptr(op::SC_STORAGE_BUFFER, st);
                let zero = self.u32c(0);
                let mut chain = vec![var, zero, idx];
                for step in &view.path {
                    let k = match *step {
                        FieldStep::Field(i) | FieldStep::Elem(i) => i,
                    };
                    chain.push(self.u32c(k));
                }
                let mut ptrs = Vec::new();
                if elem.width == 1 {
                    ptrs.push(self.op(op::ACCESS_CHAIN, pt, &chain));
                } else {
                    for c in 0..elem.width as u32 {
                        let mut ch = chain.clone();
                        ch.push(self.u32c(c));
                        ptrs.push(self.op(op::ACCESS_CHAIN, pt, &ch));
                    }
                }
                Ok((ptrs, ms, false, op::SC_STORAGE_BUFFER))
            }
            Mem::Local(l) => {
                let var = self.local_vars[l.index()];
                let et = self.vty(elem)?;
                let pt = self.ptr(op::SC_WORKGROUP, et);
                let p = self.op(op::ACCESS_CHAIN, pt, &[var, idx]);
                Ok((vec![p], elem.scalar, true, op::SC_WORKGROUP))
            }
            Mem::Private(v) => {
                let var = self.private_vars[v.index()];
                if self.f.privates[v].len.is_none() {
                    return Ok((vec![var], elem.scalar, true, op::SC_FUNCTION));
                }
                let et = self.vty(elem)?;
                let pt = self.ptr(op::SC_FUNCTION, et);
                let p = self.op(op::ACCESS_CHAIN, pt, &[var, idx]);
                Ok((vec![p], elem.scalar, true, op::SC_FUNCTION))
            }
        }
    }

    fn load(&mut self, mem: Mem, index: ExprId) -> R<u32> {
        let elem = self.f.mem_elem(mem).ok_or("memory")?;
        let (ptrs, ms, whole, _) = self.pointers(mem, index)?;
        let t = self.vty(elem)?;
        if whole {
            return Ok(self.op(op::LOAD, t, &[ptrs[0]]));
        }
        let mt = self.scalar_ty(ms)?;
        let mut comps = Vec::new();
        for p in ptrs {
            let v = self.op(op::LOAD, mt, &[p]);
            let v = if elem.scalar == Scalar::Bool {
                self.cast(Type::scalar(Scalar::U8), Scalar::Bool, v)?
            } else {
                v
            };
            comps.push(v);
        }
        Ok(if comps.len() == 1 {
            comps[0]
        } else {
            self.op(op::COMPOSITE_CONSTRUCT, t, &comps)
        })
    }

    fn store(&mut self, mem: Mem, index: ExprId, value: u32) -> R<()> {
        let elem = self.f.mem_elem(mem).ok_or("memory")?;
        let (ptrs, _, whole, _) = self.pointers(mem, index)?;
        if whole {
            self.emit(op::STORE, &[ptrs[0], value]);
            return Ok(());
        }
        let ct = self.vty(elem.component())?;
        for (c, p) in ptrs.iter().enumerate() {
            let v = if elem.width > 1 {
                self.op(op::COMPOSITE_EXTRACT, ct, &[value, c as u32])
            } else {
                value
            };
            let v = if elem.scalar == Scalar::Bool {
                self.cast(Type::BOOL, Scalar::U8, v)?
            } else {
                v
            };
            self.emit(op::STORE, &[*p, v]);
        }
        Ok(())
    }

    // ---- Statements ----

    fn block(&mut self, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            if self.terminated {
                break;
            }
            self.stmt(s)?;
        }
        Ok(())
    }

    fn set_value(&mut self, v: ValueId, x: u32) -> R<()> {
        let var = self.value_var(v)?;
        self.emit(op::STORE, &[var, x]);
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Let { value, expr } => {
                let x = self.expr(*expr)?;
                self.set_value(*value, x)?;
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                let x = self.load(*mem, *index)?;
                self.set_value(*value, x)?;
            }
            Stmt::Store {
                mem, index, value, ..
            } => {
                let x = self.expr(*value)?;
                self.store(*mem, *index, x)?;
            }
            Stmt::Atomic {
                result,
                mem,
                index,
                op: aop,
                operand,
                compare,
                order,
                ..
            } => {
                let r = self.atomic(*mem, *index, *aop, *operand, *compare, *order)?;
                if let Some(v) = result {
                    self.set_value(*v, r)?;
                }
            }
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                ..
            } => {
                let elem = self.f.mem_elem(*mem).ok_or("memory")?;
                self.atomic_caps(elem.scalar, None)?;
                let (ptrs, _, _, sc) = self.pointers(*mem, *index)?;
                let t = self.vty(elem)?;
                let (scope, sem) = self.scope_semantics(order.order, order.scope, sc);
                let r = self.op(op::ATOMIC_LOAD, t, &[ptrs[0], scope, sem]);
                self.set_value(*value, r)?;
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(*cond)?;
                let (tl, el, ml) = (self.m.id(), self.m.id(), self.m.id());
                self.emit(op::SELECTION_MERGE, &[ml, 0]);
                let else_target = if otherwise.is_empty() { ml } else { el };
                self.emit(op::BRANCH_CONDITIONAL, &[c, tl, else_target]);
                self.label(tl);
                self.block(then)?;
                let then_ends = self.terminated;
                if !self.terminated {
                    self.branch(ml);
                }
                let mut else_ends = false;
                if !otherwise.is_empty() {
                    self.label(el);
                    self.block(otherwise)?;
                    else_ends = self.terminated;
                    if !self.terminated {
                        self.branch(ml);
                    }
                }
                self.label(ml);
                if then_ends && else_ends {
                    self.emit(op::UNREACHABLE, &[]);
                    self.terminated = true;
                }
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let vt = self.f.values[*var].ty;
                let x0 = self.expr(*start)?;
                self.set_value(*var, x0)?;
                let (header, check, body_l, cont, merge) = (
                    self.m.id(),
                    self.m.id(),
                    self.m.id(),
                    self.m.id(),
                    self.m.id(),
                );
                self.branch(header);
                self.label(header);
                self.emit(op::LOOP_MERGE, &[merge, cont, 0]);
                self.branch(check);
                self.label(check);
                let varp = self.value_var(*var)?;
                let t = self.vty(vt)?;
                let v = self.op(op::LOAD, t, &[varp]);
                let e = self.expr(*end)?;
                let bt = self.m.ty(Ty::Bool);
                let signed = vt.scalar.is_signed();
                let (lt, gt) = if signed {
                    (op::S_LESS_THAN, op::S_GREATER_THAN)
                } else {
                    (op::U_LESS_THAN, op::U_GREATER_THAN)
                };
                let cond = match self.f.exprs.literal(*step) {
                    Some(l) if l.as_i128() > 0 => self.op(lt, bt, &[v, e]),
                    Some(_) => self.op(gt, bt, &[v, e]),
                    None if !signed => self.op(lt, bt, &[v, e]),
                    None => {
                        let st = self.expr(*step)?;
                        let zero = self.const_of(vt, 0)?;
                        let up = self.op(op::S_GREATER_THAN, bt, &[st, zero]);
                        let a = self.op(lt, bt, &[v, e]);
                        let b = self.op(gt, bt, &[v, e]);
                        self.op(op::SELECT, bt, &[up, a, b])
                    }
                };
                self.emit(op::BRANCH_CONDITIONAL, &[cond, body_l, merge]);
                self.loop_body(*id, body_l, cont, merge, body)?;
                // The continue block: the increment.
                self.label(cont);
                let v = self.op(op::LOAD, t, &[varp]);
                let st = self.expr(*step)?;
                let n = self.op(op::I_ADD, t, &[v, st]);
                self.emit(op::STORE, &[varp, n]);
                self.branch(header);
                self.after_loop(merge)?;
            }
            Stmt::Loop { id, body } => {
                let (header, body_l, cont, merge) =
                    (self.m.id(), self.m.id(), self.m.id(), self.m.id());
                self.branch(header);
                self.label(header);
                self.emit(op::LOOP_MERGE, &[merge, cont, 0]);
                self.branch(body_l);
                self.loop_body(*id, body_l, cont, merge, body)?;
                self.label(cont);
                self.branch(header);
                self.after_loop(merge)?;
            }
            Stmt::Break(l) | Stmt::Continue(l) => {
                let is_break = matches!(s, Stmt::Break(_));
                let depth = self
                    .loops
                    .iter()
                    .position(|f| f.id == *l)
                    .ok_or("break outside its loop")?;
                let inner = self.loops.len() - 1;
                if depth == inner {
                    let to = if is_break {
                        self.loops[inner].merge
                    } else {
                        self.loops[inner].cont
                    };
                    self.branch(to);
                } else {
                    // Through the jump variable: leave every loop inside the target.
                    let code = 2 * depth as u32 + if is_break { 1 } else { 2 };
                    let jv = self.jump_var();
                    let c = self.u32c(code);
                    self.emit(op::STORE, &[jv, c]);
                    for f in &mut self.loops[depth + 1..] {
                        f.jumpy = true;
                    }
                    let to = self.loops[inner].merge;
                    self.branch(to);
                }
            }
            Stmt::Return => {
                self.emit(op::RETURN, &[]);
                self.terminated = true;
            }
            Stmt::Barrier(fence) => {
                let mut sem = op::SEM_ACQUIRE_RELEASE | op::SEM_WORKGROUP_MEMORY;
                if fence.global {
                    sem |= op::SEM_UNIFORM_MEMORY;
                }
                let wg = self.u32c(op::SCOPE_WORKGROUP);
                let semc = self.u32c(sem);
                self.emit(op::CONTROL_BARRIER, &[wg, wg, semc]);
            }
            Stmt::MemFence { .. } if self.t.relaxed_atomic_semantics => self.fence_by_atomic(),
            Stmt::MemFence { spaces, order } => {
                let mut sem = Self::order_bits(order.order);
                if spaces.local {
                    sem |= op::SEM_WORKGROUP_MEMORY;
                }
                if spaces.global {
                    sem |= op::SEM_UNIFORM_MEMORY;
                }
                let scope = self.u32c(match order.scope {
                    MemScope::WorkGroup => op::SCOPE_WORKGROUP,
                    MemScope::Device => op::SCOPE_DEVICE,
                });
                let semc = self.u32c(sem);
                self.emit(op::MEMORY_BARRIER, &[scope, semc]);
            }
            Stmt::Group {
                value,
                op: gop,
                scope,
                arg,
                source,
            } => {
                let r = match scope {
                    GroupScope::WorkGroup => self.work_group(*gop, *arg, *source)?,
                    GroupScope::SubGroup => self.sub_group(*gop, *arg, *source)?,
                };
                self.set_value(*value, r)?;
            }
        }
        Ok(())
    }

    fn jump_var(&mut self) -> u32 {
        if let Some(v) = self.jump_var {
            return v;
        }
        let u = self.u32_ty();
        let v = self.var(op::SC_FUNCTION, u);
        self.m.name(v, "jump");
        // Zeroed at the start of the function.
        let zero = self.u32c(0);
        inst(&mut self.m.var_inits, op::STORE, &[v, zero]);
        self.jump_var = Some(v);
        v
    }

    fn loop_body(
        &mut self,
        id: LoopId,
        body_l: u32,
        cont: u32,
        merge: u32,
        body: &[Stmt],
    ) -> R<()> {
        self.loops.push(LoopFrame {
            id,
            merge,
            cont,
            jumpy: false,
        });
        self.label(body_l);
        self.block(body)?;
        if !self.terminated {
            self.branch(cont);
        }
        Ok(())
    }

    /// The merge block of a loop; where a jump to an outer loop passed through it, the
    /// dispatch to that loop's merge or continue block.
    fn after_loop(&mut self, merge: u32) -> R<()> {
        let frame = self.loops.pop().expect("loop frame");
        self.label(merge);
        if !frame.jumpy {
            return Ok(());
        }
        let depth = self.loops.len() - 1; // the enclosing loop
        let jv = self.jump_var();
        let u = self.u32_ty();
        let bt = self.m.ty(Ty::Bool);
        let j = self.op(op::LOAD, u, &[jv]);
        let zero = self.u32c(0);
        let pending = self.op(op::I_NOT_EQUAL, bt, &[j, zero]);
        let (taken, rest) = (self.m.id(), self.m.id());
        self.emit(op::SELECTION_MERGE, &[rest, 0]);
        self.emit(op::BRANCH_CONDITIONAL, &[pending, taken, rest]);
        self.label(taken);
        let brk = self.u32c(2 * depth as u32 + 1);
        let cnt = self.u32c(2 * depth as u32 + 2);
        let is_brk = self.op(op::I_EQUAL, bt, &[j, brk]);
        let is_cnt = self.op(op::I_EQUAL, bt, &[j, cnt]);
        let mine = self.op(op::LOGICAL_OR, bt, &[is_brk, is_cnt]);
        let next = self.op(op::SELECT, u, &[mine, zero, j]);
        self.emit(op::STORE, &[jv, next]);
        let (to_cont, to_merge, inner_merge) = (self.m.id(), self.m.id(), self.m.id());
        self.emit(op::SELECTION_MERGE, &[inner_merge, 0]);
        self.emit(op::BRANCH_CONDITIONAL, &[is_cnt, to_cont, to_merge]);
        self.label(to_cont);
        let c = self.loops[depth].cont;
        self.branch(c);
        self.label(to_merge);
        let m = self.loops[depth].merge;
        self.branch(m);
        self.label(inner_merge);
        self.emit(op::UNREACHABLE, &[]);
        self.label(rest);
        // A jump that passes on to a loop further out marks this one.
        let _ = frame;
        Ok(())
    }

    // ---- Atomics ----

    fn order_bits(o: MemOrder) -> u32 {
        match o {
            MemOrder::Relaxed => 0,
            MemOrder::Acquire => op::SEM_ACQUIRE,
            MemOrder::Release => op::SEM_RELEASE,
            MemOrder::AcqRel | MemOrder::SeqCst => op::SEM_ACQUIRE_RELEASE,
        }
    }

    fn scope_semantics(&mut self, o: MemOrder, scope: MemScope, sc: u32) -> (u32, u32) {
        let o = if self.t.relaxed_atomic_semantics {
            MemOrder::Relaxed
        } else {
            o
        };
        let mut sem = Self::order_bits(o);
        if sem != 0 {
            sem |= if sc == op::SC_WORKGROUP {
                op::SEM_WORKGROUP_MEMORY
            } else {
                op::SEM_UNIFORM_MEMORY
            };
        }
        let s = match scope {
            MemScope::WorkGroup => op::SCOPE_WORKGROUP,
            MemScope::Device if sc == op::SC_WORKGROUP => op::SCOPE_WORKGROUP,
            MemScope::Device => op::SCOPE_DEVICE,
        };
        (self.u32c(s), self.u32c(sem))
    }

    fn atomic_caps(&mut self, s: Scalar, aop: Option<AtomicOp>) -> R<()> {
        if s.size() == 8 && s.is_int() {
            if !self.t.int64_atomics {
                return Err("64-bit integer atomics (shaderBufferInt64Atomics)".into());
            }
            self.m.cap(op::CAP_INT64_ATOMICS);
        }
        if s.is_float() {
            match aop {
                Some(AtomicOp::Add) | Some(AtomicOp::Sub) => {
                    let (ok, cap) = if s == Scalar::F64 {
                        (self.t.float64_atomic_add, op::CAP_ATOMIC_FLOAT64_ADD)
                    } else {
                        (self.t.float32_atomic_add, op::CAP_ATOMIC_FLOAT32_ADD)
                    };
                    if !ok {
                        return Err(format!(
                            "{s} atomic add (shaderBuffer{}AtomicAdd)",
                            if s == Scalar::F64 {
                                "Float64"
                            } else {
                                "Float32"
                            }
                        ));
                    }
                    self.m.cap(cap);
                    self.m.extensions.insert("SPV_EXT_shader_atomic_float_add");
                }
                Some(AtomicOp::Min) | Some(AtomicOp::Max) => {
                    let (ok, cap) = if s == Scalar::F64 {
                        (
                            self.t.float64_atomic_min_max,
                            op::CAP_ATOMIC_FLOAT64_MIN_MAX,
                        )
                    } else {
                        (
                            self.t.float32_atomic_min_max,
                            op::CAP_ATOMIC_FLOAT32_MIN_MAX,
                        )
                    };
                    if !ok {
                        return Err(format!(
                            "{s} atomic min/max (shaderBuffer{}AtomicMinMax)",
                            if s == Scalar::F64 {
                                "Float64"
                            } else {
                                "Float32"
                            }
                        ));
                    }
                    self.m.cap(cap);
                    self.m
                        .extensions
                        .insert("SPV_EXT_shader_atomic_float_min_max");
                }
                Some(AtomicOp::Exchange) | None => {}
                Some(o) => return Err(format!("{} on {s}", o.name())),
            }
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        mem: Mem,
        index: ExprId,
        aop: AtomicOp,
        operand: ExprId,
        compare: Option<ExprId>,
        order: ir::AtomicOrder,
    ) -> R<u32> {
        let elem = self.f.mem_elem(mem).ok_or("memory")?;
        let s = elem.scalar;
        self.atomic_caps(s, Some(aop))?;
        let x = self.expr(operand)?;
        let (ptrs, _, _, sc) = self.pointers(mem, index)?;
        let t = self.vty(elem)?;
        let (scope, sem) = self.scope_semantics(order.order, order.scope, sc);
        let p = ptrs[0];
        Ok(match aop {
            AtomicOp::CompareExchange => {
                let c = self.expr(compare.ok_or("compare-exchange without its expected value")?)?;
                let relaxed = self.u32c(if self.t.relaxed_atomic_semantics {
                    0
                } else if order.order == MemOrder::Release
                    || order.order == MemOrder::AcqRel
                    || order.order == MemOrder::SeqCst
                {
                    // The failure ordering may not release.
                    let bits = Self::order_bits(MemOrder::Acquire);
                    bits | if sc == op::SC_WORKGROUP {
                        op::SEM_WORKGROUP_MEMORY
                    } else {
                        op::SEM_UNIFORM_MEMORY
                    }
                } else if order.order == MemOrder::Acquire {
                    op::SEM_ACQUIRE
                        | if sc == op::SC_WORKGROUP {
                            op::SEM_WORKGROUP_MEMORY
                        } else {
                            op::SEM_UNIFORM_MEMORY
                        }
                } else {
                    0
                });
                self.op(
                    op::ATOMIC_COMPARE_EXCHANGE,
                    t,
                    &[p, scope, sem, relaxed, x, c],
                )
            }
            AtomicOp::Add | AtomicOp::Sub if s.is_float() => {
                let x = if aop == AtomicOp::Sub {
                    self.fop(op::F_NEGATE, t, &[x])
                } else {
                    x
                };
                self.op(op::ATOMIC_F_ADD_EXT, t, &[p, scope, sem, x])
            }
            AtomicOp::Min | AtomicOp::Max if s.is_float() => {
                let opc = if aop == AtomicOp::Min {
                    op::ATOMIC_F_MIN_EXT
                } else {
                    op::ATOMIC_F_MAX_EXT
                };
                self.op(opc, t, &[p, scope, sem, x])
            }
            _ => {
                let opc = match aop {
                    AtomicOp::Add => op::ATOMIC_I_ADD,
                    AtomicOp::Sub => op::ATOMIC_I_SUB,
                    AtomicOp::Min if s.is_signed() => op::ATOMIC_S_MIN,
                    AtomicOp::Min => op::ATOMIC_U_MIN,
                    AtomicOp::Max if s.is_signed() => op::ATOMIC_S_MAX,
                    AtomicOp::Max => op::ATOMIC_U_MAX,
                    AtomicOp::And => op::ATOMIC_AND,
                    AtomicOp::Or => op::ATOMIC_OR,
                    AtomicOp::Xor => op::ATOMIC_XOR,
                    _ => op::ATOMIC_EXCHANGE,
                };
                self.op(opc, t, &[p, scope, sem, x])
            }
        })
    }

    // ---- Collectives ----

    /// The workgroup scratch array of scalar `s`: one element per work-item and one more.
    fn scratch(&mut self, s: Scalar) -> R<u32> {
        if let Some(&v) = self.scratch.get(&s) {
            return Ok(v);
        }
        let u = self.u32_ty();
        let xy = self.m.id();
        let [x, y, z] = self.wg_size;
        inst(
            &mut self.m.globals,
            op::SPEC_CONSTANT_OP,
            &[u, xy, op::I_MUL, x, y],
        );
        let xyz = self.m.id();
        inst(
            &mut self.m.globals,
            op::SPEC_CONSTANT_OP,
            &[u, xyz, op::I_MUL, xy, z],
        );
        let one = self.u32c(1);
        let n = self.m.id();
        inst(
            &mut self.m.globals,
            op::SPEC_CONSTANT_OP,
            &[u, n, op::I_ADD, xyz, one],
        );
        let et = self.scalar_ty(s)?;
        let at = self.m.ty(Ty::Array(et, n, None));
        let v = self.var(op::SC_WORKGROUP, at);
        self.m.name(v, &format!("scratch_{s}"));
        self.scratch.insert(s, v);
        self.scratch_bytes += s.size() as u32;
        Ok(v)
    }

    /// A fence where the target's atomics are all sequentially consistent (lavapipe, see
    /// [`SpirvTarget::relaxed_atomic_semantics`]): a relaxed atomic add of 0 to a word of
    /// work-group memory, which llvmpipe compiles to a sequentially consistent
    /// read-modify-write that no memory access moves across. lavapipe's `OpMemoryBarrier`
    /// under divergent control flow (a fence in a loop whose trip count differs between
    /// work-items) lost other work-items' later stores.
    fn fence_by_atomic(&mut self) {
        let u = self.u32_ty();
        let word = match self.fence_word {
            Some(w) => w,
            None => {
                let w = self.var(op::SC_WORKGROUP, u);
                self.m.name(w, "fence_word");
                self.fixed_shared += 4;
                self.fence_word = Some(w);
                w
            }
        };
        let scope = self.u32c(op::SCOPE_WORKGROUP);
        let relaxed = self.u32c(0);
        let zero = self.u32c(0);
        self.op(op::ATOMIC_I_ADD, u, &[word, scope, relaxed, zero]);
    }

    fn barrier_local(&mut self) {
        let wg = self.u32c(op::SCOPE_WORKGROUP);
        let sem = self.u32c(op::SEM_ACQUIRE_RELEASE | op::SEM_WORKGROUP_MEMORY);
        self.emit(op::CONTROL_BARRIER, &[wg, wg, sem]);
    }

    /// The identity of a fold and the combination, on scratch scalar `s`.
    fn comb(&mut self, gop: GroupOp, s: Scalar, a: u32, b: u32) -> R<u32> {
        let t = self.scalar_ty(s)?;
        Ok(match gop {
            GroupOp::Any => self.op(op::BITWISE_OR, t, &[a, b]),
            GroupOp::All => self.op(op::BITWISE_AND, t, &[a, b]),
            GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => {
                if s.is_float() {
                    self.fop(op::F_ADD, t, &[a, b])
                } else {
                    self.op(op::I_ADD, t, &[a, b])
                }
            }
            GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => {
                let f = if s.is_float() {
                    op::GLSL_N_MIN
                } else if s.is_signed() {
                    op::GLSL_S_MIN
                } else {
                    op::GLSL_U_MIN
                };
                self.glsl(t, f, &[a, b])
            }
            _ => {
                let f = if s.is_float() {
                    op::GLSL_N_MAX
                } else if s.is_signed() {
                    op::GLSL_S_MAX
                } else {
                    op::GLSL_U_MAX
                };
                self.glsl(t, f, &[a, b])
            }
        })
    }

    fn identity(&mut self, gop: GroupOp, s: Scalar) -> R<u32> {
        let ty = Type::scalar(s);
        let is_min = matches!(
            gop,
            GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin
        );
        let is_max = matches!(
            gop,
            GroupOp::ReduceMax | GroupOp::ScanInclusiveMax | GroupOp::ScanExclusiveMax
        );
        if gop == GroupOp::All {
            return self.const_of(ty, 1);
        }
        if !(is_min || is_max) {
            return if s.is_float() {
                self.float_const(ty, 0.0)
            } else {
                self.const_of(ty, 0)
            };
        }
        if s.is_float() {
            return self.float_const(
                ty,
                if is_min {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                },
            );
        }
        let bits = s.bits();
        let all = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let v = match (is_min, s.is_signed()) {
            (true, true) => all >> 1,
            (true, false) => all,
            (false, true) => 1u64 << (bits - 1),
            (false, false) => 0,
        };
        self.const_of(ty, v)
    }

    /// A work-group broadcast of scalar `x` (of IR scalar `vs`) from work-item `src`.
    fn broadcast_scalar(&mut self, vs: Scalar, x: u32, src: u32) -> R<u32> {
        let s = Self::mem_scalar(vs);
        let sc = self.scratch(s)?;
        let st = self.scalar_ty(s)?;
        let pt = self.ptr(op::SC_WORKGROUP, st);
        let x = if vs == Scalar::Bool {
            self.cast(Type::BOOL, Scalar::U8, x)?
        } else {
            x
        };
        let lid = self.linear(op::BI_LOCAL_INVOCATION_ID, true);
        let mine = self.op(op::ACCESS_CHAIN, pt, &[sc, lid]);
        self.emit(op::STORE, &[mine, x]);
        self.barrier_local();
        let p = self.op(op::ACCESS_CHAIN, pt, &[sc, src]);
        let r = self.op(op::LOAD, st, &[p]);
        self.barrier_local();
        if vs == Scalar::Bool {
            self.cast(Type::scalar(Scalar::U8), Scalar::Bool, r)
        } else {
            Ok(r)
        }
    }

    /// A work-group collective: the C writer's serial fold in workgroup scratch.
    fn work_group(&mut self, gop: GroupOp, arg: ExprId, source: Option<ExprId>) -> R<u32> {
        let at = self.f.exprs.ty(arg);
        if at.width != 1 && gop == GroupOp::Broadcast {
            // Component by component through the scalar scratch.
            let x = self.expr(arg)?;
            let src = self.index(source.ok_or("broadcast without its source")?)?;
            let ct = self.vty(at.component())?;
            let mut parts = Vec::new();
            for c in 0..at.width as u32 {
                let xc = self.op(op::COMPOSITE_EXTRACT, ct, &[x, c]);
                parts.push(self.broadcast_scalar(at.scalar, xc, src)?);
            }
            let t = self.vty(at)?;
            return Ok(self.op(op::COMPOSITE_CONSTRUCT, t, &parts));
        }
        if at.width != 1 {
            return Err(format!("{} of a vector", gop.name(GroupScope::WorkGroup)));
        }
        if gop == GroupOp::Broadcast {
            let x = self.expr(arg)?;
            let src = self.index(source.ok_or("broadcast without its source")?)?;
            return self.broadcast_scalar(at.scalar, x, src);
        }
        let vs = at.scalar;
        let s = Self::mem_scalar(vs);
        let sc = self.scratch(s)?;
        let st = self.scalar_ty(s)?;
        let pt = self.ptr(op::SC_WORKGROUP, st);
        let u = self.u32_ty();
        let bt = self.m.ty(Ty::Bool);
        let x = self.expr(arg)?;
        let x = if vs == Scalar::Bool {
            self.cast(Type::BOOL, Scalar::U8, x)?
        } else {
            x
        };
        let lid = self.linear(op::BI_LOCAL_INVOCATION_ID, true);
        let mine = self.op(op::ACCESS_CHAIN, pt, &[sc, lid]);
        self.emit(op::STORE, &[mine, x]);
        self.barrier_local();
        if gop == GroupOp::Broadcast {
            let src = self.index(source.ok_or("broadcast without its source")?)?;
            let p = self.op(op::ACCESS_CHAIN, pt, &[sc, src]);
            let r = self.op(op::LOAD, st, &[p]);
            self.barrier_local();
            return if vs == Scalar::Bool {
                self.cast(Type::scalar(Scalar::U8), Scalar::Bool, r)
            } else {
                Ok(r)
            };
        }
        if !(gop.is_fold() || gop == GroupOp::Any || gop == GroupOp::All) {
            return Err(format!(
                "{} (not a work-group collective)",
                gop.name(GroupScope::WorkGroup)
            ));
        }
        // Work-item 0 folds in local-id order, writing the scan in place and the total last.
        let size = self.group_size();
        let zero = self.u32c(0);
        let first = self.op(op::I_EQUAL, bt, &[lid, zero]);
        let (then_l, merge_l) = (self.m.id(), self.m.id());
        self.emit(op::SELECTION_MERGE, &[merge_l, 0]);
        self.emit(op::BRANCH_CONDITIONAL, &[first, then_l, merge_l]);
        self.label(then_l);
        let acc = self.var(op::SC_FUNCTION, st);
        let k = self.var(op::SC_FUNCTION, u);
        let id = self.identity(gop, s)?;
        self.emit(op::STORE, &[acc, id]);
        self.emit(op::STORE, &[k, zero]);
        let (header, check, body, cont, merge) = (
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
        );
        self.branch(header);
        self.label(header);
        self.emit(op::LOOP_MERGE, &[merge, cont, 0]);
        self.branch(check);
        self.label(check);
        let kv = self.op(op::LOAD, u, &[k]);
        let size2 = self.group_size();
        let more = self.op(op::U_LESS_THAN, bt, &[kv, size2]);
        self.emit(op::BRANCH_CONDITIONAL, &[more, body, merge]);
        self.label(body);
        let kv = self.op(op::LOAD, u, &[k]);
        let pk = self.op(op::ACCESS_CHAIN, pt, &[sc, kv]);
        let v = self.op(op::LOAD, st, &[pk]);
        let a = self.op(op::LOAD, st, &[acc]);
        if gop.is_exclusive() {
            self.emit(op::STORE, &[pk, a]);
        }
        let n = self.comb(gop, s, a, v)?;
        self.emit(op::STORE, &[acc, n]);
        let scan = gop.is_fold() && !gop.is_reduce();
        if scan && !gop.is_exclusive() {
            self.emit(op::STORE, &[pk, n]);
        }
        self.branch(cont);
        self.label(cont);
        let kv = self.op(op::LOAD, u, &[k]);
        let one = self.u32c(1);
        let k1 = self.op(op::I_ADD, u, &[kv, one]);
        self.emit(op::STORE, &[k, k1]);
        self.branch(header);
        self.label(merge);
        let total = self.op(op::LOAD, st, &[acc]);
        let size3 = self.group_size();
        let last = self.op(op::ACCESS_CHAIN, pt, &[sc, size3]);
        self.emit(op::STORE, &[last, total]);
        self.branch(merge_l);
        self.label(merge_l);
        let _ = size;
        self.barrier_local();
        let at_idx = if scan {
            self.linear(op::BI_LOCAL_INVOCATION_ID, true)
        } else {
            self.group_size()
        };
        let p = self.op(op::ACCESS_CHAIN, pt, &[sc, at_idx]);
        let r = self.op(op::LOAD, st, &[p]);
        self.barrier_local();
        if vs == Scalar::Bool {
            self.cast(Type::scalar(Scalar::U8), Scalar::Bool, r)
        } else {
            Ok(r)
        }
    }

    fn need_subgroup(&mut self, ok: bool, what: &str, cap: u32) -> R<()> {
        if !ok {
            return Err(format!(
                "sub-group {what} operations, which the device lacks"
            ));
        }
        if !self.t.subgroup_basic {
            return Err("sub-group operations, which the device lacks".into());
        }
        self.m.cap(op::CAP_GROUP_NON_UNIFORM);
        self.m.cap(cap);
        Ok(())
    }

    /// A sub-group collective: `OpGroupNonUniform*` (the IR's sub-groups are the device's,
    /// see the module docs of `spirv`).
    fn sub_group(&mut self, gop: GroupOp, arg: ExprId, source: Option<ExprId>) -> R<u32> {
        let at = self.f.exprs.ty(arg);
        let x = self.expr(arg)?;
        let t = self.vty(gop.result_type(at))?;
        let sgs = self.u32c(op::SCOPE_SUBGROUP);
        let u = self.u32_ty();
        let bt = self.m.ty(Ty::Bool);
        let s = at.scalar;
        if gop.takes_source() {
            self.need_subgroup(
                self.t.subgroup_shuffle,
                "shuffle",
                op::CAP_GROUP_NON_UNIFORM_SHUFFLE,
            )?;
            let src = self.expr(source.ok_or("a shuffle without its lane")?)?;
            let st = self.f.exprs.ty(source.expect("checked"));
            let src = self.cast(st, Scalar::U32, src)?;
            let lane = self.builtin(Builtin::SubGroupLocalId);
            let size = self.builtin(Builtin::SubGroupSize);
            let from = match gop {
                GroupOp::Broadcast | GroupOp::Shuffle => src,
                GroupOp::ShuffleXor => self.op(op::BITWISE_XOR, u, &[lane, src]),
                GroupOp::ShuffleUp => self.op(op::I_SUB, u, &[lane, src]),
                _ => self.op(op::I_ADD, u, &[lane, src]),
            };
            // Outside the sub-group (a wrapped `lane - delta` too): the work-item's own value.
            let inside = self.op(op::U_LESS_THAN, bt, &[from, size]);
            let from = if gop == GroupOp::ShuffleDown {
                // `lane + delta` wrapped past u32::MAX: outside too.
                let ok = self.op(op::U_GREATER_THAN_EQUAL, bt, &[from, lane]);
                let both = self.op(op::LOGICAL_AND, bt, &[ok, inside]);
                self.op(op::SELECT, u, &[both, from, lane])
            } else if gop == GroupOp::ShuffleUp {
                let ok = self.op(op::U_GREATER_THAN_EQUAL, bt, &[lane, src]);
                let both = self.op(op::LOGICAL_AND, bt, &[ok, inside]);
                self.op(op::SELECT, u, &[both, from, lane])
            } else {
                self.op(op::SELECT, u, &[inside, from, lane])
            };
            if s == Scalar::Bool {
                let wt = at.with_scalar(Scalar::U32);
                let w = self.vty(wt)?;
                let xi = self.cast(at, Scalar::U32, x)?;
                let r = self.op(op::GROUP_NON_UNIFORM_SHUFFLE, w, &[sgs, xi, from]);
                return self.cast(wt, Scalar::Bool, r);
            }
            return Ok(self.op(op::GROUP_NON_UNIFORM_SHUFFLE, t, &[sgs, x, from]));
        }
        match gop {
            GroupOp::Any | GroupOp::All => {
                self.need_subgroup(self.t.subgroup_vote, "vote", op::CAP_GROUP_NON_UNIFORM_VOTE)?;
                let opc = if gop == GroupOp::Any {
                    op::GROUP_NON_UNIFORM_ANY
                } else {
                    op::GROUP_NON_UNIFORM_ALL
                };
                Ok(self.op(opc, t, &[sgs, x]))
            }
            GroupOp::Ballot => {
                self.need_subgroup(
                    self.t.subgroup_ballot,
                    "ballot",
                    op::CAP_GROUP_NON_UNIFORM_BALLOT,
                )?;
                let v4 = self.m.ty(Ty::Vector(u, 4));
                let b = self.op(op::GROUP_NON_UNIFORM_BALLOT, v4, &[sgs, x]);
                Ok(self.op(op::COMPOSITE_EXTRACT, u, &[b, 0]))
            }
            _ => {
                self.need_subgroup(
                    self.t.subgroup_arithmetic,
                    "arithmetic",
                    op::CAP_GROUP_NON_UNIFORM_ARITHMETIC,
                )?;
                let kind = if gop.is_reduce() {
                    op::GROUP_REDUCE
                } else if gop.is_exclusive() {
                    op::GROUP_EXCLUSIVE_SCAN
                } else {
                    op::GROUP_INCLUSIVE_SCAN
                };
                let (f, i, u_) = match gop {
                    GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => (
                        op::GROUP_NON_UNIFORM_F_ADD,
                        op::GROUP_NON_UNIFORM_I_ADD,
                        op::GROUP_NON_UNIFORM_I_ADD,
                    ),
                    GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => (
                        op::GROUP_NON_UNIFORM_F_MIN,
                        op::GROUP_NON_UNIFORM_S_MIN,
                        op::GROUP_NON_UNIFORM_U_MIN,
                    ),
                    _ => (
                        op::GROUP_NON_UNIFORM_F_MAX,
                        op::GROUP_NON_UNIFORM_S_MAX,
                        op::GROUP_NON_UNIFORM_U_MAX,
                    ),
                };
                let opc = if s.is_float() {
                    f
                } else if s.is_signed() {
                    i
                } else {
                    u_
                };
                if s.is_float() && opc != op::GROUP_NON_UNIFORM_F_ADD {
                    // The operand combined with the identity first, as the evaluator's fold
                    // does: a NaN operand vanishes.
                    let id = self.identity(gop, s)?;
                    let x = self.comb(gop, s, id, x)?;
                    return Ok(self.op(opc, t, &[sgs, kind, x]));
                }
                Ok(self.op(opc, t, &[sgs, kind, x]))
            }
        }
    }
}

#[allow(dead_code)]
fn hidden_role_name(r: &HiddenRole) -> &'static str {
    r.name()
}
