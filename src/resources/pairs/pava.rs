//! Isotonic regression (PAVA) state for non-metric stress: the stack of pooled blocks.
//!
//! Scan 1 hands over each d^X tie group as one pooled block (its size and the mean of its d^Y);
//! the stack merges blocks while their means decrease (scikit-learn's PAVA) and adds each
//! merge's `δ² w_a w_b / (w_a + w_b)` to the residual. On the external path the bottom of the
//! stack spills to a file in the workspace.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use super::super::workspace::Workspace;
use crate::error::Result;
use crate::sum::Compensated;

/// A PAVA block (weight, mean) packed in a u128.
#[inline]
fn pack(w: u64, mean: f64) -> u128 {
    ((w as u128) << 64) | mean.to_bits() as u128
}
#[inline]
fn unpack(b: u128) -> (u64, f64) {
    ((b >> 64) as u64, f64::from_bits(b as u64))
}

/// The PAVA stack; the external path spills its bottom to a file in the workspace.
pub(crate) struct PavaStack {
    mem: Vec<u128>,
    cap: usize,
    spill: Option<(File, PathBuf, u64)>,
    dir: Option<PathBuf>,
}

impl PavaStack {
    /// In memory, in `store`'s allocation (cleared; never grows past its capacity when that
    /// is at least the number of pairs).
    pub fn in_memory(mut store: Vec<u128>) -> Self {
        store.clear();
        PavaStack { cap: usize::MAX, mem: store, spill: None, dir: None }
    }
    /// At most `cap` blocks in memory, the rest in a file in `ws`.
    pub fn spilling(ws: &Workspace, cap: usize) -> Self {
        let cap = cap.max(4);
        PavaStack { mem: Vec::with_capacity(cap), cap, spill: None, dir: Some(ws.path().to_path_buf()) }
    }
    pub(super) fn into_store(mut self) -> Vec<u128> {
        std::mem::take(&mut self.mem)
    }
    fn spilled(&self) -> u64 {
        self.spill.as_ref().map_or(0, |s| s.2)
    }
    fn push(&mut self, b: u128) -> Result<()> {
        if self.mem.len() >= self.cap {
            let half = self.cap / 2;
            if self.spill.is_none() {
                let path = self.dir.as_ref().expect("a spilling stack has a directory").join("pava.bin");
                let file = Workspace::create_file(&path)?;
                self.spill = Some((file, path, 0));
            }
            let (file, path, len) = self.spill.as_mut().expect("spill file");
            let bytes: Vec<u8> = self.mem[..half].iter().flat_map(|b| b.to_le_bytes()).collect();
            file.seek(SeekFrom::Start(*len * 16))
                .and_then(|_| file.write_all(&bytes))
                .map_err(|e| Workspace::io_error(path, e))?;
            *len += half as u64;
            self.mem.drain(..half);
        }
        self.mem.push(b);
        Ok(())
    }
    /// The top block, reloading from the spill file when the memory part is empty.
    fn top(&mut self) -> Result<Option<u128>> {
        if self.mem.is_empty() && self.spilled() > 0 {
            let (file, path, len) = self.spill.as_mut().expect("spill file");
            let k = ((self.cap / 2) as u64).min(*len).max(1);
            let mut bytes = vec![0u8; (k * 16) as usize];
            file.seek(SeekFrom::Start((*len - k) * 16))
                .and_then(|_| file.read_exact(&mut bytes))
                .and_then(|_| file.set_len((*len - k) * 16))
                .map_err(|e| Workspace::io_error(path, e))?;
            *len -= k;
            self.mem.extend(bytes.chunks_exact(16).map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes"))));
        }
        Ok(self.mem.last().copied())
    }
    /// Adds a pooled group and merges while the order is violated (sklearn's PAVA).
    #[inline]
    pub(super) fn add(&mut self, w: u64, mean: f64, raw: &mut Compensated) -> Result<()> {
        if let Some(&t) = self.mem.last()
            && unpack(t).1 <= mean
            && self.mem.len() < self.cap
        {
            self.mem.push(pack(w, mean));
            return Ok(());
        }
        self.add_slow(w, mean, raw)
    }

    fn add_slow(&mut self, w: u64, mean: f64, raw: &mut Compensated) -> Result<()> {
        let (mut w, mut mean) = (w, mean);
        while let Some(t) = self.top()? {
            let (tw, tmean) = unpack(t);
            if tmean <= mean {
                break;
            }
            self.mem.pop();
            let total = tw + w;
            let (wa, wb, wf) = (tw as f64, w as f64, total as f64);
            let d = mean - tmean;
            raw.add(d * d * (wa * wb / wf));
            mean = tmean + d * (wb / wf);
            w = total;
        }
        self.push(pack(w, mean))
    }
}

impl Drop for PavaStack {
    fn drop(&mut self) {
        if let Some((file, path, _)) = self.spill.take() {
            // Closed before removed (Windows refuses to remove an open file). On wasm32 `File`
            // holds nothing to drop, hence the allow.
            #[allow(clippy::drop_non_drop)]
            drop(file);
            let _ = std::fs::remove_file(path);
        }
    }
}
