//! The external path of the pair order: sorted runs in a temporary workspace, merged k ways.
//!
//! Used when the in-memory path's 32 bytes per pair exceed the memory budget. The budget
//! bounds the pair buffers (runs, merge buffers and the in-memory part of the PAVA stack); the
//! O(n) scratch per worker (distance rows, one row's records) comes on top. The temporary
//! space needed is computed exactly from n and the budget before any work starts
//! ([`ExternalPlan::new`]); it fails with [`Error::PairOrderMemory`] or [`Error::PairOrderTemp`] when
//! a budget cannot hold the job. The workspace is removed on success, on error and on interruption.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::pairs::{LOW, OrderPath, OrderStats, PavaStack, Scan1, Scan2, fill, final_payload, open_payload, stats};
use super::radix;
use super::workspace::Workspace;
use crate::control::Control;
use crate::data::Points;
use crate::error::{Error, Result};

const RECORD: u64 = 16;
/// The smallest memory budget the external path accepts.
pub const MIN_MEMORY: u64 = 64 << 10;

/// Sizes of an external sort, derived from the pair count and the budgets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExternalPlan {
    /// Records per sorted run (the run and its sort scratch take half the memory budget).
    pub run_records: u64,
    /// Runs merged at once.
    pub fan_in: usize,
    /// Bytes of each file buffer.
    pub io_buffer: usize,
    /// PAVA blocks kept in memory.
    pub stack_blocks: usize,
    /// Runs of the first sort.
    pub runs: u64,
    /// Merge passes over the data before the final, streamed one (per sort).
    pub merge_levels: u32,
    /// The most temporary space the job can take, in bytes.
    pub temp_peak: u64,
}

impl ExternalPlan {
    /// Plans an external sort of `pairs` records under `memory` bytes of buffers and, when
    /// given, `temp` bytes of temporary space.
    pub fn new(pairs: u64, rank: bool, nm: bool, memory: u64, temp: Option<u64>) -> Result<ExternalPlan> {
        if memory < MIN_MEMORY {
            return Err(Error::PairOrderMemory {
                budget: memory,
                pairs,
                in_memory: super::pairs::in_memory_bytes(pairs),
                external_min: MIN_MEMORY,
            });
        }
        let io_buffer = (memory / 64).clamp(4 << 10, 1 << 20) as usize;
        let fan_in = ((memory / 4) / io_buffer as u64).saturating_sub(1).clamp(2, 512) as usize;
        let run_records = (memory / 2 / (2 * RECORD)).max(16);
        let stack_blocks = (memory / 8 / RECORD).max(16) as usize;
        let runs = pairs.div_ceil(run_records).max(1);
        let sizes = run_sizes(pairs, run_records);
        let (levels, peak_sort) = simulate(&sizes, fan_in, 0);
        let data = pairs * RECORD;
        // The first sort's merge streams into the second sort's runs and the PAVA spill
        // (at most one block per pair).
        let streaming = data + if rank { data } else { 0 } + if nm { data } else { 0 };
        let peak = peak_sort.max(streaming).max(data);
        if let Some(t) = temp
            && peak > t
        {
            return Err(Error::PairOrderTemp { budget: t, pairs, memory_budget: memory, needed: peak });
        }
        Ok(ExternalPlan { run_records, fan_in, io_buffer, stack_blocks, runs, merge_levels: levels, temp_peak: peak })
    }
}

fn run_sizes(records: u64, per_run: u64) -> Vec<u64> {
    let mut v = vec![per_run; (records / per_run) as usize];
    if !records.is_multiple_of(per_run) || v.is_empty() {
        v.push(records % per_run);
    }
    v
}

/// Merge levels and the peak bytes on disk while merging runs of `sizes` records down to at
/// most `fan_in` runs, with `base` other bytes present; the same schedule as [`merge`].
fn simulate(sizes: &[u64], fan_in: usize, base: u64) -> (u32, u64) {
    let mut level: Vec<u64> = sizes.to_vec();
    let mut on_disk: u64 = level.iter().sum::<u64>() * RECORD + base;
    let mut peak = on_disk;
    let mut levels = 0;
    while level.len() > fan_in {
        levels += 1;
        let mut next = Vec::new();
        for group in level.chunks(fan_in) {
            let total: u64 = group.iter().sum();
            if group.len() > 1 {
                peak = peak.max(on_disk + total * RECORD);
            }
            next.push(total);
        }
        level = next;
        on_disk = level.iter().sum::<u64>() * RECORD + base;
    }
    (levels, peak)
}

