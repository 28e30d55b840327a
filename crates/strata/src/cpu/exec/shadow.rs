//! Checked mode's shadow memory: data races and reads of uninitialized memory.
//!
//! For every element a checked launch touches, the shadow keeps its last writer, up to two
//! readers since, and whether anything wrote it ([`Cell`]). An access races with an earlier
//! one of another work-item when no barrier of their work-group lies between them (the
//! work-group's *phase*, its count of barriers and work-group collectives passed, is the
//! same), or when they are in different work-groups of one launch (unless the kernel orders
//! its work-groups itself with fences or ordered atomics, which the shadow does not follow);
//! atomics race with nothing. Buffers are shadowed per launch ([`GlobalShadow`]), local
//! memory per work-group and private arrays per work-item (in the [`Worker`]); whether a
//! buffer's bytes were written lives with the buffer ([`CpuMem`](crate::cpu::CpuMem)).

use super::run::Worker;
use super::MemRef;
use crate::error::{Error, RaceAccess, Result};
use crate::ir::{IdVec, Mem, ParamId, SourceLoc};
use crate::runtime::ArgValue;

/// Checked mode: one access in shadow memory.
#[derive(Clone, Copy, Debug)]
struct Acc {
    group: [u32; 3],
    /// Local linear id.
    lane: u32,
    /// Barriers (and work-group collectives) the work-group had passed.
    phase: u32,
    at: SourceLoc,
}

impl Acc {
    fn same_item(&self, o: &Acc) -> bool {
        self.group == o.group && self.lane == o.lane
    }
}

/// Checked mode: the shadow of one element: its last writer, up to two readers since, and
/// whether anything wrote it (local memory).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cell {
    w: Option<Acc>,
    r: [Option<Acc>; 2],
    init: bool,
}

/// What a shadowed access does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Read,
    Write,
    /// An atomic: reads (for uninitialized memory) and writes, but races with nothing.
    Atomic,
    /// An atomic load.
    AtomicRead,
}

impl Cell {
    /// Records `me`; returns the earlier access it races with, and whether that one wrote.
    fn touch(&mut self, me: Acc, kind: Kind, cross_group: bool) -> Option<(Acc, bool)> {
        let unordered = |p: &Acc| {
            !p.same_item(&me)
                && if p.group == me.group {
                    p.phase == me.phase
                } else {
                    cross_group
                }
        };
        match kind {
            Kind::Atomic => {
                self.init = true;
                return None;
            }
            Kind::AtomicRead => return None,
            Kind::Read | Kind::Write => {}
        }
        if let Some(w) = self.w.filter(|w| unordered(w)) {
            return Some((w, true));
        }
        if kind == Kind::Write {
            if let Some(r) = self.r.iter().flatten().find(|r| unordered(r)) {
                return Some((*r, false));
            }
            self.w = Some(me);
            self.r = [None, None];
            self.init = true;
        } else if self.r[0].is_none_or(|r| r.same_item(&me) || !unordered(&r)) {
            self.r[0] = Some(me);
        } else {
            self.r[1] = Some(me);
        }
        None
    }
}

/// Checked mode: the shadow of a launch's buffers, by parameter: cells by byte offset, in
/// shards so that work-groups running in parallel rarely wait for each other.
pub(super) struct GlobalShadow {
    bufs: IdVec<ParamId, Vec<std::sync::Mutex<std::collections::HashMap<u64, Cell>>>>,
}

const SHARDS: usize = 64;

impl GlobalShadow {
    /// The shadow of a launch with arguments `args`: empty, a set of shards per buffer.
    pub(super) fn new(args: &[ArgValue]) -> GlobalShadow {
        GlobalShadow {
            bufs: args
                .iter()
                .map(|a| match a {
                    ArgValue::Buffer { .. } => (0..SHARDS).map(|_| Default::default()).collect(),
                    _ => Vec::new(),
                })
                .collect(),
        }
    }
}

impl Worker<'_> {
    /// Checked mode: records the accesses of the active lanes (their indices in `self.idx`,
    /// already checked) in shadow memory, reporting the first data race or read of memory
    /// nobody wrote.
    pub(super) fn shadow(&mut self, m: MemRef, kind: Kind, mask: &[bool]) -> Result<()> {
        let n = self.lanes;
        let reads = matches!(kind, Kind::Read | Kind::Atomic | Kind::AtomicRead);
        for l in (0..n).filter(|&l| mask[l]) {
            let i = self.idx[l];
            let me = Acc {
                group: self.group,
                lane: l as u32,
                phase: self.phase,
                at: m.at,
            };
            let (race, uninit) = match m.mem {
                Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                Mem::Buffer(p) => {
                    let size = m.elem.scalar.size();
                    let off = (i as usize * m.stride + m.offset) * size;
                    let bytes = size * m.elem.width as usize;
                    let mem = self.c.mems[p].expect("a buffer argument");
                    let uninit = reads && !mem.is_written(off, bytes);
                    if kind != Kind::Read {
                        mem.mark_written(off, bytes);
                    }
                    let shards = &self.c.shadow.expect("checked").bufs[p];
                    let key = off as u64;
                    let race = shards[(key as usize / size) % SHARDS]
                        .lock()
                        .unwrap()
                        .entry(key)
                        .or_default()
                        .touch(me, kind, self.c.prog.cross_group);
                    (
                        race,
                        uninit.then_some("since the buffer was made by Buffer::uninit"),
                    )
                }
                Mem::Local(a) => {
                    let cell = &mut self.local_cells[a][i as usize];
                    let uninit = reads && !cell.init;
                    (
                        cell.touch(me, kind, false),
                        uninit.then_some("in this work-group"),
                    )
                }
                Mem::Private(a) => {
                    let bit = &mut self.private_init[a][i as usize * n + l];
                    let uninit = reads && !*bit;
                    *bit |= kind != Kind::Read;
                    (None, uninit.then_some("by this work-item"))
                }
            };
            if let Some(why) = uninit {
                return Err(Error::UninitializedRead {
                    kernel: self.c.prog.decls.name.clone(),
                    memory: self.mem_what(m),
                    index: i,
                    item: self.item(l),
                    at: m.at,
                    why,
                });
            }
            if let Some((other, wrote)) = race {
                let name = |w: bool| if w { "write" } else { "read" };
                return Err(Error::DataRace {
                    kernel: self.c.prog.decls.name.clone(),
                    memory: self.mem_what(m),
                    index: i,
                    first: Box::new(RaceAccess::new(
                        name(wrote),
                        crate::cpu::work_item(other.lane as usize, self.c.local, other.group),
                        other.at,
                    )),
                    second: Box::new(RaceAccess::new(
                        name(kind == Kind::Write),
                        self.item(l),
                        m.at,
                    )),
                    why: if other.group == self.group {
                        "with no barrier between them"
                    } else {
                        "in different work-groups of one launch"
                    },
                });
            }
        }
        Ok(())
    }
}
