//! Dense linear algebra kernels written with the builder: single-precision matrix
//! multiplication (SGEMM) with register tiling and local-memory tiles.
//!
//! ```
//! use strata::blas::{Sgemm, SgemmConfig};
//! use strata::prelude::*;
//! # fn main() -> strata::Result<()> {
//! let queue = Queue::new(&Device::from_spec("cpu")?)?;
//! // A small tiling for a small matrix; `SgemmConfig::DEFAULT` (128 x 128 x 8) is for GPUs,
//! // `SgemmConfig::for_size` picks one of three for a size and device.
//! let sgemm = Sgemm::new(SgemmConfig::new(16, 16, 4, 4, 4))?;
//! let (m, n, k) = (32, 16, 8);
//! let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32).collect();
//! let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32).collect();
//! let (da, db) = (Buffer::from_slice(&queue, &a)?, Buffer::from_slice(&queue, &b)?);
//! let dc = Buffer::<f32>::new(&queue, m * n)?;
//! sgemm.launch(&queue, &da, &db, &dc, m, n, k)?;
//! let c = queue.read(&dc)?;
//! let want: f32 = (0..k).map(|p| a[3 * k + p] * b[p * n + 5]).sum();
//! assert_eq!(c[3 * n + 5], want);
//! // Sizes the tiles do not divide are refused with a typed error, not computed wrongly.
//! assert!(sgemm.launch(&queue, &da, &db, &dc, 30, 16, 8).is_err());
//! # Ok(())
//! # }
//! ```
//!
//! **The kernel.** `C = A B` for row-major `A` (`m x k`), `B` (`k x n`) and `C` (`m x n`). One
//! work-group computes a `block_m x block_n` block of `C`; each of its work-items computes a
//! `thread_m x thread_n` sub-tile, held in `thread_m * thread_n` private variables (registers on
//! a GPU). The `k` dimension is walked `block_k` at a time: the work-group copies a
//! `block_m x block_k` slice of `A` and a `block_k x block_n` slice of `B` into local memory,
//! and every work-item then does `thread_m * thread_n` fused multiply-adds per step of `k`,
//! reading `thread_m + thread_n` values from local memory. Everything about the tiling is a Rust
//! value ([`SgemmConfig`]) fixed when the kernel is built (multi-staging): the loops over the
//! step of `k` inside a tile, over the sub-tile and over the loads are unrolled at build time,
//! so a kernel is straight-line code inside one device loop over the tiles of `k`.
//!
//! - **Local memory layout.** Both tiles are arrays of `[f32; 4]`. `A` is stored transposed
//!   (`k`-major: one row of `block_m / 4` vectors per step of `k`, padded by one vector so that
//!   the transposing stores of the 8 work-items of a quarter warp fall in distinct banks); `B`
//!   as it is (`block_n / 4` vectors per step of `k`). In the inner loop a work-item reads its
//!   `thread_m` values of `A` and `thread_n` values of `B` as `[f32; 4]` vectors from
//!   `thread_m / 4` groups of 4 rows and `thread_n / 4` groups of 4 columns, the groups
//!   `block_m / thread_m` (`block_n / thread_n`) vectors apart; work-items next to each other
//!   read vectors next to each other, so a warp's reads are conflict-free or broadcasts.
//! - **Work-item layout.** On GPUs a warp's 32 work-items cover 4 rows x 8 columns of sub-tiles
//!   (when the tiling allows), so that one vector read of a warp touches 4 distinct vectors of
//!   `A` and 8 of `B`.
//! - **Double buffering.** The local tiles are double buffered and the next tiles of `A` and `B`
//!   are loaded from global memory into registers *before* the multiply-adds of the current
//!   tile, and stored to the other buffer after them: the global loads' latency hides behind
//!   the arithmetic, and one barrier per tile suffices.
//! - **Exact arithmetic.** Every product is accumulated with [`Expr::fma`](crate::builder::Expr)
//!   (one rounding), in order of `k`. strata compiles CUDA with `--fmad=false` and OpenCL with
//!   `FP_CONTRACT OFF`, so the explicit `fma` is what makes the GPU's fused multiply-add
//!   instructions available; it also makes every backend (the CPU interpreter included) compute
//!   the same bits.
//! - **Order of the blocks.** With [`SgemmConfig::group_m`] above 1, consecutive work-groups
//!   walk down `group_m` block rows before moving one block column right, so that the work-groups
//!   resident at one time share their slices of `A` and `B` in the cache.
//!
//! **Sizes.** `m` must be a positive multiple of `block_m`, `n` of `block_n` and `k` of
//! `block_k`; other sizes are refused with [`Error::InvalidWorkSize`] (pad the matrices). Buffers
//! must hold exactly `m * k`, `k * n` and `m * n` elements ([`Error::ArgumentLength`]).