/// One sorted run on disk.
#[derive(Debug, Clone)]
struct Run {
    path: PathBuf,
}

/// Collects records, sorting and writing a run whenever its buffer is full.
struct RunWriter<'w> {
    ws: &'w Workspace,
    tag: &'static str,
    buf: Vec<u128>,
    scratch: Vec<u128>,
    cap: usize,
    io_buffer: usize,
    /// Records written out so far (the buffer holds the records from here on, in order).
    flushed: u64,
    runs: Vec<Run>,
    counter: &'w mut usize,
}

impl<'w> RunWriter<'w> {
    fn new(ws: &'w Workspace, tag: &'static str, plan: &ExternalPlan, counter: &'w mut usize) -> Self {
        let cap = plan.run_records as usize;
        RunWriter {
            ws,
            tag,
            buf: Vec::with_capacity(cap),
            scratch: Vec::new(),
            cap,
            io_buffer: plan.io_buffer,
            flushed: 0,
            runs: Vec::new(),
            counter,
        }
    }

    #[inline]
    fn push(&mut self, rec: u128) -> Result<()> {
        self.buf.push(rec);
        if self.buf.len() >= self.cap {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.scratch.resize(self.buf.len(), 0);
        radix::sort(&mut self.buf, &mut self.scratch);
        let path = new_file(self.ws, self.tag, self.counter);
        write_run(&path, &self.buf, self.io_buffer)?;
        self.runs.push(Run { path });
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// A d^X tie group ended: its records still in the buffer get their final payload; when
    /// some were already written, the group's size is recorded for scan 2.
    fn end_group(&mut self, start: u64, count: u64, a: u64, spans: &mut HashMap<u64, u64>) {
        let end = start + count;
        let from = start.max(self.flushed);
        let p = final_payload(a);
        for t in from..end {
            let r = &mut self.buf[(t - self.flushed) as usize];
            *r = (*r & !LOW) | p;
        }
        if start < self.flushed {
            spans.insert(start, count);
        }
    }

    fn finish(mut self) -> Result<Vec<Run>> {
        self.flush()?;
        Ok(self.runs)
    }
}

fn new_file(ws: &Workspace, tag: &str, counter: &mut usize) -> PathBuf {
    *counter += 1;
    ws.path().join(format!("{tag}-{:06}.run", *counter))
}

fn write_run(path: &Path, recs: &[u128], io_buffer: usize) -> Result<()> {
    let io = |e| Workspace::io_error(path, e);
    let file = Workspace::create_file(path)?;
    let mut w = BufWriter::with_capacity(io_buffer, file);
    for r in recs {
        w.write_all(&r.to_le_bytes()).map_err(io)?;
    }
    w.flush().map_err(io)
}

struct RunReader {
    r: BufReader<File>,
    path: PathBuf,
}

impl RunReader {
    fn open(run: &Run, io_buffer: usize) -> Result<Self> {
        let f = File::open(&run.path).map_err(|e| Workspace::io_error(&run.path, e))?;
        Ok(RunReader { r: BufReader::with_capacity(io_buffer, f), path: run.path.clone() })
    }
    fn next(&mut self) -> Result<Option<u128>> {
        let mut b = [0u8; 16];
        match self.r.read_exact(&mut b) {
            Ok(()) => Ok(Some(u128::from_le_bytes(b))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(Workspace::io_error(&self.path, e)),
        }
    }
}

/// Merges `runs` into one sorted stream fed to `sink`, first merging groups of `fan_in` runs
/// into longer runs while there are more than `fan_in` (each group's inputs are deleted when
/// it is done).
fn merge(
    ws: &Workspace,
    runs: Vec<Run>,
    plan: &ExternalPlan,
    counter: &mut usize,
    ctl: &Control,
    total: u64,
    mut sink: impl FnMut(u128) -> Result<()>,
) -> Result<()> {
    let mut level = runs;
    while level.len() > plan.fan_in {
        let mut next = Vec::new();
        for group in level.chunks(plan.fan_in) {
            if group.len() == 1 {
                next.push(group[0].clone());
                continue;
            }
            let path = new_file(ws, "m", counter);
            let io = |e| Workspace::io_error(&path, e);
            let file = Workspace::create_file(&path)?;
            let mut w = BufWriter::with_capacity(plan.io_buffer, file);
            kway(group, plan.io_buffer, ctl, "pair order: merge runs", total, |r| {
                w.write_all(&r.to_le_bytes()).map_err(io)
            })?;
            w.flush().map_err(io)?;
            drop(w);
            for r in group {
                std::fs::remove_file(&r.path).map_err(|e| Workspace::io_error(&r.path, e))?;
            }
            next.push(Run { path });
        }
        level = next;
    }
    kway(&level, plan.io_buffer, ctl, "pair order: merge", total, &mut sink)?;
    for r in &level {
        std::fs::remove_file(&r.path).map_err(|e| Workspace::io_error(&r.path, e))?;
    }
    Ok(())
}

fn kway(
    runs: &[Run],
    io_buffer: usize,
    ctl: &Control,
    phase: &'static str,
    total: u64,
    mut sink: impl FnMut(u128) -> Result<()>,
) -> Result<()> {
    let mut readers = runs.iter().map(|r| RunReader::open(r, io_buffer)).collect::<Result<Vec<_>>>()?;
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(x) = r.next()? {
            heap.push(Reverse((x, i)));
        }
    }
    let mut done: u64 = 0;
    while let Some(Reverse((x, i))) = heap.pop() {
        sink(x)?;
        if let Some(y) = readers[i].next()? {
            heap.push(Reverse((y, i)));
        }
        done += 1;
        if done & 0xFFFF == 0 {
            ctl.check()?;
            ctl.report(phase, done, total);
        }
    }
    ctl.report(phase, done, total);
    Ok(())
}

/// Sorts all pairs externally in a workspace under `parent` and scans them.
pub fn external(
    high: &Points,
    low: &Points,
    rank: bool,
    nm: bool,
    plan: &ExternalPlan,
    parent: Option<&Path>,
    ctl: &Control,
) -> Result<OrderStats> {
    let ws = Workspace::create(parent, ctl)?;
    let n = high.n();
    let pairs = (n * (n - 1) / 2) as u64;
    let mut counter = 0usize;

    // Phase 1: the records in runs sorted by (d^X, d^Y).
    let runs1 = {
        let mut w1 = RunWriter::new(&ws, "a", plan, &mut counter);
        let batch = rayon::current_num_threads().max(1) * 2;
        let mut i = 0;
        while i < n {
            ctl.check()?;
            let e = (i + batch).min(n);
            let rows: Vec<Vec<u128>> = (i..e)
                .into_par_iter()
                .map(|r| {
                    let mut out = vec![0u128; n - 1 - r];
                    fill(high, low, r..r + 1, &mut out, 1, ctl).map(|_| out)
                })
                .collect::<Result<_>>()?;
            for row in rows {
                for rec in row {
                    w1.push(rec)?;
                }
            }
            ctl.report("pair order: runs", e as u64, n as u64);
            i = e;
        }
        w1.finish()?
    };

    // Phase 2: merge; scan 1; the records of the second sort in runs.
    let mut counter2 = counter;
    let mut spans: HashMap<u64, u64> = HashMap::new();
    let mut scan = Scan1::new(rank, nm, PavaStack::spilling(&ws, plan.stack_blocks));
    let mut runs2 = Vec::new();
    {
        let mut c2 = 0usize;
        let mut w2 = rank.then(|| RunWriter::new(&ws, "b", plan, &mut c2));
        merge(&ws, runs1, plan, &mut counter2, ctl, pairs, |rec| {
            if let Some(e) = scan.push(rec)?
                && let Some(w2) = w2.as_mut()
            {
                w2.end_group(e.start, e.count, e.a, &mut spans);
            }
            if let Some(w2) = w2.as_mut() {
                w2.push((rec << 64) | open_payload(scan.group_start()))?;
            }
            Ok(())
        })?;
        if let Some(e) = scan.finish()?
            && let Some(w2) = w2.as_mut()
        {
            w2.end_group(e.start, e.count, e.a, &mut spans);
        }
        if let Some(w2) = w2 {
            runs2 = w2.finish()?;
        }
        scan.release_stack();
    }

    // Phase 3: merge the second sort; scan 2.
    let scan2 = if rank {
        let mut s2 = Scan2::default();
        merge(&ws, runs2, plan, &mut counter2, ctl, pairs, |rec| {
            s2.push(rec, &spans);
            Ok(())
        })?;
        s2.finish();
        Some(s2)
    } else {
        None
    };
    let out =
        stats(pairs, &scan, scan2.as_ref(), OrderPath::External { runs: plan.runs, merge_levels: plan.merge_levels });
    drop(ws);
    Ok(out)
}
