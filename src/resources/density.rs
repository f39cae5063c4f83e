//! Gaussian densities for `kl_div` and `dtm`, as ZADU 0.5.4 computes them:
//! `p_i ∝ Σ_j exp(−(d(i,j)/max d)² / σ)` over every j (j = i included), normalised to sum 1.
//!
//! The kernel is evaluated with ZADU's operation order (divide by the maximum, square, divide by
//! −σ, exp) once per pair i < j, since d(i,j) = d(j,i) bit for bit, and added to both rows: row
//! i's own share (the j > i) is NumPy's pairwise sum over its pairs; the shares of the earlier
//! rows arrive by columns, summed row by row within fixed groups of [`GROUP`] rows and then
//! group after group. The grouping depends only on n, so the densities are bit-identical for any
//! thread count and block size, in the pair pass or in a pass of their own. Compared with
//! NumPy's `np.sum(kernel, axis=1)` only the summation order differs: all terms are positive,
//! so the relative difference is at most about (GROUP + n/GROUP + log₂ n) ulp, far below the
//! last-place differences of `exp` itself ([`exp_nonpositive`] is within 2 ulp of the correctly
//! rounded value; NumPy's own SIMD `exp` differs from glibc's by an ulp, too).

use std::collections::BTreeMap;
use std::ops::Range as Rows;
use std::sync::Mutex;

use rayon::prelude::*;

use super::exp::exp_nonpositive;
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row_from;
use crate::sum::{lane_tree, pairwise_sum};

/// Rows whose column shares are accumulated together before they join the total.
pub(super) const GROUP: usize = 32;

/// The row groups of a pass that sums densities: [`GROUP`] rows each.
pub(super) fn groups(n: usize) -> Vec<Rows<usize>> {
    (0..n).step_by(GROUP).map(|s| s..(s + GROUP).min(n)).collect()
}

/// Normalised densities of one space for each σ of `sigmas` (same order). `max` is the largest
/// pair distance of the space and must be positive.
pub fn densities(
    points: &Points,
    max: f64,
    sigmas: &[f64],
    ctl: &Control,
    phase: &'static str,
) -> Result<Vec<Vec<f64>>> {
    let n = points.n();
    let sums = DensitySums::new(n, max, sigmas);
    let done = std::sync::atomic::AtomicU64::new(0);
    groups(n).into_par_iter().try_for_each(|rows| {
        ctl.check()?;
        let mut d = vec![0.0; n];
        let mut k = KernelScratch::default();
        let mut g = sums.group(rows.start);
        for i in rows.clone() {
            let tail = &mut d[..n - 1 - i];
            distance_row_from(points, i, i + 1, tail);
            sums.row(&mut g, i, tail, &mut k);
        }
        sums.finish_group(g);
        let r = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
        ctl.report(phase, r, n as u64);
        Ok::<(), crate::Error>(())
    })?;
    Ok(sums.finish())
}

/// Buffers for the kernel values of one row, reused across rows.
#[derive(Default)]
pub(super) struct KernelScratch {
    sq: Vec<f64>,
    arg: Vec<f64>,
    kernel: Vec<f64>,
}

/// The density sums of one space, fed group by group (see the module doc).
pub(super) struct DensitySums {
    n: usize,
    max: f64,
    sigmas: Vec<f64>,
    merged: Mutex<Merged>,
}

/// Groups' column shares, added to `cols` strictly in group order.
struct Merged {
    next: usize,
    pending: BTreeMap<usize, Group>,
    /// Per σ, per point: the shares of the rows before it.
    cols: Vec<Vec<f64>>,
    /// Per point, per σ: its own share (pairs j > i).
    rows: Vec<f64>,
}

/// One group's sums in progress.
pub(super) struct Group {
    start: usize,
    /// Per σ: column shares of this group's rows for the points `start..n`.
    cols: Vec<Vec<f64>>,
    /// Per row of the group, per σ.
    rows: Vec<f64>,
}

impl DensitySums {
    pub fn new(n: usize, max: f64, sigmas: &[f64]) -> Self {
        debug_assert!(max > 0.0 && sigmas.iter().all(|&s| s > 0.0));
        let m = sigmas.len();
        DensitySums {
            n,
            max,
            sigmas: sigmas.to_vec(),
            merged: Mutex::new(Merged {
                next: 0,
                pending: BTreeMap::new(),
                cols: vec![vec![0.0; n]; m],
                rows: vec![0.0; n * m],
            }),
        }
    }

