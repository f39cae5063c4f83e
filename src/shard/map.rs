//! [`Evaluator::map_rows`]: one block's partial, from the very row pass and measure code of a
//! full run, and the fingerprint that keeps partials of different runs apart.

use std::ops::Range;

use super::{
    PARTIAL_FORMAT, PARTIAL_VERSION, Partial, PartialLocal, PartialScore, PartialWork, check_shardable, is_block, plan,
};
use crate::backend::Numerics;
use crate::data::{Labels, Points};
use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::measures::coranking;
use crate::measures::{Ctx, Resolved};
use crate::resources::{CrossRanks, Needs, Neighbours, nerv_rows};
use crate::spec::Spec;
use crate::sum::pairwise_sum;

/// Places a block's `m`×k rows at rows `start..` of an n×k list (zeros elsewhere), so that the
/// measures index rows by point as in a full run; the other rows are computed and dropped.
fn spread<T: Copy + Default>(block: Vec<T>, n: usize, k: usize, start: usize) -> Vec<T> {
    let mut full = vec![T::default(); n * k];
    full[start * k..start * k + block.len()].copy_from_slice(&block);
    full
}

impl Evaluator {
    /// Scores `specs` on the rows `rows` of `low` only: the shard's [`Partial`]. `rows` must be
    /// a block of the shard plan ([`is_block`], [`plan`]); every spec must be in [`SHARDABLE`](super::SHARDABLE).
    /// The evaluator's backend serves it as it would a full run (`auto`'s threshold weighs the
    /// block's rows × n pairs), always in the exact posture; [`Partial::backend`] says which
    /// served. The scores do not depend on backend, threads or block size.
    pub fn map_rows(
        &self,
        low: &Points,
        labels: Option<&Labels>,
        rows: Range<usize>,
        specs: &[Spec],
    ) -> Result<Partial> {
        self.on_threads(|| self.map_rows_here(low, labels, rows, specs))
    }

