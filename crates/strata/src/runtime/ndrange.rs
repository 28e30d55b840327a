//! Launch configurations: [`NdRange`] (global and local sizes) and [`Dims`].
//!
//! **Work sizes.** A launch has a global size and a local (work-group) size in 1 to 3
//! dimensions. The rule strata enforces on every backend: *an explicit local size must divide
//! the global size in every dimension* (OpenCL 1.2's rule). To cover `n` items with work-groups
//! of `l`, use [`NdRange::covering`], which rounds the global size up, and guard the kernel
//! body with `if_(global_id(0).lt(n), ...)`. Without a local size, strata divides the work
//! itself, choosing in dimension 0 the largest divisor of the global size that does not exceed
//! the device's preferred group size, and 1 in the other dimensions. A global size of 0 in any
//! dimension launches nothing. Global sizes must fit in `u32` (ids are `u32`).

use crate::error::{Error, Result};
use crate::ir;

/// Sizes in 1 to 3 dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    v: [usize; 3],
    n: u8,
}

impl From<usize> for Dims {
    fn from(x: usize) -> Dims {
        Dims { v: [x, 1, 1], n: 1 }
    }
}
impl From<[usize; 1]> for Dims {
    fn from(x: [usize; 1]) -> Dims {
        Dims {
            v: [x[0], 1, 1],
            n: 1,
        }
    }
}
impl From<[usize; 2]> for Dims {
    fn from(x: [usize; 2]) -> Dims {
        Dims {
            v: [x[0], x[1], 1],
            n: 2,
        }
    }
}
impl From<[usize; 3]> for Dims {
    fn from(x: [usize; 3]) -> Dims {
        Dims { v: x, n: 3 }
    }
}

/// A launch configuration: global size and optional local size (see the module docs for the
/// rule on sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdRange {
    global: [usize; 3],
    local: Option<[usize; 3]>,
    dims: u8,
    local_dims: u8,
}

impl NdRange {
    /// `global` work-items in 1 to 3 dimensions; the local size is chosen at launch.
    pub fn new(global: impl Into<Dims>) -> NdRange {
        let g = global.into();
        NdRange {
            global: g.v,
            local: None,
            dims: g.n,
            local_dims: 0,
        }
    }

    /// Sets an explicit local size (same number of dimensions as the global size).
    pub fn local(self, local: impl Into<Dims>) -> NdRange {
        let l = local.into();
        NdRange {
            local: Some(l.v),
            local_dims: l.n,
            ..self
        }
    }

    /// At least `n` work-items in work-groups of `local`, in 1 to 3 dimensions: the global size
    /// is `n` rounded up to a multiple of `local` in each dimension (a local size of 0 counts
    /// as 1). Guard the body: `global_id(0) < n` in 1-D, or
    /// `in_bounds(global_id2(), vec2(w, h))` for `covering([w, h], [16, 16])` (and
    /// `global_id3()` in 3-D). `n` and `local` must have the same number of dimensions (a
    /// launch with mismatched ones fails with [`Error::InvalidWorkSize`]).
    pub fn covering(n: impl Into<Dims>, local: impl Into<Dims>) -> NdRange {
        let (n, l) = (n.into(), local.into());
        let mut g = n;
        let mut local = l;
        for d in 0..3 {
            local.v[d] = l.v[d].max(1);
            // Saturates (a launch then fails: global sizes are at most 2^32 - 1).
            g.v[d] = n.v[d].div_ceil(local.v[d]).saturating_mul(local.v[d]);
        }
        NdRange::new(g).local(local)
    }

    /// The global size (unused dimensions are 1).
    pub fn global_size(&self) -> [usize; 3] {
        self.global
    }

    /// The local size, if set or resolved.
    pub fn local_size(&self) -> Option<[usize; 3]> {
        self.local
    }

    /// Number of dimensions.
    pub fn dims(&self) -> u8 {
        self.dims
    }

    /// Number of work-groups in each dimension (after resolution).
    pub fn groups(&self) -> [usize; 3] {
        let l = self.local.unwrap_or([1, 1, 1]);
        [0, 1, 2].map(|d| self.global[d] / l[d].max(1))
    }

