//! The scagnostics' hexagonal binning (Wilkinson's `Binner.binHex`, as pyscagnostics 0.1.0a4
//! and R's `scagnostics` run it), with its floating-point operations in the reference's order.
//!
//! Each axis is already scaled to [0, 1]. A `bins` × `bins` hexagonal grid is tried first; while
//! more than 250 bins are occupied the grid is halved (`bins / 2`, integer division) and the
//! points binned again. Each occupied bin keeps the running mean of its points and their count;
//! the means are then scaled to integers (`(int)(1000 · mean)`, truncation).

/// Occupied bins, in the order of their grid index.
pub(in crate::measures) struct Bins {
    /// `(int)(1000 · mean x)` of each bin's points.
    pub x: Vec<i32>,
    /// `(int)(1000 · mean y)`.
    pub y: Vec<i32>,
    /// Points in each bin.
    pub counts: Vec<i64>,
}

/// The most occupied bins the reference keeps before it coarsens the grid.
const MAX_BINS: usize = 250;

/// Bins `x`, `y` (each in [0, 1]) starting from a `bins` × `bins` grid (`bins` ≥ 1).
pub(in crate::measures) fn bin_hex(x: &[f64], y: &[f64], bins: i32) -> Bins {
    let mut n_bins = bins.max(1);
    loop {
        let (count, xbin, ybin) = fill(x, y, n_bins);
        let occupied: Vec<usize> = (0..count.len()).filter(|&m| count[m] > 0).collect();
        // A grid of one bin holds every point in one bin: the halving always ends.
        if occupied.len() > MAX_BINS && n_bins > 1 {
            n_bins /= 2;
            continue;
        }
        return Bins {
            x: occupied.iter().map(|&m| (1000.0 * xbin[m]) as i32).collect(),
            y: occupied.iter().map(|&m| (1000.0 * ybin[m]) as i32).collect(),
            counts: occupied.iter().map(|&m| count[m]).collect(),
        };
    }
}

/// One pass of `binHex` on an `n_bins` grid: counts and running means by grid index.
fn fill(x: &[f64], y: &[f64], n_bins: i32) -> (Vec<i64>, Vec<f64>, Vec<f64>) {
    let (con1, con2) = (0.25, 1.0 / 3.0);
    let c1 = f64::from(n_bins - 1);
    let c2 = c1 / 3f64.sqrt();
    let (jinc, iinc) = (n_bins as i64, 2 * n_bins as i64);
    let cells = ((n_bins + 20) as usize).pow(2);
    let (mut count, mut xbin, mut ybin) = (vec![0i64; cells], vec![0.0f64; cells], vec![0.0f64; cells]);
    for (&xi, &yi) in x.iter().zip(y) {
        let (sx, sy) = (c1 * xi, c2 * yi);
        let (i1, j1) = ((sy + 0.5) as i64, (sx + 0.5) as i64);
        let (dy, dx) = (sy - i1 as f64, sx - j1 as f64);
        let dist1 = dx * dx + 3.0 * dy * dy;
        let m = if dist1 < con1 {
            i1 * iinc + j1
        } else if dist1 > con2 {
            (sy as i64) * iinc + (sx as i64) + jinc
        } else {
            let (i2, j2) = (sy as i64, sx as i64);
            let dy = sy - i2 as f64 - 0.5;
            let dx = sx - j2 as f64 - 0.5;
            let dist2 = dx * dx + 3.0 * dy * dy;
            if dist1 <= dist2 { i1 * iinc + j1 } else { i2 * iinc + j2 + jinc }
        };
        // x, y in [0, 1] keep m within the (n_bins + 20)² cells the reference allocates.
        let m = (m.max(0) as usize).min(cells - 1);
        count[m] += 1;
        xbin[m] += (xi - xbin[m]) / count[m] as f64;
        ybin[m] += (yi - ybin[m]) / count[m] as f64;
    }
    (count, xbin, ybin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsens_until_at_most_250_bins() {
        // A 100 × 100 lattice fills far more than 250 cells of the 50-grid.
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for i in 0..100 {
            for j in 0..100 {
                x.push(f64::from(i) / 99.0);
                y.push(f64::from(j) / 99.0);
            }
        }
        let b = bin_hex(&x, &y, 50);
        assert!(b.counts.len() <= MAX_BINS && b.counts.len() > 50, "{} bins", b.counts.len());
        assert_eq!(b.counts.iter().sum::<i64>(), 10_000);
        assert!(b.x.iter().chain(&b.y).all(|&v| (0..=1000).contains(&v)));
    }

    #[test]
    fn one_point_one_bin() {
        let b = bin_hex(&[0.5], &[0.5], 50);
        assert_eq!((b.x.clone(), b.y.clone(), b.counts.clone()), (vec![500], vec![500], vec![1]));
    }
}