    fn map_rows_here(
        &self,
        low: &Points,
        labels: Option<&Labels>,
        rows: Range<usize>,
        specs: &[Spec],
    ) -> Result<Partial> {
        let high = self.high();
        let n = high.n();
        let resolved = self.validate(&[low], labels, specs)?;
        check_shardable(&resolved)?;
        if rows.start >= rows.end || rows.end > n || !is_block(n, &rows) {
            let near: Vec<String> =
                plan(n, rows.len().max(1)).iter().map(|b| format!("{}:{}", b.start, b.end)).collect();
            let shown = if near.len() > 8 {
                format!("{} ... ({} blocks)", near[..8].join(" "), near.len())
            } else {
                near.join(" ")
            };
            return Err(Error::BadRows {
                start: rows.start,
                end: rows.end,
                n,
                reason: format!("blocks are nodes of the summation tree, e.g. {shown}"),
            });
        }
        let needs = resolved.iter().map(Resolved::needs).fold(Needs::default(), Needs::merge);
        let needs_nerv = Needs { nerv: needs.nerv.clone(), ..Needs::default() };
        // The backend of a full run serves the block (the CPU, or the GPU's certified kernels
        // on rows A:B only), always exact: partials must fold to the reference's bits.
        let (pass, served) = pollster::block_on(self.build(None, None, &[low], needs, rows.clone(), Numerics::Exact))?;
        self.high().distances().map_or(Ok(()), |d| d.check_reads())?;
        #[cfg(feature = "gpu")]
        let adapter = served.gpu.as_ref().map(|(g, _)| g.report.name.clone());
        #[cfg(not(feature = "gpu"))]
        let adapter = None;
        let start = rows.start;
        let knn_high = pass.high.map(|h| Neighbours {
            k: h.k,
            idx: spread(h.idx, n, h.k, start),
            dist: spread(h.dist, n, h.k, start),
        });
        let res = pass.lows.into_iter().next().unwrap_or_default();
        let knn_low = res.knn.map(|l| Neighbours {
            k: l.k,
            idx: spread(l.idx, n, l.k, start),
            dist: spread(l.dist, n, l.k, start),
        });
        let cross = res.cross.map(|c| CrossRanks {
            k: c.k,
            rank_high_of_low: spread(c.rank_high_of_low, n, c.k, start),
            rank_low_of_high: spread(c.rank_low_of_high, n, c.k, start),
            dist_high_of_low: spread(c.dist_high_of_low, n, c.k, start),
            dist_low_of_high: spread(c.dist_low_of_high, n, c.k, start),
        });
        let ctl = crate::control::Control::default();
        // nerv: its block's full rows (each row's divergences need only that row).
        let pairwise = if needs_nerv.nerv.is_empty() {
            None
        } else {
            Some(nerv_rows(high, low, &needs_nerv, self.options().block_rows, &ctl, rows.clone())?)
        };
        let ctx = Ctx {
            high,
            low,
            labels,
            knn_high: knn_high.as_ref(),
            knn_low: knn_low.as_ref(),
            cross: cross.as_ref(),
            pairwise: pairwise.as_ref(),
            block_rows: self.options().block_rows,
            local: true,
            ctl: &ctl,
            memory_budget: crate::resources::default_memory_budget(),
        };
        let texts: Vec<String> = resolved.iter().map(spec_text).collect();
        let mut scores = Vec::with_capacity(resolved.len());
        for r in &resolved {
            let (out, counts) = if r.def.id == "coranking" {
                let mut c =
                    coranking::counts_rows(high, low, coranking::k_max(r, n), ctx.block_rows, &ctl, rows.clone())?;
                let local = vec![("local_auc_rnx".to_string(), spread(std::mem::take(&mut c.rows), n, 1, start))];
                (crate::measures::Output { local, ..Default::default() }, Some(c))
            } else {
                ((r.def.compute)(&ctx, r)?, None)
            };
            let locals = r
                .def
                .local_keys()
                .map(|key| {
                    let all = out.local.iter().find(|(k, _)| k == key).map(|(_, v)| v);
                    let all = all.ok_or_else(|| Error::Undefined {
                        id: r.def.id.into(),
                        projection: Some(low.name().into()),
                        reason: format!("no local values under {key}"),
                    })?;
                    let mine = &all[rows.clone()];
                    if let Some(v) = mine.iter().find(|v| !v.is_finite()) {
                        return Err(Error::NonFiniteScore {
                            id: r.def.id.into(),
                            projection: Some(low.name().into()),
                            key: key.to_string(),
                            value: *v,
                        });
                    }
                    Ok(PartialLocal {
                        key: key.to_string(),
                        bits: mine.iter().map(|v| v.to_bits()).collect(),
                        sum_bits: pairwise_sum(mine).to_bits(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            scores.push(PartialScore { id: r.def.id.into(), locals, counts });
        }
        let s = pass.stats;
        Ok(Partial {
            format: PARTIAL_FORMAT.into(),
            version: PARTIAL_VERSION,
            fingerprint: fingerprint(high, low, labels, &texts),
            n,
            dim_high: high.dim(),
            dim_low: low.dim(),
            projection: low.name().into(),
            specs: texts,
            rows: [rows.start, rows.end],
            scores,
            work: PartialWork {
                distance_rows: s.distance_rows,
                ranks_from_knn: s.ranks_from_knn,
                ranks_counted: s.ranks_counted,
                rank_scans: s.rank_scans,
            },
            backend: served.backend.into(),
            adapter,
            fallback_reason: served.fallback_reason,
            metric_high: high.metric().to_string(),
            input_high: high.input().into(),
        })
    }
}

/// FNV-1a 64: a stable hash across platforms and releases (not a cryptographic one).
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn text(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

fn fingerprint(high: &Points, low: &Points, labels: Option<&Labels>, specs: &[String]) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.u64(u64::from(PARTIAL_VERSION));
    for p in [high, low] {
        h.u64(p.n() as u64);
        h.u64(p.dim() as u64);
        p.as_slice().iter().for_each(|v| h.u64(v.to_bits()));
    }
    // The original space's metric, and its distances when they were given.
    h.text(&high.metric().to_string());
    if let Some(d) = high.distances() {
        let mut row = vec![0.0; d.n()];
        for i in 0..d.n() {
            d.row_from(i, 0, &mut row);
            row.iter().for_each(|v| h.u64(v.to_bits()));
        }
    }
    match labels {
        Some(l) => l.codes().iter().for_each(|&c| h.u64(u64::from(c) + 1)),
        None => h.u64(0),
    }
    h.text(low.name());
    specs.iter().for_each(|s| h.text(s));
    format!("{:016x}", h.0)
}

/// A resolved spec as text, defaults filled in; parses back to the same [`Resolved`].
fn spec_text(r: &Resolved) -> String {
    Spec { id: r.def.id.into(), params: r.params.clone() }.to_string()
}
