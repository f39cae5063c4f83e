//! External clustering scores, as scikit-learn computes them: adjusted Rand index, adjusted and
//! normalized mutual information (arithmetic mean normaliser), V-measure (β = 1).
//!
//! Everything is derived from the contingency table of the two labelings (classes × clusters,
//! both in sorted label order, nonzero cells in row-major order as `scipy.sparse.find` returns
//! them) with scikit-learn's operation order, so results agree with scikit-learn to a few ulps.

/// The contingency table of two labelings of the same points.
pub(in crate::measures) struct Contingency {
    n: u64,
    /// Row sums (class sizes).
    a: Vec<u64>,
    /// Column sums (cluster sizes).
    b: Vec<u64>,
    /// Nonzero cells (row, column, count), row-major.
    cells: Vec<(usize, usize, u64)>,
}

/// Dense codes of `labels` in sorted label order (`np.unique(.., return_inverse=True)`).
fn encode<T: Ord + Copy>(labels: &[T]) -> (Vec<usize>, usize) {
    let mut uniq = labels.to_vec();
    uniq.sort_unstable();
    uniq.dedup();
    (labels.iter().map(|v| uniq.binary_search(v).expect("present")).collect(), uniq.len())
}

impl Contingency {
    /// The table of `truth` (rows) against `pred` (columns); both of the same, non-zero length.
    pub(in crate::measures) fn new<T: Ord + Copy, U: Ord + Copy>(truth: &[T], pred: &[U]) -> Self {
        assert_eq!(truth.len(), pred.len(), "labelings of the same points");
        let (rows, nr) = encode(truth);
        let (cols, nc) = encode(pred);
        let mut counts = std::collections::BTreeMap::new();
        for (&r, &c) in rows.iter().zip(&cols) {
            *counts.entry((r, c)).or_insert(0u64) += 1;
        }
        let mut a = vec![0; nr];
        let mut b = vec![0; nc];
        let cells: Vec<(usize, usize, u64)> = counts.into_iter().map(|((r, c), v)| (r, c, v)).collect();
        for &(r, c, v) in &cells {
            a[r] += v;
            b[c] += v;
        }
        Contingency { n: truth.len() as u64, a, b, cells }
    }

    /// `adjusted_rand_score` (pair-confusion form, exact integers, one final division).
    pub(in crate::measures) fn adjusted_rand(&self) -> f64 {
        let n = i128::from(self.n);
        let sum_sq: i128 = self.cells.iter().map(|&(_, _, v)| i128::from(v) * i128::from(v)).sum();
        let tp = sum_sq - n;
        let fp = self.cells.iter().map(|&(_, c, v)| i128::from(v) * i128::from(self.b[c])).sum::<i128>() - sum_sq;
        let fn_ = self.cells.iter().map(|&(r, _, v)| i128::from(v) * i128::from(self.a[r])).sum::<i128>() - sum_sq;
        let tn = n * n - fp - fn_ - sum_sq;
        if fn_ == 0 && fp == 0 {
            return 1.0;
        }
        let num = tp * tn - fn_ * fp;
        let den = (tp + fn_) * (fn_ + tn) + (tp + fp) * (fp + tn);
        2.0 * num as f64 / den as f64
    }

    /// `mutual_info_score` (natural log).
    pub(in crate::measures) fn mutual_info(&self) -> f64 {
        if self.a.len() == 1 || self.b.len() == 1 {
            return 0.0;
        }
        let total = self.n as f64;
        let log_total = total.ln();
        let (log_a_sum, log_b_sum) = (total.ln(), total.ln());
        let terms: Vec<f64> = self
            .cells
            .iter()
            .map(|&(r, c, v)| {
                let nm = v as f64 / total;
                let outer = (self.a[r] * self.b[c]) as f64;
                let log_outer = -outer.ln() + log_a_sum + log_b_sum;
                let mi = nm * ((v as f64).ln() - log_total) + nm * log_outer;
                if mi.abs() < f64::EPSILON { 0.0 } else { mi }
            })
            .collect();
        super::numpy::pairwise_sum_by(terms.len(), &|t| terms[t]).max(0.0)
    }

    /// Entropy of the class sizes (`true`: rows) or cluster sizes (`false`: columns).
    fn entropy(&self, rows: bool) -> f64 {
        let sizes = if rows { &self.a } else { &self.b };
        if sizes.len() == 1 {
            return 0.0;
        }
        let sum = super::numpy::pairwise_sum_by(sizes.len(), &|t| sizes[t] as f64);
        let log_sum = sum.ln();
        -super::numpy::pairwise_sum_by(sizes.len(), &|t| {
            let p = sizes[t] as f64;
            (p / sum) * (p.ln() - log_sum)
        })
    }

    /// `normalized_mutual_info_score` (arithmetic mean of the entropies).
    pub(in crate::measures) fn normalized_mutual_info(&self) -> f64 {
        if self.a.len() == 1 && self.b.len() == 1 {
            return 1.0;
        }
        let mi = self.mutual_info();
        if mi == 0.0 {
            return 0.0;
        }
        mi / ((self.entropy(true) + self.entropy(false)) / 2.0)
    }

    /// `v_measure_score` with β = 1.
    pub(in crate::measures) fn v_measure(&self) -> f64 {
        let (hc, hk) = (self.entropy(true), self.entropy(false));
        let mi = self.mutual_info();
        let h = if hc != 0.0 { mi / hc } else { 1.0 };
        let c = if hk != 0.0 { mi / hk } else { 1.0 };
        if h + c == 0.0 { 0.0 } else { 2.0 * h * c / (h + c) }
    }