use crate::error::{Error, Result};
use crate::prelude::*;
use crate::{Event, KernelArg, Run};

/// The staged tiling of an SGEMM kernel: block tile `block_m x block_n` per work-group, a `k`
/// step of `block_k` per local-memory tile, and a `thread_m x thread_n` register tile per
/// work-item. See the [module docs](self) for what each does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SgemmConfig {
    /// Rows of `C` per work-group.
    pub block_m: u32,
    /// Columns of `C` per work-group.
    pub block_n: u32,
    /// Steps of `k` per local-memory tile.
    pub block_k: u32,
    /// Rows of `C` per work-item (a multiple of 4).
    pub thread_m: u32,
    /// Columns of `C` per work-item (a multiple of 4).
    pub thread_n: u32,
    /// Block rows walked by consecutive work-groups before moving right (1: row by row).
    pub group_m: u32,
}

impl Default for SgemmConfig {
    fn default() -> Self {
        SgemmConfig::DEFAULT
    }
}

impl SgemmConfig {
    /// The GPU tiling: 128 x 128 blocks, `k` steps of 8, 8 x 8 per work-item (256 work-items,
    /// 64 accumulators each, 16.5 KiB of local memory), work-groups in bands of 8 block rows.
    pub const DEFAULT: SgemmConfig = SgemmConfig {
        block_m: 128,
        block_n: 128,
        block_k: 8,
        thread_m: 8,
        thread_n: 8,
        group_m: 8,
    };

    /// The tiling strata picks for an `m x n` result on a device: the largest of 128 x 128
    /// ([`SgemmConfig::DEFAULT`]), 128 x 64 and 64 x 64 blocks (`k` steps of 8, 8 x 8 per
    /// work-item) whose blocks divide `m` and `n` and, on CPU-type devices, number at least
    /// the device's compute units, so that no core is left without a block (a 128 x 128
    /// result is one block of the default tiling: one core of many). Where no block of them
    /// gives every core one, the one that gives the most; where none divides the sizes,
    /// [`SgemmConfig::DEFAULT`] (whose launch then refuses the sizes with a typed error).
    ///
    /// Measured on `cpu` (2 cores, 2026-11-28, machine loaded; best of 7): at 128^2 the
    /// 128 x 64 and 64 x 64 blocks took 0.19 and 0.17 ms against 0.26 ms for 128 x 128; at
    /// 512^2 and 1024^2 128 x 128 was the fastest (11.8 ms against 28.6; 203 ms against 239).
    pub fn for_size(info: &crate::DeviceInfo, m: usize, n: usize) -> SgemmConfig {
        let candidates = [
            SgemmConfig::DEFAULT,
            SgemmConfig::new(128, 64, 8, 8, 8),
            SgemmConfig::new(64, 64, 8, 8, 8),
        ];
        let divides = |c: &SgemmConfig| {
            m > 0
                && n > 0
                && m.is_multiple_of(c.block_m as usize)
                && n.is_multiple_of(c.block_n as usize)
        };
        let blocks =
            |c: &SgemmConfig| (m / c.block_m as usize).saturating_mul(n / c.block_n as usize);
        let fitting: Vec<SgemmConfig> = candidates.into_iter().filter(divides).collect();
        let Some(&first) = fitting.first() else {
            return SgemmConfig::DEFAULT;
        };
        if !info.is_cpu() {
            return first;
        }
        let units = info.compute_units.max(1) as usize;
        if let Some(&c) = fitting.iter().find(|c| blocks(c) >= units) {
            return c;
        }
        // None gives every unit a block: the one with the most (the larger where two tie).
        fitting.into_iter().fold(
            first,
            |best, c| if blocks(&c) > blocks(&best) { c } else { best },
        )
    }

