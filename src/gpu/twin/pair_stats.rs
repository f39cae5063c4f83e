//! Twin of `pair_stats.wgsl`: the 14 Fast pair sums of one row.

use super::distances::sqdist;
use crate::gpu::prepare::Prepared;
use crate::gpu::shaders::ROW_VALUES;

/// Twin of `pair_stats.wgsl` for row i: the 14 values, with the projection's distances in the
/// original space's scaled units (`y_to_x`).
pub fn pair_stats_row(px: &Prepared, py: &Prepared, y_to_x: f32, i: usize) -> [f32; ROW_VALUES] {
    let n = px.n;
    let d: Vec<(f32, f32)> = (i + 1..n).map(|j| (sqdist(px, i, j).sqrt(), sqdist(py, i, j).sqrt() * y_to_x)).collect();
    let count = d.len().max(1) as f32;
    let (sx, sy) = d.iter().fold((0.0f32, 0.0f32), |a, &(x, y)| (a.0 + x, a.1 + y));
    let (mx, my) = (sx / count, sy / count);
    let mut v = [0.0f32; ROW_VALUES];
    v[0] = sx;
    v[1] = sy;
    for &(x, y) in &d {
        v[2] += x * x;
        v[3] += y * y;
        v[4] += x * y;
        v[5] += (x - y) * (x - y);
        v[7] += (x - mx) * (x - mx);
        v[8] += (y - my) * (y - my);
        v[9] += (x - mx) * (y - my);
    }
    v[6] = if v[3] > 0.0 {
        let alpha = v[4] / v[3];
        d.iter().map(|&(x, y)| (x - alpha * y) * (x - alpha * y)).sum()
    } else {
        v[2]
    };
    v[10] = d.iter().fold(0.0f32, |m, &(x, _)| m.max(x));
    v[11] = d.iter().fold(0.0f32, |m, &(_, y)| m.max(y));
    v[12] = d.iter().fold(1.0e38f32, |m, &(x, _)| m.min(x));
    v[13] = d.iter().fold(1.0e38f32, |m, &(_, y)| m.min(y));
    v
}