    /// Total number of work-groups (`usize::MAX` where that many do not fit a `usize`, which
    /// a launch refuses).
    pub fn group_count(&self) -> usize {
        self.groups()
            .iter()
            .try_fold(1usize, |a, &g| a.checked_mul(g))
            .unwrap_or(usize::MAX)
    }

    /// Checks the sizes against the device and picks a local size if none was given.
    #[allow(clippy::needless_range_loop)] // three parallel per-dimension arrays
    pub(crate) fn resolve(
        self,
        kernel: &str,
        dev: &super::DeviceInfo,
        _f: &ir::Function,
    ) -> Result<NdRange> {
        let bad = |reason: String| Error::InvalidWorkSize {
            kernel: kernel.to_string(),
            reason,
        };
        if !(1..=3).contains(&self.dims) {
            return Err(bad(format!(
                "{} dimensions; launches have 1, 2 or 3",
                self.dims
            )));
        }
        for d in 0..3 {
            if self.global[d] > u32::MAX as usize {
                return Err(bad(format!(
                    "global size {} in dimension {d} exceeds 2^32 - 1 (ids are u32)",
                    self.global[d]
                )));
            }
        }
        if self
            .global
            .iter()
            .try_fold(1u64, |a, &g| a.checked_mul(g as u64))
            .is_none_or(|n| n > usize::MAX as u64)
        {
            return Err(bad(format!(
                "global size {} x {} x {}: more work-items than a `usize` holds",
                self.global[0], self.global[1], self.global[2]
            )));
        }
        let local = match self.local {
            Some(l) => {
                if self.local_dims != self.dims {
                    return Err(bad(format!(
                        "the global size has {} dimension(s) but the local size has {}",
                        self.dims, self.local_dims
                    )));
                }
                for d in 0..3 {
                    if l[d] == 0 {
                        return Err(bad(format!(
                            "local size 0 in dimension {d}; local sizes are at least 1"
                        )));
                    }
                    if l[d] > dev.max_work_item_sizes[d] {
                        return Err(bad(format!(
                            "local size {} in dimension {d} exceeds the device's maximum of {}",
                            l[d], dev.max_work_item_sizes[d]
                        )));
                    }
                    if !self.global[d].is_multiple_of(l[d]) {
                        return Err(bad(format!(
                            "global size {} in dimension {d} is not a multiple of local size {}; round the global size up ({}) and guard the kernel ({}), or leave the local size to strata",
                            self.global[d], l[d],
                            match self.dims {
                                1 => "`NdRange::covering(n, local)`",
                                2 => "`NdRange::covering([w, h], [lx, ly])`",
                                _ => "`NdRange::covering([w, h, d], [lx, ly, lz])`",
                            },
                            match self.dims {
                                1 => "`if global_id(0) < n`",
                                2 => "`if in_bounds(global_id2(), vec2(w, h))`",
                                _ => "`if in_bounds(global_id3(), vec3(w, h, d))`",
                            }
                        )));
                    }
                }
                let total: usize = l.iter().product();
                if total > dev.max_work_group_size {
                    return Err(bad(format!("work-group of {} work-items ({} x {} x {}) exceeds the device's maximum of {}", total, l[0], l[1], l[2], dev.max_work_group_size)));
                }
                l
            }
            None => {
                let cap = dev
                    .preferred_group_size
                    .min(dev.max_work_item_sizes[0])
                    .min(dev.max_work_group_size)
                    .max(1);
                let g = self.global[0];
                let l0 = if g == 0 {
                    1
                } else {
                    (1..=cap.min(g))
                        .rev()
                        .find(|&d| g.is_multiple_of(d))
                        .unwrap_or(1)
                };
                [l0, 1, 1]
            }
        };
        Ok(NdRange {
            local: Some(local),
            local_dims: self.dims,
            ..self
        })
    }

    /// Whether the launch has no work-items.
    pub fn is_empty(&self) -> bool {
        self.global.contains(&0)
    }
}