    /// A tiling with `group_m` 8 (see [`SgemmConfig::with_group_m`]).
    pub const fn new(
        block_m: u32,
        block_n: u32,
        block_k: u32,
        thread_m: u32,
        thread_n: u32,
    ) -> SgemmConfig {
        SgemmConfig {
            block_m,
            block_n,
            block_k,
            thread_m,
            thread_n,
            group_m: 8,
        }
    }

    /// The same tiling with work-groups ordered in bands of `group_m` block rows.
    pub const fn with_group_m(self, group_m: u32) -> SgemmConfig {
        SgemmConfig { group_m, ..self }
    }

    /// The kernel's name: `sgemm_<block_m>x<block_n>x<block_k>_<thread_m>x<thread_n>`, with
    /// `_g<group_m>` when `group_m` is not 8.
    pub fn name(&self) -> String {
        let mut s = format!(
            "sgemm_{}x{}x{}_{}x{}",
            self.block_m, self.block_n, self.block_k, self.thread_m, self.thread_n
        );
        if self.group_m != 8 {
            s.push_str(&format!("_g{}", self.group_m));
        }
        s
    }

    /// Work-items per work-group: `(block_m / thread_m) * (block_n / thread_n)` (saturating at
    /// `u32::MAX`).
    pub fn threads(&self) -> u32 {
        let t = (self.block_m / self.thread_m.max(1)) as u64
            * (self.block_n / self.thread_n.max(1)) as u64;
        u32::try_from(t).unwrap_or(u32::MAX)
    }

    /// Bytes of local memory per work-group (two buffers of each tile).
    pub fn local_mem_bytes(&self) -> u64 {
        let (bm, bn, bk) = (
            self.block_m as u64,
            self.block_n as u64,
            self.block_k as u64,
        );
        2 * 16 * (bk * (bm / 4 + 1) + bk * (bn / 4))
    }

    /// `[f32; 4]` vectors per step of `k` in the local tile of `A` (one of padding).
    fn a_row_vecs(&self) -> u32 {
        self.block_m / 4 + 1
    }
    fn a_tile_vecs(&self) -> u32 {
        self.block_k * self.a_row_vecs()
    }
    fn b_row_vecs(&self) -> u32 {
        self.block_n / 4
    }
    fn b_tile_vecs(&self) -> u32 {
        self.block_k * self.b_row_vecs()
    }

