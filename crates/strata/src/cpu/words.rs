//! The storage of a CPU buffer ([`super::CpuMem`]): zeroed words, from the heap or, for large
//! buffers on Linux, mapped from the kernel on transparent huge pages (issue 31).
//!
//! A buffer of [`HUGE`] bytes or more is its own anonymous mapping, aligned to 2 MiB and
//! advised `MADV_HUGEPAGE`: the kernel gives it zeroed pages on first touch, so allocating
//! writes nothing (the heap path writes every word to zero on the allocating thread), the
//! first kernel to touch it takes the faults on the threads that run it, and a 2 MiB page
//! costs one fault where 4 KiB pages cost 512. Chambolle's iteration on fields
//! (`strata bench`'s `rof_fused`) allocates three 16 MiB fields an iteration: 4 KiB pages
//! zeroed by `memset` took about 11 ms each (mapping, 4,096 faults, the zeroing; 2 ms on huge
//! pages, 0.8 ms to zero memory already mapped), against the two kernels' 14 ms of
//! computing. Huge pages also keep a 2-D stencil's work-group (8 rows 8 KiB apart, in five
//! buffers) inside a handful of TLB entries. Where the kernel has no huge page to give
//! (`never`, fragmented memory) the mapping is the same with small pages. Smaller buffers,
//! and every buffer elsewhere, come from the heap as before.

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

/// Buffers of at least this many bytes are mapped on huge pages (Linux): one 2 MiB page.
pub(crate) const HUGE: usize = 2 << 20;

/// `len` zeroed atomic words, freed on drop.
pub(crate) struct Words {
    ptr: NonNull<AtomicU64>,
    len: usize,
    /// Bytes mapped at `ptr` (a mapping of its own), or 0 for a heap allocation.
    mapped: usize,
}

// SAFETY: `Words` owns its memory as a `Box<[AtomicU64]>` would, and atomics are `Sync`.
unsafe impl Send for Words {}
// SAFETY: as above.
unsafe impl Sync for Words {}

impl Words {
    /// `len` zeroed words; `Err` with the reason when the memory cannot be had.
    pub(crate) fn zeroed(len: usize) -> Result<Words, String> {
        let bytes = len.checked_mul(8).ok_or("the size overflows")?;
        #[cfg(target_os = "linux")]
        if bytes >= HUGE {
            return Words::mapped(len, bytes);
        }
        let mut v: Vec<AtomicU64> = Vec::new();
        v.try_reserve_exact(len).map_err(|e| e.to_string())?;
        v.resize_with(len, || AtomicU64::new(0));
        let b = Box::into_raw(v.into_boxed_slice());
        Ok(Words {
            // SAFETY: `Box::into_raw` never returns null.
            ptr: unsafe { NonNull::new_unchecked(b as *mut AtomicU64) },
            len,
            mapped: 0,
        })
    }

    /// Whether the words are a mapping of their own (the huge-page path).
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped != 0
    }

    /// An anonymous mapping of `bytes` (`len` words), aligned to [`HUGE`] and advised to
    /// the kernel for huge pages: mapped `HUGE` bytes larger, the unaligned head and the
    /// tail unmapped again.
    #[cfg(target_os = "linux")]
    fn mapped(len: usize, bytes: usize) -> Result<Words, String> {
        let size = bytes
            .div_ceil(HUGE)
            .checked_mul(HUGE)
            .ok_or("the size overflows")?;
        let whole = size.checked_add(HUGE).ok_or("the size overflows")?;
        // SAFETY: a fresh private anonymous mapping; no memory of ours is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                whole,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let start = p as usize;
        let aligned = start.next_multiple_of(HUGE);
        let (head, tail) = (aligned - start, whole - (aligned - start) - size);
        // SAFETY: both ranges lie inside the mapping made above and outside `aligned ..
        // aligned + size`, which is kept; nothing refers to them. A failure leaves the
        // range mapped, which only wastes address space, so it is ignored; so is a failed
        // advice (huge pages off or unavailable: small pages, as the heap's).
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((aligned + size) as *mut libc::c_void, tail);
            }
            libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
        }
        Ok(Words {
            // SAFETY: `aligned` is inside a successful mapping, so not null.
            ptr: unsafe { NonNull::new_unchecked(aligned as *mut AtomicU64) },
            len,
            mapped: size,
        })
    }
}

impl Deref for Words {
    type Target = [AtomicU64];

    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` is valid for `len` initialized (zeroed or since written) words for the
        // life of `self`: zero bytes are a valid `AtomicU64`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        if self.mapped == 0 {
            // SAFETY: made by `Box::into_raw` of a boxed slice of `len` words in `zeroed`.
            drop(unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    self.ptr.as_ptr(),
                    self.len,
                ))
            });
            return;
        }
        #[cfg(target_os = "linux")]
        // SAFETY: the mapping made in `mapped`, of `self.mapped` bytes; nothing borrows it
        // past `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.mapped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    /// Small and large storage alike is zeroed, writable to its last word and aligned; the
    /// large one (on Linux) is a mapping aligned to a huge page.
    #[test]
    fn words_are_zeroed_writable_and_aligned() {
        for len in [0, 1, 1000, HUGE / 8 - 1, HUGE / 8, HUGE / 8 * 3 + 5] {
            let w = Words::zeroed(len).unwrap();
            assert_eq!(w.len(), len);
            assert!(w.iter().all(|x| x.load(Ordering::Relaxed) == 0), "{len}");
            if let Some(last) = w.last() {
                last.store(u64::MAX, Ordering::Relaxed);
                w[0].store(7, Ordering::Relaxed);
                assert_eq!(w[len - 1].load(Ordering::Relaxed), if len == 1 { 7 } else { u64::MAX });
            }
            assert_eq!(w.as_ptr() as usize % 8, 0);
            let mapped = cfg!(target_os = "linux") && len * 8 >= HUGE;
            assert_eq!(w.is_mapped(), mapped, "{len}");
            if mapped {
                assert_eq!(w.as_ptr() as usize % HUGE, 0, "{len}");
            }
        }
    }

    /// A size past the address space is an error, not a panic or an abort.
    #[test]
    fn words_too_large_is_an_error() {
        assert!(Words::zeroed(usize::MAX / 8).is_err());
        assert!(Words::zeroed(usize::MAX).is_err());
    }
}
