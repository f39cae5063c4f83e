//! `scipy.spatial.Delaunay(points).simplices` for 2-D points, through the vendored Qhull
//! (`vendor/qhull_r`, the copy scipy builds) and the C shim `delaunay.c`.
//!
//! Using scipy's own triangulator matters for degenerate input: with duplicate points Qhull keeps
//! one of each group as a vertex and with cocircular points it picks one of the possible
//! triangulations, and the gap index depends on both choices. Same code, same options, same
//! input order: the same triangles, in the same order.

use std::os::raw::{c_double, c_int};

unsafe extern "C" {
    fn faithful_delaunay2d(points: *const c_double, n: c_int, out: *mut c_int, cap: c_int, ntri: *mut c_int) -> c_int;
}

/// The Delaunay triangles of `xy` (n points, x0 y0 x1 y1 ...), as point-index triples; `None` when
/// Qhull cannot triangulate (fewer than 3 points, or all points collinear or coincident).
pub(super) fn triangulate(xy: &[f64]) -> Option<Vec<[usize; 3]>> {
    let n = xy.len() / 2;
    if n < 3 || n > c_int::MAX as usize / 8 {
        return None;
    }
    // A planar triangulation of n points has at most 2n - 5 triangles.
    let mut cap = 2 * n + 8;
    loop {
        let mut out = vec![0 as c_int; 3 * cap];
        let mut ntri: c_int = 0;
        // SAFETY: `xy` holds 2n doubles and `out` 3·cap ints; the shim reads/writes no more and
        // keeps no pointer after it returns. Qhull state is local to the call (reentrant).
        let code = unsafe { faithful_delaunay2d(xy.as_ptr(), n as c_int, out.as_mut_ptr(), cap as c_int, &mut ntri) };
        if code != 0 {
            return None;
        }
        let ntri = ntri as usize;
        if ntri > cap {
            cap = ntri;
            continue;
        }
        return Some(out[..3 * ntri].chunks(3).map(|t| [t[0] as usize, t[1] as usize, t[2] as usize]).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_and_degenerate_inputs() {
        // scipy: Delaunay([[0,0],[1,0],[0,1],[1,1.1]]).simplices (a non-cocircular quad).
        let t = triangulate(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.1]).unwrap();
        assert_eq!(t.len(), 2);
        assert!(triangulate(&[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]).is_none(), "collinear");
        assert!(triangulate(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).is_none(), "coincident");
        assert!(triangulate(&[0.0, 0.0, 1.0, 1.0]).is_none(), "two points");
    }

    /// `scipy.spatial.Delaunay(points).simplices` on degenerate sets (duplicates on a lattice,
    /// cocircular points, near-collinear points, a far offset): the same triangles in the same
    /// order (tests/fixtures/seeded_zadu.json).
    #[test]
    fn equals_scipy_delaunay() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seeded_zadu.json");
        let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut compared = 0;
        for rec in fixture["records"].as_array().unwrap().iter().filter(|r| r["kind"] == "delaunay") {
            let xy: Vec<f64> = rec["points"].as_array().unwrap().iter().flat_map(|p| p.as_array().unwrap().iter().map(|v| v.as_f64().unwrap())).collect();
            let want: Vec<[usize; 3]> = rec["simplices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let t: Vec<usize> = t.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
                    [t[0], t[1], t[2]]
                })
                .collect();
            assert_eq!(triangulate(&xy).unwrap(), want, "{}", rec["name"]);
            compared += 1;
        }
        assert_eq!(compared, 6);
    }
}