    /// Checks that the tiling can be built: every size positive, the register tile a multiple
    /// of 4 in both directions and dividing the block, at most 1024 work-items, and the tiles
    /// of `A` (as groups of 4 rows) and `B` (as groups of 4 columns) dividing evenly among the
    /// work-items. Fails with [`Error::InvalidKernel`] saying which rule is broken.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: String| {
            Err(Error::InvalidKernel(format!(
                "SGEMM tiling {}: {why}",
                self.name()
            )))
        };
        let c = self;
        if [
            c.block_m, c.block_n, c.block_k, c.thread_m, c.thread_n, c.group_m,
        ]
        .contains(&0)
        {
            return bad("every size must be at least 1".into());
        }
        if !c.thread_m.is_multiple_of(4) || !c.thread_n.is_multiple_of(4) {
            return bad(format!(
                "thread_m ({}) and thread_n ({}) must be multiples of 4 (they are read as [f32; 4] vectors)",
                c.thread_m, c.thread_n
            ));
        }
        if !c.block_m.is_multiple_of(c.thread_m) || !c.block_n.is_multiple_of(c.thread_n) {
            return bad(format!(
                "the block ({} x {}) must be a multiple of the register tile ({} x {})",
                c.block_m, c.block_n, c.thread_m, c.thread_n
            ));
        }
        let t = c.threads();
        if t > 1024 {
            return bad(format!("{t} work-items per work-group; at most 1024"));
        }
        let a_loads = (c.block_m / 4) as u64 * c.block_k as u64;
        let b_loads = c.block_k as u64 * (c.block_n / 4) as u64;
        if !a_loads.is_multiple_of(t as u64) || !b_loads.is_multiple_of(t as u64) {
            return bad(format!(
                "the {t} work-items must divide the tile of A ({a_loads} groups of 4 rows) and of B ({b_loads} groups of 4 columns) evenly"
            ));
        }
        if c.local_mem_bytes() > 1 << 24 {
            return bad(format!(
                "the tiles need {} bytes of local memory, more than any device has per work-group",
                c.local_mem_bytes()
            ));
        }
        Ok(())
    }

    /// Checks that `m x n x k` suits this tiling: each a positive multiple of its block size.
    /// Fails with [`Error::InvalidWorkSize`] naming the size that does not fit.
    pub fn check_dims(&self, m: usize, n: usize, k: usize) -> Result<()> {
        let mut wrong = Vec::new();
        for (name, v, tile) in [
            ("m", m, self.block_m),
            ("n", n, self.block_n),
            ("k", k, self.block_k),
        ] {
            if v == 0 || v % tile as usize != 0 {
                wrong.push(format!("{name} = {v} is not a positive multiple of {tile}"));
            }
        }
        if !wrong.is_empty() {
            return Err(Error::InvalidWorkSize {
                kernel: self.name(),
                reason: format!(
                    "{} (this SGEMM kernel takes m, n and k in whole {} x {} x {} tiles; pad the matrices with zeros, or build it with a tiling that divides them)",
                    wrong.join(", "),
                    self.block_m,
                    self.block_n,
                    self.block_k
                ),
            });
        }
        let fits = |x: usize, y: usize| x.checked_mul(y).is_some_and(|p| p <= u32::MAX as usize);
        if !(fits(m, k) && fits(k, n) && fits(m, n)) {
            return Err(Error::InvalidWorkSize {
                kernel: self.name(),
                reason: format!(
                    "{m} x {n} x {k} has matrices of more than 2^32 - 1 elements (strata indices are u32)"
                ),
            });
        }
        // The block order's band of `group_m` block rows is counted in u32 too.
        if !fits(n / self.block_n as usize, self.group_m as usize) {
            return Err(Error::InvalidWorkSize {
                kernel: self.name(),
                reason: format!(
                    "n = {n} with bands of {} block rows makes more than 2^32 - 1 work-groups per band; build it with a smaller group_m",
                    self.group_m
                ),
            });
        }
        Ok(())
    }

    /// The launch for an `m x n x k` product: one work-group of [`threads`](Self::threads)
    /// work-items per block of `C`, in one dimension.
    pub fn range(&self, m: usize, n: usize, k: usize) -> Result<NdRange> {
        self.check_dims(m, n, k)?;
        let groups = (m / self.block_m as usize) * (n / self.block_n as usize);
        let t = self.threads() as usize;
        Ok(NdRange::new(groups * t).local(t))
    }
}

/// How the work-items of a work-group are laid out over its `rows x cols` register tiles:
/// `(row, col)` of work-item `tid`. Warps (32 work-items) cover 4 x 8 tiles where the tiling
/// allows, else the layout is row-major.
fn layout(tid: Expr<u32>, rows: u32, cols: u32) -> (Expr<u32>, Expr<u32>) {
    if cols.is_multiple_of(8) && rows.is_multiple_of(4) {
        let lane = tid % 32u32;
        let warp = tid / 32u32;
        let warps_per_row = cols / 8;
        let ty = warp / warps_per_row * 4u32 + lane / 8u32;
        let tx = warp % warps_per_row * 8u32 + lane % 8u32;
        (ty, tx)
    } else {
        (tid / cols, tid % cols)
    }
}

/// One tile of `A` and one of `B` in registers, on their way from global to local memory.
type Staged = (Vec<Expr<[f32; 4]>>, Vec<Expr<[f32; 4]>>);

