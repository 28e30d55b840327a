//! Fingerprints of a [`Function`]: the key of the devices' kernel caches
//! ([`Function::fingerprint`]), and the hash of its source locations that the runtime's cache
//! adds ([`Function::locations_fingerprint`]).
//!
//! Source locations ([`SourceLoc`](super::SourceLoc)) are not part of what a kernel computes,
//! so the fingerprint ignores them and the same kernel recorded at two places compiles once
//! per device. The runtime's cache of built kernels adds the locations' hash, so each
//! recording keeps its own lines: checked mode's errors name the launching kernel's line,
//! while the plain `cpu` and `interp` bounds errors, compiled into the shared code, name the
//! first recording's.

use super::{Block, Function, Stmt};

impl Function {
    /// A 128-bit fingerprint of the whole function (name, parameters, every expression of the
    /// arena in order with its literals' bits, values, local and private arrays, stubs with
    /// their sources and the identity of their CPU bodies, the structs that buffers hold with
    /// their layouts, the field views of those buffers, the statement tree, and the hidden
    /// parameters with their roles, a custom gather's combining function by its
    /// fingerprint), linear in its size.
    /// Equal functions have equal fingerprints; the device kernel caches key on it. (The IR
    /// text is no key: it is made for reading, slower to produce than this hash, and cannot
    /// show what a stub's CPU body is.)
    pub fn fingerprint(&self) -> u128 {
        use std::hash::Hash;
        // Every field, named: a field added to `Function` does not compile here until the
        // fingerprint covers it (or says why not).
        let Function {
            name,
            params,
            exprs,
            values,
            locals,
            privates,
            loop_count,
            stubs,
            structs,
            fields,
            body,
            hidden,
        } = self;
        // A stub's CPU body is Rust code, known by identity: the same `Stub` (its one `Arc`)
        // is the same body, two stubs of one name with other bodies are other kernels.
        let bodies = stubs.iter().map(|s| {
            s.cpu
                .as_ref()
                .map_or(0, |b| std::sync::Arc::as_ptr(b) as *const () as usize)
        });
        let mut h = Hasher128::default();
        name.hash(&mut h);
        exprs.exprs.hash(&mut h);
        params.hash(&mut h);
        values.hash(&mut h);
        locals.hash(&mut h);
        privates.hash(&mut h);
        loop_count.hash(&mut h);
        body.hash(&mut h);
        // Stubs have no `Hash` (their CPU bodies are known by identity, below); their `Debug`
        // form is streamed into the hash without building the text.
        if !stubs.is_empty() {
            use std::fmt::Write;
            let _ = write!(h, "{stubs:?}");
        }
        for b in bodies {
            b.hash(&mut h);
        }
        // Two kernels that differ only in a struct's layout (two structs of one name in
        // two modules, fields in another order) read other bytes: other kernels.
        structs.hash(&mut h);
        fields.hash(&mut h);
        hidden.hash(&mut h);
        h.finish128()
    }
}

/// The hash of [`Function::fingerprint`]: two independent 64-bit lanes of multiply-rotate
/// mixing over 8-byte words, each finished with an avalanche, 128 bits in all. Several times
/// faster than two SipHash states (what it replaced); a fingerprint is a cache key within one
/// process, never stored, so it need not resist chosen inputs, only spread honest ones.
#[derive(Clone, Copy)]
pub(crate) struct Hasher128 {
    a: u64,
    b: u64,
    len: u64,
}

impl Default for Hasher128 {
    fn default() -> Self {
        Hasher128 {
            a: 0x243f_6a88_85a3_08d3,
            b: 0x1319_8a2e_0370_7344,
            len: 0,
        }
    }
}

const K1: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;

/// The final avalanche of a lane (every input bit reaches every output bit).
fn avalanche(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Hasher128 {
    #[inline]
    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(K1).rotate_left(29);
        self.b = (self.b.rotate_left(17) ^ w).wrapping_mul(K2);
        self.len = self.len.wrapping_add(1);
    }

    /// The 128-bit hash of what was written.
    pub(crate) fn finish128(&self) -> u128 {
        let a = avalanche(self.a ^ self.len);
        let b = avalanche(self.b.wrapping_add(a));
        (u128::from(a) << 64) | u128::from(b)
    }
}

impl std::hash::Hasher for Hasher128 {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        // The tail, with its length in the top byte (so "a" and "a\0" differ).
        let mut tail = [0u8; 8];
        tail[..rest.len()].copy_from_slice(rest);
        tail[7] ^= rest.len() as u8 | 0x80;
        self.word(u64::from_le_bytes(tail));
    }
    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i) | 0x100);
    }
    fn write_u16(&mut self, i: u16) {
        self.word(u64::from(i) | 0x2_0000);
    }
    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i) | 0x4_0000_0000);
    }
    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }
    fn finish(&self) -> u64 {
        self.finish128() as u64
    }
}

/// `Debug` text streamed into the hash.
impl std::fmt::Write for Hasher128 {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        std::hash::Hasher::write(self, s.as_bytes());
        Ok(())
    }
}

impl Function {
    /// A hash of the source locations of the statements ([`SourceLoc`](super::SourceLoc)), which
    /// [`Function::fingerprint`] leaves out: with it, the same kernel recorded at two places
    /// is told apart where its error messages matter (the runtime's cache of built kernels).
    pub fn locations_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        fn walk(b: &Block, h: &mut impl Hasher) {
            for s in b {
                match s {
                    Stmt::Load { at, .. }
                    | Stmt::Store { at, .. }
                    | Stmt::Atomic { at, .. }
                    | Stmt::AtomicLoad { at, .. } => {
                        at.0.map(|l| (l.file(), l.line(), l.column())).hash(h)
                    }
                    Stmt::If {
                        then, otherwise, ..
                    } => {
                        walk(then, h);
                        walk(otherwise, h);
                    }
                    Stmt::For { body, .. } | Stmt::Loop { body, .. } => walk(body, h),
                    _ => {}
                }
            }
        }
        let mut h = Hasher128::default();
        walk(&self.body, &mut h);
        h.finish()
    }
}
