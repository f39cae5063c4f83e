//! The in-memory driver of the pair order: every record in one array, sorted by the radix sort
//! and scanned, or, for Spearman's ρ alone, ranked in cache-sized buckets ([`super::bucketed`]).
//!
//! The sorted sequence of records is unique, so this path and the external one
//! ([`crate::resources::ExternalPlan`]) hand the same sequence to the same scans and give the
//! same bits.

use super::super::radix;
use super::bucketed::{self, Layout, Writer};
use super::extent::Extent;
use super::order_stats::{OrderPath, OrderStats, RankMoments};
use super::pair_pass::{PairJob, pair_pass};
use super::pava::PavaStack;
use super::record::{by_y, set_payload};
use super::scans::{Scan1, rank_scan_parallel, scan2_parallel, stats};
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;

/// Bytes the in-memory path holds: the records, the sort's scratch, and the bucketed path's
/// per-thread scratch.
pub fn in_memory_bytes(pairs: u64) -> u64 {
    pairs.saturating_mul(32).saturating_add(bucketed::scratch_bytes(pairs))
}

/// Sorts all pairs in memory and scans them.
pub fn in_memory(
    high: &Points,
    low: &Points,
    rank: bool,
    nm: bool,
    block_rows: usize,
    ctl: &Control,
) -> Result<OrderStats> {
    let n = high.n();
    let writer = Writer::new(high, low);
    let mut v = vec![0u128; n * (n - 1) / 2];
    let job = PairJob { high_extent: true, sums: false, records: Some((&mut v, &writer)), densities: None };
    let pass = pair_pass(high, &[low], job, block_rows, ctl)?;
    let (hx, lx) = (pass.high.expect("measured"), pass.lows[0].0);
    order_records(v, writer.finish(pass.record_starts), hx, lx, rank, nm, ctl)
}

/// The pair order of the records that [`pair_pass`] laid out, with both spaces' extents: the
/// bucketed path for ranks alone ([`bucketed`]), else (or when a bucket is too large) the
/// full sort.
pub(crate) fn order_records(
    v: Vec<u128>,
    layout: Layout,
    high: Extent,
    low: Extent,
    rank: bool,
    nm: bool,
    ctl: &Control,
) -> Result<OrderStats> {
    if rank && !nm && v.len() >= bucketed::MIN_PAIRS {
        ctl.report(PHASE, 1, 2);
        let p = v.len() as u64;
        match bucketed::rank_sums(v, &layout, bucketed::chunk_limit(p), ctl)? {
            Ok(((sxx, sxy, syy), path)) => {
                ctl.report(PHASE, 2, 2);
                let ranks = Some(RankMoments::from_sums(p, sxx, sxy, syy));
                return Ok(OrderStats { pairs: p, high, low, ranks, isotonic: None, path });
            }
            Err(v) => return sort_and_scan(v, rank, nm, ctl),
        }
    }
    sort_and_scan(v, rank, nm, ctl)
}

const PHASE: &str = "pair order";