/// Records the SGEMM kernel of `c` (validated) into the current kernel definition.
fn record(kd: &mut KernelDef, c: SgemmConfig) {
    let a = kd.read::<f32>("a");
    let b = kd.read::<f32>("b");
    let out = kd.write::<f32>("c");
    let m = kd.scalar::<u32>("m");
    let n = kd.scalar::<u32>("n");
    let k = kd.scalar::<u32>("k");
    let (a_tile, b_tile) = (c.a_tile_vecs(), c.b_tile_vecs());
    let (a_row, b_row) = (c.a_row_vecs(), c.b_row_vecs());
    let a_s: LocalArray<[f32; 4]> = kd.local_array("a_tile", 2 * a_tile);
    let b_s: LocalArray<[f32; 4]> = kd.local_array("b_tile", 2 * b_tile);
    let threads = c.threads();
    // Register tiles per work-group, down and across.
    let (rows, cols) = (c.block_m / c.thread_m, c.block_n / c.thread_n);

    // Which block of C this work-group computes.
    let blocks_m = m / c.block_m;
    let blocks_n = n / c.block_n;
    let g = group_id(0);
    let (bm, bn) = if c.group_m > 1 {
        // Bands of `group_m` block rows, walked column by column.
        let band = blocks_n * c.group_m;
        let first = g / band * c.group_m;
        let height = (blocks_m - first).min(c.group_m);
        let in_band = g % band;
        (first + in_band % height, in_band / height)
    } else {
        (g / blocks_n, g % blocks_n)
    };
    let row0 = (bm * c.block_m).named("row0");
    let col0 = (bn * c.block_n).named("col0");
    let tid = local_id(0);
    let (ty, tx) = layout(tid, rows, cols);
    let (ty, tx) = (ty.named("ty"), tx.named("tx"));

    // Global -> local copies. A: work-item load `j` reads rows 4 * ga .. 4 * ga + 4 of A at
    // column ka of the tile (4 scalars, consecutive work-items along k) and stores them as one
    // vector at [ka][ga] of the transposed tile. B: load `j` reads 4 consecutive columns of one
    // row and stores them as they are.
    let a_loads = c.block_m / 4 * c.block_k / threads;
    let b_loads = c.block_k * (c.block_n / 4) / threads;
    let a_src: Vec<(Expr<u32>, Expr<u32>)> = (0..a_loads)
        .map(|j| {
            let p = tid + j * threads;
            let (ka, ga) = (p % c.block_k, p / c.block_k);
            let src = ((row0 + ga * 4u32) * k + ka).named("a_src");
            let dst = (ka * a_row + ga).named("a_dst");
            (src, dst)
        })
        .collect();
    let b_src: Vec<(Expr<u32>, Expr<u32>)> = (0..b_loads)
        .map(|j| {
            let q = tid + j * threads;
            let (kb, gb) = (q / (c.block_n / 4), q % (c.block_n / 4));
            let src = (kb * n + col0 + gb * 4u32).named("b_src");
            let dst = (kb * b_row + gb).named("b_dst");
            (src, dst)
        })
        .collect();
    let b_step = (n * c.block_k).named("b_step");
    // Loads the tile `t` of k into registers; `store` then writes them at buffer offsets.
    let load = |t: Expr<u32>| -> Staged {
        let a_off = t * c.block_k;
        let b_off = t * b_step;
        let av = a_src
            .iter()
            .map(|&(src, _)| {
                let s = src + a_off;
                let v: [Expr<f32>; 4] = std::array::from_fn(|i| a.at(s + k * i as u32));
                vec4(v[0], v[1], v[2], v[3])
            })
            .collect();
        let bv = b_src
            .iter()
            .map(|&(src, _)| {
                let s = src + b_off;
                let v: [Expr<f32>; 4] = std::array::from_fn(|i| b.at(s + i as u32));
                vec4(v[0], v[1], v[2], v[3])
            })
            .collect();
        (av, bv)
    };
    let store = |(av, bv): Staged, a_buf: Expr<u32>, b_buf: Expr<u32>| {
        for (v, &(_, dst)) in av.into_iter().zip(&a_src) {
            a_s.set(a_buf + dst, v);
        }
        for (v, &(_, dst)) in bv.into_iter().zip(&b_src) {
            b_s.set(b_buf + dst, v);
        }
    };

    let acc: Vec<Vec<Var<f32>>> = (0..c.thread_m)
        .map(|r| {
            (0..c.thread_n)
                .map(|j| var_named(&format!("c{r}x{j}"), 0.0f32))
                .collect()
        })
        .collect();

    // The first tile, into buffer 0.
    store(load(lit(0u32)), lit(0u32), lit(0u32));
    barrier_local();
    let tiles = (k / c.block_k).named("tiles");
    for_range(0u32, tiles, |t| {
        // Prefetch the next tile (the last iteration loads its own tile again, unused).
        let next = load((t + 1u32).min(tiles - 1u32));
        let odd = t & 1u32;
        let (a_cur, b_cur) = ((odd * a_tile).named("a_cur"), (odd * b_tile).named("b_cur"));
        let a_base = (a_cur + ty).named("a_base");
        let b_base = (b_cur + tx).named("b_base");
        for kk in 0..c.block_k {
            let af: Vec<Expr<[f32; 4]>> = (0..c.thread_m / 4)
                .map(|gi| a_s.at(a_base + (kk * a_row + gi * rows)))
                .collect();
            let bf: Vec<Expr<[f32; 4]>> = (0..c.thread_n / 4)
                .map(|hi| b_s.at(b_base + (kk * b_row + hi * cols)))
                .collect();
            for (r, row) in acc.iter().enumerate() {
                let x = af[r / 4].get((r % 4) as u8);
                for (j, v) in row.iter().enumerate() {
                    let y = bf[j / 4].get((j % 4) as u8);
                    v.set(x.fma(y, v.get()));
                }
            }
        }
        store(next, lit(a_tile) - a_cur, lit(b_tile) - b_cur);
        barrier_local();
    });

    // C: row 4 * (gi * rows + ty) + i, columns 4 * (hi * cols + tx) + 0..4.
    for (r, row) in acc.iter().enumerate() {
        let (gi, i) = (r as u32 / 4, r as u32 % 4);
        let crow = row0 + (ty + gi * rows) * 4u32 + i;
        let base = (crow * n + col0 + tx * 4u32).named("c_dst");
        for (j, v) in row.iter().enumerate() {
            let (hi, jj) = (j as u32 / 4, j as u32 % 4);
            out.set(base + (hi * cols * 4 + jj), v.get());
        }
    }
}

