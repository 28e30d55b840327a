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
        use std::hash::{Hash, Hasher};
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
        // The parts without `Hash`; their `Debug` form is linear (it names expressions by id).
        let rest =
            format!("{params:?}{values:?}{locals:?}{privates:?}{loop_count}{stubs:?}{body:?}");
        let mut hs = [1u8, 2].map(|salt| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            salt.hash(&mut h);
            h
        });
        // A stub's CPU body is Rust code, known by identity: the same `Stub` (its one `Arc`)
        // is the same body, two stubs of one name with other bodies are other kernels.
        let bodies: Vec<usize> = stubs
            .iter()
            .map(|s| {
                s.cpu
                    .as_ref()
                    .map_or(0, |b| std::sync::Arc::as_ptr(b) as *const () as usize)
            })
            .collect();
        for h in &mut hs {
            name.hash(h);
            exprs.exprs.hash(h);
            rest.hash(h);
            bodies.hash(h);
            // Two kernels that differ only in a struct's layout (two structs of one name in
            // two modules, fields in another order) read other bytes: other kernels.
            structs.hash(h);
            fields.hash(h);
            hidden.hash(h);
        }
        (u128::from(hs[0].finish()) << 64) | u128::from(hs[1].finish())
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
        let mut h = std::collections::hash_map::DefaultHasher::new();
        walk(&self.body, &mut h);
        h.finish()
    }
}
