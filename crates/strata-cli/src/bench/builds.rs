//! The two builds of the host (rayon) baselines of `strata bench`.
//!
//! A default `cargo build --release` compiles for the target's baseline instruction set: on
//! x86-64 that is SSE2 (128-bit vectors, no fused multiply-add), whatever the machine running
//! it can do. That is what a user's own Rust code gets unless it sets `target-cpu` or target
//! features, so it is the first baseline ([`Build::Default`]). What the machine can do is the
//! second: the same loops compiled with `#[target_feature(enable = "avx2,fma")]`
//! ([`Build::Avx2Fma`]: 256-bit vectors), run only where the CPU has both features
//! ([`Build::avx2_fma`] checks with `is_x86_feature_detected!`); elsewhere that baseline is
//! unavailable and its columns say so.
//!
//! Each baseline's inner loop is written once, with [`two_builds!`](crate::bench::builds): the
//! macro makes of one body an `#[inline(always)]` function and calls it from a plain wrapper
//! and from a `#[target_feature]` wrapper, so the compiler generates it twice. Rust never
//! contracts `a * b + c` into a fused multiply-add, and the loops fix the order of every
//! floating-point operation, so both builds compute the same bits (the `baselines` test checks
//! it); only the instructions differ.

/// Which instruction set a baseline's inner loops are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// The build's default target (x86-64: SSE2, 128-bit vectors): what a default release
    /// build of the user's code does.
    Default,
    /// The same loops compiled with `#[target_feature(enable = "avx2,fma")]` (256-bit
    /// vectors): what the machine can do. Run only where [`Build::avx2_fma`] is `Some`.
    Avx2Fma,
}

impl Build {
    /// [`Build::Avx2Fma`] where this process runs on an x86 CPU with AVX2 and FMA; `None`
    /// elsewhere (another architecture, an older CPU).
    pub fn avx2_fma() -> Option<Build> {
        avx2_fma_detected().then_some(Build::Avx2Fma)
    }
}

/// Whether the CPU has AVX2 and FMA (checked at run time; `false` off x86).
pub fn avx2_fma_detected() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// Defines `fn name(build: Build, args...) -> R` from one body: the body goes into an
/// `#[inline(always)]` function, called directly for [`Build::Default`] and through a
/// `#[target_feature(enable = "avx2,fma")]` wrapper for [`Build::Avx2Fma`] (only after
/// [`avx2_fma_detected`]; asking for it where it is missing panics, never runs AVX2 code).
/// Arguments are plain `name: Type` pairs; the function cannot be generic.
macro_rules! two_builds {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$attr])*
        $vis fn $name(build: $crate::bench::builds::Build, $($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body($($arg: $ty),*) $(-> $ret)? $body

            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            #[target_feature(enable = "avx2,fma")]
            fn avx2_fma($($arg: $ty),*) $(-> $ret)? {
                body($($arg),*)
            }

            match build {
                $crate::bench::builds::Build::Default => body($($arg),*),
                $crate::bench::builds::Build::Avx2Fma => {
                    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                    if $crate::bench::builds::avx2_fma_detected() {
                        // SAFETY: the CPU has AVX2 and FMA, checked just above.
                        return unsafe { avx2_fma($($arg),*) };
                    }
                    panic!(
                        "the AVX2+FMA build of `{}` needs a CPU with AVX2 and FMA",
                        stringify!($name)
                    )
                }
            }
        }
    };
}
pub(crate) use two_builds;

/// Times strata and a baseline in both builds by turns ([`alternate`](crate::bench::alternate):
/// one warm-up run of each, then `reps` rounds of strata, the default build and the AVX2+FMA
/// build), so that the ratios compare runs made under the same conditions. `strata` times one
/// run of strata's kernel; `baseline(build, result)` times one run of the baseline in `build`,
/// leaving its result in `result` (one per build, `T::default()` before the first run). The
/// AVX2+FMA build runs only where the CPU has it, and its result must pass `same` against the
/// default build's. Returns the median seconds of strata, of the default build and of the
/// AVX2+FMA build (`None` where it is unavailable), and the default build's result.
pub(crate) fn alternating<T: Default, E>(
    reps: usize,
    mut strata: impl FnMut() -> Result<f64, E>,
    baseline: impl Fn(Build, &mut T) -> Result<f64, E>,
    same: impl FnOnce(&T, &T) -> Result<(), E>,
) -> Result<(f64, f64, Option<f64>, T), E> {
    let (mut want, mut avx2_want) = (T::default(), T::default());
    let mut default = || baseline(Build::Default, &mut want);
    let (strata_s, default_s, avx2_s) = match Build::avx2_fma() {
        Some(b) => {
            let mut avx2 = || baseline(b, &mut avx2_want);
            let [s, d, a] = crate::bench::alternate(reps, [&mut strata, &mut default, &mut avx2])?;
            (s, d, Some(a))
        }
        None => {
            let [s, d] = crate::bench::alternate(reps, [&mut strata, &mut default])?;
            (s, d, None)
        }
    };
    if avx2_s.is_some() {
        same(&avx2_want, &want)?;
    }
    Ok((strata_s, default_s, avx2_s, want))
}

/// Times a baseline in both builds. `run(build)` times one build and returns its median
/// seconds and its result. The AVX2+FMA build runs only where the CPU has it, and its result
/// must pass `same` against the default build's. Returns the default build's seconds, the
/// AVX2+FMA build's (`None` where it is unavailable) and the default build's result.
pub(crate) fn both<T, E>(
    mut run: impl FnMut(Build) -> Result<(f64, T), E>,
    same: impl FnOnce(&T, &T) -> Result<(), E>,
) -> Result<(f64, Option<f64>, T), E> {
    let (default_s, want) = run(Build::Default)?;
    let avx2_s = match Build::avx2_fma() {
        Some(b) => {
            let (s, got) = run(b)?;
            same(&got, &want)?;
            Some(s)
        }
        None => None,
    };
    Ok((default_s, avx2_s, want))
}
