//! The typed indices of the IR, one mechanism for every table of a [`Function`].
//!
//! An [`Id<T>`] is the index of a `T` in its table, a `u32` that knows what it indexes: a
//! [`ParamId`] is an `Id<Param>`, a [`LocalId`] an `Id<LocalDecl>`, and so on. The tables are
//! [`IdVec`]s, which are indexed by their own id type only, so a parameter's index cannot
//! read the locals, and a field view's cannot name a buffer. (The style of naga's
//! `Handle<T>` and cranelift's entity references.) An id is built by pushing onto its table
//! ([`IdVec::push`]) or, where a number is known by other means (IR written by hand, the text
//! form), with [`Id::new`].
//!
//! An id prints as its bare number, with `{}` and `{:?}` alike, so `Mem::Buffer(2)` reads as
//! before the indices were typed.

use super::{Expr, FieldView, LocalDecl, Param, PrivateDecl, StructDecl, StubDecl, ValueDecl};
#[cfg(doc)]
use super::{ExprArena, Function};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// Index of an expression in its function's [`ExprArena`].
pub type ExprId = Id<Expr>;
/// A single-assignment value defined by a statement (a `let`, a load, an atomic's old value, a
/// collective's result, a `for` counter): an index into [`Function::values`].
pub type ValueId = Id<ValueDecl>;
/// Identifies a loop, the target of `break` and `continue` (loops have no table;
/// [`Function::loop_count`] counts them).
pub type LoopId = Id<Loop>;
/// A parameter: an index into [`Function::params`].
pub type ParamId = Id<Param>;
/// A local-memory array: an index into [`Function::locals`].
pub type LocalId = Id<LocalDecl>;
/// A private variable or array: an index into [`Function::privates`].
pub type PrivateId = Id<PrivateDecl>;
/// A struct held by buffers: an index into [`Function::structs`].
pub type StructId = Id<StructDecl>;
/// A field view of a buffer of structs: an index into [`Function::fields`].
pub type FieldId = Id<FieldView>;
/// A stub function: an index into [`Function::stubs`].
pub type StubId = Id<StubDecl>;

/// What a [`LoopId`] identifies: a loop of the statement tree (no value of it exists).
#[derive(Debug)]
pub enum Loop {}

/// The index of a `T` in its table (`T` only names the table; no `T` is stored).
pub struct Id<T> {
    raw: u32,
    _of: PhantomData<fn() -> T>,
}

impl<T> Id<T> {
    /// The id of entry `index`.
    ///
    /// # Panics
    ///
    /// When `index` does not fit a `u32`.
    #[track_caller]
    pub fn new(index: usize) -> Self {
        Self::from_raw(u32::try_from(index).expect("an IR table has more than u32::MAX entries"))
    }

    /// The id whose number is `raw`.
    pub const fn from_raw(raw: u32) -> Self {
        Id {
            raw,
            _of: PhantomData,
        }
    }

    /// The id's number.
    pub const fn raw(self) -> u32 {
        self.raw
    }

    /// The id's number as an index.
    pub const fn index(self) -> usize {
        self.raw as usize
    }
}

// By hand, not derived: a derive would ask the same of `T`, which only names the table.
impl<T> Clone for Id<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Id<T> {}

impl<T> PartialEq for Id<T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<T> Eq for Id<T> {}

impl<T> PartialOrd for Id<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Id<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.raw.cmp(&other.raw)
    }
}

impl<T> Hash for Id<T> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.raw.hash(h)
    }
}

impl<T> fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.raw, f)
    }
}

impl<T> fmt::Display for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.raw, f)
    }
}

/// A key of an [`IdVec`]: an [`Id`] (the trait lets a table name its key type, `IdVec<ParamId,
/// Param>`, rather than the marker).
pub trait Key: Copy {
    /// The key of entry `index`.
    fn new(index: usize) -> Self;
    /// The entry's index.
    fn index(self) -> usize;
}

impl<T> Key for Id<T> {
    fn new(index: usize) -> Self {
        Id::new(index)
    }
    fn index(self) -> usize {
        Id::index(self)
    }
}

/// A table indexed by its own key type `K` only: a `Vec<V>` whose entries are named by
/// `K`s. Its `Debug` form is the `Vec`'s.
pub struct IdVec<K, V> {
    items: Vec<V>,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: Key, V> IdVec<K, V> {
    /// An empty table.
    pub const fn new() -> Self {
        IdVec {
            items: Vec::new(),
            _key: PhantomData,
        }
    }

    /// Adds `v`; returns its key.
    pub fn push(&mut self, v: V) -> K {
        self.items.push(v);
        K::new(self.items.len() - 1)
    }

    /// The entry of `k`, if the table has it.
    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }

    /// The entry of `k`, mutably, if the table has it.
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.items.get_mut(k.index())
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// `true` when the table is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> std::slice::Iter<'_, V> {
        self.items.iter()
    }

    /// The entries in key order, mutably.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }

    /// The entries with their keys, in key order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + '_ {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }

    /// Every key, in order.
    pub fn ids(&self) -> std::iter::Map<std::ops::Range<usize>, fn(usize) -> K> {
        (0..self.items.len()).map(K::new as fn(usize) -> K)
    }

    /// The key of the first entry for which `pred` holds.
    pub fn position(&self, pred: impl FnMut(&V) -> bool) -> Option<K> {
        self.items.iter().position(pred).map(K::new)
    }

    /// The entries as a slice (in key order).
    pub fn as_slice(&self) -> &[V] {
        &self.items
    }

    /// The entries as a `Vec` (in key order).
    pub fn into_vec(self) -> Vec<V> {
        self.items
    }
}

impl<K: Key, V> Index<K> for IdVec<K, V> {
    type Output = V;
    #[track_caller]
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: Key, V> IndexMut<K> for IdVec<K, V> {
    #[track_caller]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<K, V> From<Vec<V>> for IdVec<K, V> {
    fn from(items: Vec<V>) -> Self {
        IdVec {
            items,
            _key: PhantomData,
        }
    }
}

impl<K, V> FromIterator<V> for IdVec<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        Vec::from_iter(iter).into()
    }
}

impl<K, V> Extend<V> for IdVec<K, V> {
    fn extend<I: IntoIterator<Item = V>>(&mut self, iter: I) {
        self.items.extend(iter)
    }
}

impl<'a, K, V> IntoIterator for &'a IdVec<K, V> {
    type Item = &'a V;
    type IntoIter = std::slice::Iter<'a, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut IdVec<K, V> {
    type Item = &'a mut V;
    type IntoIter = std::slice::IterMut<'a, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

impl<K, V> IntoIterator for IdVec<K, V> {
    type Item = V;
    type IntoIter = std::vec::IntoIter<V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<K, V> Default for IdVec<K, V> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<K, V: Clone> Clone for IdVec<K, V> {
    fn clone(&self) -> Self {
        self.items.clone().into()
    }
}

impl<K, V: PartialEq> PartialEq for IdVec<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl<K, V: Eq> Eq for IdVec<K, V> {}

impl<K, V: Hash> Hash for IdVec<K, V> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.items.hash(h)
    }
}

impl<K, V: fmt::Debug> fmt::Debug for IdVec<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)
    }
}
