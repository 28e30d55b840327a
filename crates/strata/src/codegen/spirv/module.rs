//! The SPIR-V binary: instruction encoding, the module's sections in the order the
//! specification requires, and the interning of types and constants (one id per type or
//! constant, as SPIR-V requires for non-aggregate types).
//!
//! The writer ([`super::lower`]) asks this builder for ids and appends instructions to its
//! sections; [`Module::finish`] lays the sections out as one word stream.

use super::op;
use std::collections::{BTreeSet, HashMap};

/// A type, as the builder interns it. Integers are declared unsigned (signedness 0): the
/// writer picks signed or unsigned instructions from the IR's types, so `i32` and `u32` are
/// one SPIR-V type and never need bitcasts between them.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) enum Ty {
    Void,
    Bool,
    Int(u32),
    Float(u32),
    Vector(u32, u32),
    /// Element type id, length constant id, array stride (explicit layout, buffers only).
    Array(u32, u32, Option<u32>),
    /// Element type id and array stride.
    RuntimeArray(u32, u32),
    /// Member type ids, and a tag keeping distinct structs apart (their decorations differ).
    Struct(Vec<u32>, u32),
    Pointer(u32, u32),
    Function(u32, Vec<u32>),
}

/// A SPIR-V module under construction.
#[derive(Default)]
pub(super) struct Module {
    next_id: u32,
    pub capabilities: BTreeSet<u32>,
    pub extensions: BTreeSet<&'static str>,
    pub glsl: u32,
    pub entry: Vec<u32>,
    pub modes: Vec<u32>,
    pub names: Vec<u32>,
    pub annotations: Vec<u32>,
    /// Types, constants and global variables, in dependency order.
    pub globals: Vec<u32>,
    /// `OpFunction` and the first `OpLabel` of the entry function.
    pub fn_head: Vec<u32>,
    /// The `OpVariable`s of the entry function (they must open its first block).
    pub vars: Vec<u32>,
    /// Stores that initialize variables, after the variables.
    pub var_inits: Vec<u32>,
    /// The entry function's blocks after its variables.
    pub body: Vec<u32>,
    types: HashMap<Ty, u32>,
    consts: HashMap<(u32, Vec<u32>), u32>,
    bools: [u32; 2],
}

/// Appends one instruction.
pub(super) fn inst(out: &mut Vec<u32>, opcode: u32, operands: &[u32]) {
    out.push(((operands.len() as u32 + 1) << 16) | opcode);
    out.extend_from_slice(operands);
}