/// Builds the SGEMM kernel of a tiling (after [`SgemmConfig::validate`]). Its parameters are
/// `a: Buffer<f32>` (read), `b: Buffer<f32>` (read), `c: Buffer<f32>` (written), `m`, `n`,
/// `k: u32`; launch it over [`SgemmConfig::range`]. [`Sgemm`] does both and checks the sizes.
pub fn sgemm_kernel(config: &SgemmConfig) -> Result<Kernel> {
    config.validate()?;
    let c = *config;
    Kernel::build(&c.name(), move |kd| record(kd, c))
}

/// An SGEMM kernel built for one tiling, with launches that check their sizes.
#[derive(Clone, Debug)]
pub struct Sgemm {
    config: SgemmConfig,
    kernel: Kernel,
}

impl Sgemm {
    /// Builds the kernel of `config` (see [`sgemm_kernel`]).
    pub fn new(config: SgemmConfig) -> Result<Sgemm> {
        Ok(Sgemm {
            kernel: sgemm_kernel(&config)?,
            config,
        })
    }

    /// The tiling.
    pub fn config(&self) -> &SgemmConfig {
        &self.config
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Starts `c = a * b` (row-major `m x k` times `k x n`) on `queue` after the events in
    /// `wait`, without blocking. Fails with [`Error::InvalidWorkSize`] for sizes the tiling does
    /// not divide and [`Error::ArgumentLength`] for buffers of the wrong length.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        queue: &Queue,
        a: &Buffer<f32>,
        b: &Buffer<f32>,
        c: &Buffer<f32>,
        m: usize,
        n: usize,
        k: usize,
        wait: &[&Event],
    ) -> Result<Run> {
        let range = self.config.range(m, n, k)?;
        for (index, name, buf, want) in [(0, "a", a, m * k), (1, "b", b, k * n), (2, "c", c, m * n)]
        {
            if buf.len() != want {
                return Err(Error::ArgumentLength {
                    kernel: self.kernel.name().to_string(),
                    index,
                    name: name.into(),
                    expected: want as u64,
                    got: buf.len() as u64,
                });
            }
        }
        let args: [KernelArg<'_>; 6] = [
            a.into(),
            b.into(),
            c.into(),
            (m as u32).into(),
            (n as u32).into(),
            (k as u32).into(),
        ];
        self.kernel.enqueue(queue, range, &args, wait)
    }

    /// `c = a * b` (row-major `m x k` times `k x n`), waiting for the result; see
    /// [`Sgemm::enqueue`] for the checks.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        queue: &Queue,
        a: &Buffer<f32>,
        b: &Buffer<f32>,
        c: &Buffer<f32>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<Run> {
        let run = self.enqueue(queue, a, b, c, m, n, k, &[])?;
        run.wait()?;
        Ok(run)
    }
}
