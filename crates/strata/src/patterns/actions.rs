//! Actions: eager, in-place operations on a [`DeviceVec`] (range-v3's `action::`), run on the
//! vector's own [`Exec`](super::Exec). Each returns the vector again, so actions chain:
//! `v.sort()?.transform(|x| x * 2)?.inclusive_scan_in_place(|a, b| a + b)?`.

use super::sort::{sort_keys, SortKey};
use super::{DeviceVec, View};
use crate::builder::{Expr, Numeric, Value};
use crate::error::Result;

impl<T: Value> DeviceVec<T> {
    /// Replaces every element `x` by `f(x)`, in one kernel.
    pub fn transform<F: Fn(Expr<T>) -> Expr<T> + Clone>(&self, f: F) -> Result<&Self> {
        self.map(f).collect_into(self.exec(), self)?;
        Ok(self)
    }

    /// Sets every element to `value` (a queue fill, no kernel).
    pub fn fill(&self, value: T) -> Result<&Self> {
        if !self.is_empty() {
            self.exec().queue().fill(
                self.buffer(),
                value,
                self.offset()..self.offset() + self.len(),
            )?;
        }
        Ok(self)
    }
}

impl<T: SortKey> DeviceVec<T> {
    /// Sorts the elements ascending, stably, in place (LSD radix sort; floats in IEEE total
    /// order: `-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN`).
    pub fn sort(&self) -> Result<&Self> {
        sort_keys(self.exec(), self, None::<&DeviceVec<u32>>)?;
        Ok(self)
    }
}

impl<T: Numeric> DeviceVec<T> {
    /// Replaces the elements by their inclusive scan with the associative operator `op`.
    pub fn inclusive_scan_in_place<F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        op: F,
    ) -> Result<&Self> {
        self.inclusive_scan_into(self.exec(), self, op)?;
        Ok(self)
    }

    /// Replaces the elements by their exclusive scan from `init` with the associative
    /// operator `op`.
    pub fn exclusive_scan_in_place<F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        init: T,
        op: F,
    ) -> Result<&Self> {
        self.exclusive_scan_into(self.exec(), self, init, op)?;
        Ok(self)
    }
}