    /// Starts the group whose first row is `start` (a multiple of [`GROUP`]).
    pub fn group(&self, start: usize) -> Group {
        debug_assert_eq!(start % GROUP, 0);
        Group {
            start,
            cols: vec![vec![0.0; self.n - start]; self.sigmas.len()],
            rows: Vec::with_capacity(GROUP * self.sigmas.len()),
        }
    }

    /// Adds row i, given `tail[t] = d(i, i + 1 + t)`; rows of a group come in order.
    pub fn row(&self, g: &mut Group, i: usize, tail: &[f64], k: &mut KernelScratch) {
        let len = tail.len();
        k.sq.resize(len, 0.0);
        k.arg.resize(len, 0.0);
        k.kernel.resize(len, 0.0);
        let max = self.max;
        for (q, &v) in k.sq.iter_mut().zip(tail) {
            let t = v / max;
            *q = t * t;
        }
        let at = i + 1 - g.start;
        for (s, &sigma) in self.sigmas.iter().enumerate() {
            let neg = -sigma;
            for (a, &q) in k.arg.iter_mut().zip(&k.sq) {
                *a = q / neg;
            }
            exp_nonpositive(&k.arg, &mut k.kernel);
            g.rows.push(pairwise_sum(&k.kernel));
            for (c, &v) in g.cols[s][at..].iter_mut().zip(&k.kernel) {
                *c += v;
            }
        }
    }

    /// Hands a finished group over; its column shares join the total in group order.
    pub fn finish_group(&self, g: Group) {
        let mut m = self.merged.lock().expect("density sums");
        m.pending.insert(g.start / GROUP, g);
        loop {
            let next = m.next;
            let Some(g) = m.pending.remove(&next) else { break };
            let Merged { cols, rows, .. } = &mut *m;
            for (total, part) in cols.iter_mut().zip(&g.cols) {
                for (t, &p) in total[g.start..].iter_mut().zip(part) {
                    *t += p;
                }
            }
            rows[g.start * self.sigmas.len()..][..g.rows.len()].copy_from_slice(&g.rows);
            m.next += 1;
        }
    }

    /// The normalised densities per σ, once every group is finished.
    pub fn finish(self) -> Vec<Vec<f64>> {
        let m = self.merged.into_inner().expect("density sums");
        debug_assert!(m.pending.is_empty() && m.next == self.n.div_ceil(GROUP));
        let k = self.sigmas.len();
        (0..k)
            .map(|s| {
                // j = i itself: exp(−0) = 1.
                let raw: Vec<f64> = (0..self.n).map(|i| (m.rows[i * k + s] + m.cols[s][i]) + 1.0).collect();
                let total = pairwise_sum(&raw);
                raw.iter().map(|&v| v / total).collect()
            })
            .collect()
    }
}

/// NeRV's Gaussian kernel over a shifted squared row `sh` (≥ 0): `e_j = e^{−β·sh_j}` as
/// [`exp_nonpositive_flushed`](super::exp::exp_nonpositive_flushed) gives it for the arguments
/// `−β·sh_j`, 0 at `skip`, written to `e`, and its totals `(Σ_j e_j, Σ_j sh_j e_j)` in NumPy's
/// pairwise order. With AVX-512 in one pass (each chunk of eight: the exponent, the
/// exponential, the two lane sums), else
/// [`gaussian_sums_portable`]; both are the same operations per element in the same order,
/// hence the same bits (tested).
pub(crate) fn gaussian_sums(sh: &[f64], beta: f64, skip: usize, e: &mut [f64]) -> [f64; 2] {
    assert!(sh.len() == e.len() && skip < sh.len());
    #[cfg(target_arch = "x86_64")]
    if super::isa::avx512() {
        // SAFETY: the CPU has AVX-512F (checked above); the lengths are checked above.
        return unsafe { gaussian_sums_avx512(sh, beta, skip, e) };
    }
    gaussian_sums_portable(sh, beta, skip, e)
}

/// [`gaussian_sums`] in two loops: the exponentials (vectorised by the compiler), then the sums.
pub(crate) fn gaussian_sums_portable(sh: &[f64], beta: f64, skip: usize, e: &mut [f64]) -> [f64; 2] {
    super::exp::exp_scaled_flushed(beta, sh, e);
    e[skip] = 0.0;
    crate::sum::pairwise_leaves(e.len(), |start, n| {
        let (e, sh) = (&e[start..start + n], &sh[start..start + n]);
        if n < 8 {
            return e.iter().zip(sh).fold([0.0, 0.0], |[a, b], (&e, &s)| [a + e, b + s * e]);
        }
        let full = n - n % 8;
        let (mut re, mut rw) = ([-0.0f64; 8], [-0.0f64; 8]);
        for (ce, cs) in e[..full].chunks_exact(8).zip(sh[..full].chunks_exact(8)) {
            for j in 0..8 {
                re[j] += ce[j];
                rw[j] += cs[j] * ce[j];
            }
        }
        let (mut a, mut b) = (lane_tree(re), lane_tree(rw));
        for (&e, &s) in e[full..].iter().zip(&sh[full..]) {
            a += e;
            b += s * e;
        }
        [a, b]
    })
}