    /// `adjusted_mutual_info_score` (arithmetic mean normaliser).
    pub(in crate::measures) fn adjusted_mutual_info(&self) -> f64 {
        let (nr, nc) = (self.a.len(), self.b.len());
        if nr == 1 && nc == 1 {
            return 1.0;
        }
        if nr == 1 || nc == 1 {
            return 0.0;
        }
        let mi = self.mutual_info();
        let emi = self.expected_mutual_info();
        let normalizer = (self.entropy(true) + self.entropy(false)) / 2.0;
        let clamp = |x: f64| if x < 0.0 { x.min(-f64::EPSILON) } else { x.max(f64::EPSILON) };
        clamp(mi - emi) / clamp(normalizer - emi)
    }

    /// scikit-learn's `expected_mutual_information` (hypergeometric model), term for term.
    fn expected_mutual_info(&self) -> f64 {
        let n = self.n as i64;
        let nf = n as f64;
        let (a, b) = (&self.a, &self.b);
        let max_ab = a.iter().chain(b).copied().max().unwrap_or(0) as usize;
        // nijs = arange(0, max + 1) with nijs[0] = 1.
        let nijs: Vec<f64> = (0..=max_ab).map(|v| if v == 0 { 1.0 } else { v as f64 }).collect();
        let term1: Vec<f64> = nijs.iter().map(|v| v / nf).collect();
        let log_n = nf.ln();
        let log_nnij: Vec<f64> = nijs.iter().map(|v| log_n + v.ln()).collect();
        let log_a: Vec<f64> = a.iter().map(|&v| (v as f64).ln()).collect();
        let log_b: Vec<f64> = b.iter().map(|&v| (v as f64).ln()).collect();
        let gln_a: Vec<f64> = a.iter().map(|&v| gammaln(v as f64 + 1.0)).collect();
        let gln_b: Vec<f64> = b.iter().map(|&v| gammaln(v as f64 + 1.0)).collect();
        let gln_na: Vec<f64> = a.iter().map(|&v| gammaln((n - v as i64 + 1) as f64)).collect();
        let gln_nb: Vec<f64> = b.iter().map(|&v| gammaln((n - v as i64 + 1) as f64)).collect();
        let gln_n1 = gammaln(nf + 1.0);
        let gln_nnij: Vec<f64> = nijs.iter().map(|v| gammaln(v + 1.0) + gln_n1).collect();
        let mut emi = 0.0;
        for (i, &ai) in a.iter().enumerate() {
            let ai = ai as i64;
            for (j, &bj) in b.iter().enumerate() {
                let bj = bj as i64;
                let start = 1.max(ai - n + bj);
                let end = ai.min(bj) + 1;
                for nij in start..end {
                    let t = nij as usize;
                    let term2 = log_nnij[t] - log_a[i] - log_b[j];
                    let gln = gln_a[i] + gln_b[j] + gln_na[i] + gln_nb[j]
                        - gln_nnij[t]
                        - libm::lgamma((ai - nij + 1) as f64)
                        - libm::lgamma((bj - nij + 1) as f64)
                        - libm::lgamma((n - ai - bj + nij + 1) as f64);
                    emi += term1[t] * term2 * gln.exp();
                }
            }
        }
        emi
    }
}

/// `scipy.special.gammaln` for the positive arguments used here (log-gamma).
fn gammaln(x: f64) -> f64 {
    libm::lgamma(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-learn's scores on fixed labelings (tests/fixtures/external_scores.json, written by
    /// tests/fixtures/generate_external.py), within 1e-12.
    #[test]
    fn external_scores_match_scikit_learn() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/external_scores.json");
        let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 10);
        let mut bad = Vec::new();
        let mut bit = 0;
        for case in cases {
            let ints = |k: &str| case[k].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>();
            let table = Contingency::new(&ints("labels_true"), &ints("labels_pred"));
            let name = case["name"].as_str().unwrap();
            for (key, got) in [
                ("adjusted_rand_score", table.adjusted_rand()),
                ("adjusted_mutual_info_score", table.adjusted_mutual_info()),
                ("normalized_mutual_info_score", table.normalized_mutual_info()),
                ("v_measure_score", table.v_measure()),
                ("mutual_info_score", table.mutual_info()),
            ] {
                let want = case[key].as_f64().unwrap();
                bit += usize::from(got.to_bits() == want.to_bits());
                if (got - want).abs() > 1e-12 * want.abs().max(1.0) {
                    bad.push(format!("{name} {key}: faithful {got:e}, scikit-learn {want:e}"));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
        eprintln!("{} cases, {bit} of {} scores bit-identical", cases.len(), 5 * cases.len());
    }

    #[test]
    fn hand_checked_values() {
        // Identical partitions under renaming: every score is 1.
        let t = Contingency::new(&[0, 0, 1, 1, 2], &[5, 5, 3, 3, 9]);
        assert_eq!(t.adjusted_rand(), 1.0);
        assert!((t.normalized_mutual_info() - 1.0).abs() < 1e-15);
        assert!((t.v_measure() - 1.0).abs() < 1e-15);
        // ARI of {0,0,1,1} vs {0,1,0,1}: tp=0, fp=fn=2, tn=... → -0.5.
        assert_eq!(Contingency::new(&[0, 0, 1, 1], &[0, 1, 0, 1]).adjusted_rand(), -0.5);
    }
}