/// A literal string's words: UTF-8, NUL-terminated, padded with NULs to a word.
pub(super) fn string_words(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl Module {
    pub fn new() -> Module {
        let mut m = Module {
            next_id: 1,
            ..Default::default()
        };
        m.glsl = m.id();
        m
    }

    /// A fresh id.
    pub fn id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub fn cap(&mut self, c: u32) {
        self.capabilities.insert(c);
    }

    pub fn name(&mut self, id: u32, name: &str) {
        let mut ops = vec![id];
        ops.extend(string_words(name));
        inst(&mut self.names, op::NAME, &ops);
    }

    pub fn decorate(&mut self, id: u32, decoration: u32, extra: &[u32]) {
        let mut ops = vec![id, decoration];
        ops.extend_from_slice(extra);
        inst(&mut self.annotations, op::DECORATE, &ops);
    }

    pub fn member_decorate(&mut self, id: u32, member: u32, decoration: u32, extra: &[u32]) {
        let mut ops = vec![id, member, decoration];
        ops.extend_from_slice(extra);
        inst(&mut self.annotations, op::MEMBER_DECORATE, &ops);
    }

    /// The id of type `t`, declared on first use.
    pub fn ty(&mut self, t: Ty) -> u32 {
        if let Some(&id) = self.types.get(&t) {
            return id;
        }
        let id = self.id();
        match &t {
            Ty::Void => inst(&mut self.globals, op::TYPE_VOID, &[id]),
            Ty::Bool => inst(&mut self.globals, op::TYPE_BOOL, &[id]),
            Ty::Int(bits) => inst(&mut self.globals, op::TYPE_INT, &[id, *bits, 0]),
            Ty::Float(bits) => inst(&mut self.globals, op::TYPE_FLOAT, &[id, *bits]),
            Ty::Vector(c, n) => inst(&mut self.globals, op::TYPE_VECTOR, &[id, *c, *n]),
            Ty::Array(e, len, stride) => {
                inst(&mut self.globals, op::TYPE_ARRAY, &[id, *e, *len]);
                if let Some(s) = stride {
                    self.decorate(id, op::DEC_ARRAY_STRIDE, &[*s]);
                }
            }
            Ty::RuntimeArray(e, stride) => {
                inst(&mut self.globals, op::TYPE_RUNTIME_ARRAY, &[id, *e]);
                self.decorate(id, op::DEC_ARRAY_STRIDE, &[*stride]);
            }
            Ty::Struct(members, _) => {
                let mut ops = vec![id];
                ops.extend_from_slice(members);
                inst(&mut self.globals, op::TYPE_STRUCT, &ops);
            }
            Ty::Pointer(sc, t) => inst(&mut self.globals, op::TYPE_POINTER, &[id, *sc, *t]),
            Ty::Function(r, ps) => {
                let mut ops = vec![id, *r];
                ops.extend_from_slice(ps);
                inst(&mut self.globals, op::TYPE_FUNCTION, &ops);
            }
        }
        self.types.insert(t, id);
        id
    }

    /// A constant of scalar type `ty` with the given literal words.
    pub fn constant(&mut self, ty: u32, words: &[u32]) -> u32 {
        let key = (ty, words.to_vec());
        if let Some(&id) = self.consts.get(&key) {
            return id;
        }
        let id = self.id();
        let mut ops = vec![ty, id];
        ops.extend_from_slice(words);
        inst(&mut self.globals, op::CONSTANT, &ops);
        self.consts.insert(key, id);
        id
    }

    /// A composite constant (interned with a marker word so it never meets a scalar's key).
    pub fn constant_composite(&mut self, ty: u32, parts: &[u32]) -> u32 {
        let mut key_words = vec![u32::MAX];
        key_words.extend_from_slice(parts);
        let key = (ty, key_words);
        if let Some(&id) = self.consts.get(&key) {
            return id;
        }
        let id = self.id();
        let mut ops = vec![ty, id];
        ops.extend_from_slice(parts);
        inst(&mut self.globals, op::CONSTANT_COMPOSITE, &ops);
        self.consts.insert(key, id);
        id
    }

    pub fn bool_const(&mut self, v: bool) -> u32 {
        let k = v as usize;
        if self.bools[k] == 0 {
            let t = self.ty(Ty::Bool);
            let id = self.id();
            let opcode = if v {
                op::CONSTANT_TRUE
            } else {
                op::CONSTANT_FALSE
            };
            inst(&mut self.globals, opcode, &[t, id]);
            self.bools[k] = id;
        }
        self.bools[k]
    }

    /// The whole module as words.
    pub fn finish(self, version: (u8, u8)) -> Vec<u32> {
        let mut w = vec![
            0x0723_0203,
            ((version.0 as u32) << 16) | ((version.1 as u32) << 8),
            0, // generator: unregistered
            self.next_id,
            0,
        ];
        for c in &self.capabilities {
            inst(&mut w, op::CAPABILITY, &[*c]);
        }
        for e in &self.extensions {
            inst(&mut w, op::EXTENSION, &string_words(e));
        }
        let mut ops = vec![self.glsl];
        ops.extend(string_words("GLSL.std.450"));
        inst(&mut w, op::EXT_INST_IMPORT, &ops);
        inst(&mut w, op::MEMORY_MODEL, &[0, 1]);
        w.extend(&self.entry);
        w.extend(&self.modes);
        w.extend(&self.names);
        w.extend(&self.annotations);
        w.extend(&self.globals);
        w.extend(&self.fn_head);
        w.extend(&self.vars);
        w.extend(&self.var_inits);
        w.extend(&self.body);
        w
    }
}