/// [`gaussian_sums`] with AVX-512: [`exp_clamped`]'s steps on eight lanes (multiplications and
/// additions, never fused), the flush and the point itself as masks, the sums as NumPy's eight
/// accumulators of each leaf; a leaf's last n mod 8 terms (and leaves under 8) are scalar.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gaussian_sums_avx512(sh: &[f64], beta: f64, skip: usize, e: &mut [f64]) -> [f64; 2] {
    use super::exp::{LOW, avx512::exp_v, scaled_flushed};
    use std::arch::x86_64::*;
    let (nb, low) = (_mm512_set1_pd(-beta), _mm512_set1_pd(LOW));
    let ep = e.as_mut_ptr();
    crate::sum::pairwise_leaves(sh.len(), |start, n| {
        let mut res = [0.0f64; 2];
        let full = if n >= 8 { n - n % 8 } else { 0 };
        if full > 0 {
            let (mut re, mut rw) = (_mm512_set1_pd(-0.0), _mm512_set1_pd(-0.0));
            for at in (start..start + full).step_by(8) {
                // SAFETY: at + 8 ≤ start + n ≤ len of sh and e (the leaves cover 0..len).
                let x = unsafe { _mm512_loadu_pd(sh.as_ptr().add(at)) };
                let a = _mm512_mul_pd(nb, x);
                let mut flush = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, low);
                if (at..at + 8).contains(&skip) {
                    flush |= 1 << (skip - at);
                }
                // A chunk flushed whole (far points at a wide bandwidth: most of a row) is
                // zeros without its polynomial; the zeros are still added (−0 + 0 = +0).
                let v = if flush == 0xff { _mm512_setzero_pd() } else { _mm512_maskz_mov_pd(!flush, exp_v(a)) };
                // SAFETY: as the load above.
                unsafe { _mm512_storeu_pd(ep.add(at), v) };
                re = _mm512_add_pd(re, v);
                rw = _mm512_add_pd(rw, _mm512_mul_pd(x, v));
            }
            let (mut ar, mut aw) = ([0.0f64; 8], [0.0f64; 8]);
            // SAFETY: eight f64 each.
            unsafe {
                _mm512_storeu_pd(ar.as_mut_ptr(), re);
                _mm512_storeu_pd(aw.as_mut_ptr(), rw);
            }
            res = [lane_tree(ar), lane_tree(aw)];
        }
        for at in start + full..start + n {
            let v = if at == skip { 0.0 } else { scaled_flushed(beta, sh[at]) };
            // SAFETY: at < len of e.
            unsafe { *ep.add(at) = v };
            res[0] += v;
            res[1] += sh[at] * v;
        }
        res
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fused kernel (AVX-512 where the CPU has it) and the two-loop one give the same bits,
    /// on rows with zeros, huge and tiny values, the point itself anywhere, every leaf shape,
    /// and bandwidths that flush most, some or none of the row.
    #[test]
    fn gaussian_sums_versions_agree() {
        for n in [1usize, 7, 8, 9, 127, 128, 129, 1000, 5003] {
            let sh: Vec<f64> = (0..n)
                .map(|j| match j % 9 {
                    0 => 0.0,
                    1 => 1e-300,
                    2 => 1e300,
                    _ => ((j * 7919) % 1013) as f64 * 0.37,
                })
                .collect();
            for beta in [1e-12, 0.01, 1.0, 3.7, 1e3, 1e300] {
                for skip in [0, n / 2, n - 1] {
                    let (mut e1, mut e2) = (vec![1.0; n], vec![2.0; n]);
                    let a = gaussian_sums(&sh, beta, skip, &mut e1);
                    let b = gaussian_sums_portable(&sh, beta, skip, &mut e2);
                    assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "n {n} beta {beta} skip {skip}");
                    assert_eq!(
                        e1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        e2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                    );
                    assert_eq!(e1[skip], 0.0);
                    let want = crate::sum::pairwise_sums(n, &|j| [e2[j], sh[j] * e2[j]]);
                    assert_eq!(b.map(f64::to_bits), want.map(f64::to_bits), "NumPy's order");
                }
            }
        }
    }
}
