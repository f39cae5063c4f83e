//! The certified domain (docs/exactness.md, "The certified domain"): the data for which the
//! f32 bound is proven. Checked on the host before anything is uploaded; a space outside it is
//! served by the CPU reference, and the run report says why.

use crate::data::Points;
use crate::error::GpuError;

/// Smallest magnitude of a nonzero coordinate: 2^-458 (about 1.3e-138). Every value at least
/// this large is a multiple of 2^-510, so every nonzero difference of two coordinates (or of a
/// coordinate and 0) is at least 2^-510 and its square at least 2^-1020: the reference's f64
/// squares and sums are normal numbers, and its rounding error is relative (Step 5).
pub const MIN_ABS: f64 = 1.343_575_221_513_417_8e-138; // 2^-458

/// Why the GPU's kernels cannot serve these points' metric, if they cannot: the certified
/// kernels compute squared Euclidean distances of coordinates (Euclidean and sqeuclidean;
/// Minkowski p = 2 is Euclidean, bit for bit), cosine and correlation as the squared distances
/// of unit rows with a proven gap, and cityblock and chebyshev (Minkowski p = 1 and ∞) as sums
/// and maxima of magnitudes with their own bound; Minkowski of any other p, and given
/// distances, are served by the CPU reference.
pub fn metric_unsupported(points: &Points) -> Option<String> {
    use crate::data::Kernel;
    match points.metric().kernel() {
        // Cosine and correlation: the unit rows' squared distances, certified with the gap
        // between them and the reference (`prepare::cosine_gap`). Sqeuclidean is Euclidean's
        // sum before the root; cityblock and chebyshev have the linear form of the bound.
        Kernel::Euclidean | Kernel::SqEuclidean | Kernel::Cosine | Kernel::Cityblock | Kernel::Chebyshev
            if points.has_coordinates() =>
        {
            None
        }
        _ if !points.has_coordinates() => Some(format!(
            "the original space is a {}, and the GPU's kernels compute distances of coordinates",
            points.input()
        )),
        _ => Some(format!("metric {} has no certified GPU kernel", points.metric())),
    }
}

/// Checks that the points' metric has a certified kernel and every coordinate is 0 or at
/// least [`MIN_ABS`] in magnitude.
pub fn check_points(points: &Points) -> Result<(), GpuError> {
    if let Some(why) = metric_unsupported(points) {
        return Err(GpuError::Domain(why));
    }
    for i in 0..points.n() {
        if let Some((c, v)) = points.row(i).iter().enumerate().find(|(_, v)| **v != 0.0 && v.abs() < MIN_ABS) {
            return Err(GpuError::Domain(format!(
                "coordinate {v:e} (row {i}, column {c}) is nonzero but below 2^-458 in magnitude, so the f64 reference's squared differences may underflow"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_abs_is_two_to_the_minus_458() {
        assert_eq!(MIN_ABS, 2f64.powi(-458));
        // The smallest nonzero difference of values ≥ 2^-458: one ulp at 2^-458, 2^-510.
        assert_eq!(MIN_ABS.next_up() - MIN_ABS, 2f64.powi(-510));
        assert!((2f64.powi(-510) * 2f64.powi(-510)).is_normal());
    }
}