/// Sorts the records of all pairs (in [`super::record::fill`]'s layout, already written) and
/// scans them.
pub fn sort_and_scan(mut v: Vec<u128>, rank: bool, nm: bool, ctl: &Control) -> Result<OrderStats> {
    let p = v.len();
    let steps = if rank { 5 } else { 3 };
    ctl.report(PHASE, 1, steps);
    let mut buf = vec![0u128; p];
    radix::sort(&mut v, &mut buf);
    ctl.check()?;
    ctl.report(PHASE, 2, steps);
    let scan = if nm {
        let mut scan = Scan1::new(rank, nm, PavaStack::in_memory(buf));
        for k in 0..p {
            let rec = v[k];
            if let Some(e) = scan.push(rec)?
                && rank
            {
                set_payload(&mut v[e.start as usize..k], e.a);
            }
            if rank {
                v[k] = by_y(rec, 0);
            }
            if k & 0xF_FFFF == 0 {
                ctl.check()?;
            }
        }
        if let Some(e) = scan.finish()?
            && rank
        {
            set_payload(&mut v[e.start as usize..p], e.a);
        }
        buf = scan.take_store();
        scan
    } else {
        // Ranks only: integer work on independent tie groups, done in parallel (exact sums,
        // so the same as the sequential scan).
        rank_scan_parallel(&mut v)
    };
    ctl.report(PHASE, 3, steps);
    let scan2 = if rank {
        buf.resize(p, 0);
        radix::sort(&mut v, &mut buf);
        ctl.check()?;
        ctl.report(PHASE, 4, steps);
        let s2 = scan2_parallel(&v);
        ctl.report(PHASE, 5, steps);
        Some(s2)
    } else {
        None
    };
    Ok(stats(p as u64, &scan, scan2.as_ref(), OrderPath::InMemory))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::distance_row;

    /// A tiny brute force: average ranks, Pearson of ranks, PAVA on pooled ties.
    fn brute(x: &[f64], y: &[f64]) -> (f64, f64) {
        fn avg_ranks(v: &[f64]) -> Vec<f64> {
            let mut o: Vec<usize> = (0..v.len()).collect();
            o.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
            let mut r = vec![0.0; v.len()];
            let mut i = 0;
            while i < o.len() {
                let mut j = i;
                while j + 1 < o.len() && v[o[j + 1]] == v[o[i]] {
                    j += 1;
                }
                for &t in &o[i..=j] {
                    r[t] = (i + j) as f64 / 2.0 + 1.0;
                }
                i = j + 1;
            }
            r
        }
        let (rx, ry) = (avg_ranks(x), avg_ranks(y));
        let m = (x.len() as f64 + 1.0) / 2.0;
        let c = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| (p - m) * (q - m)).sum::<f64>();
        let rho = c(&rx, &ry) / (c(&rx, &rx) * c(&ry, &ry)).sqrt();
        // PAVA with pooled ties.
        let mut o: Vec<usize> = (0..x.len()).collect();
        o.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
        let mut blocks: Vec<(f64, f64, Vec<usize>)> = Vec::new(); // (sum, weight, members)
        let mut i = 0;
        while i < o.len() {
            let mut j = i;
            while j + 1 < o.len() && x[o[j + 1]] == x[o[i]] {
                j += 1;
            }
            let members: Vec<usize> = o[i..=j].to_vec();
            let mut b = (members.iter().map(|&t| y[t]).sum::<f64>(), members.len() as f64, members);
            while let Some(t) = blocks.last() {
                if t.0 / t.1 > b.0 / b.1 {
                    let t = blocks.pop().unwrap();
                    b = (t.0 + b.0, t.1 + b.1, [t.2, b.2].concat());
                } else {
                    break;
                }
            }
            blocks.push(b);
            i = j + 1;
        }
        let mut raw = 0.0;
        for (s, w, m) in &blocks {
            for &t in m {
                raw += (y[t] - s / w).powi(2);
            }
        }
        let norm: f64 = y.iter().map(|v| v * v).sum();
        (rho, (raw / norm).sqrt())
    }

    #[test]
    fn matches_brute_force_on_tied_data() {
        let n = 40;
        let hx: Vec<f64> = (0..n * 2).map(|t| ((t * 7) % 5) as f64).collect();
        let lx: Vec<f64> = (0..n).map(|t| ((t * 3) % 4) as f64).collect();
        let high = Points::from_vec("h", n, 2, hx).unwrap();
        let low = Points::from_vec("l", n, 1, lx).unwrap();
        let got = in_memory(&high, &low, true, true, 3, &Control::default()).unwrap();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let (mut dx, mut dy) = (vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            distance_row(&high, i, &mut dx);
            distance_row(&low, i, &mut dy);
            x.extend_from_slice(&dx[i + 1..]);
            y.extend_from_slice(&dy[i + 1..]);
        }
        let (rho, nm) = brute(&x, &y);
        let (raw, norm) = got.isotonic.unwrap();
        assert!((got.ranks.unwrap().rho().unwrap() - rho).abs() < 1e-12, "{:?} {rho}", got.ranks);
        assert!(((raw / norm).sqrt() - nm).abs() < 1e-12);
    }
}
