//! Twin of `distances_tiled.wgsl`: the workgroups' tile walk, whose sums take their terms in
//! coordinate order, so s̃ equals the classic kernel's bit for bit; and its epilogue, each row's
//! smallest U per tile of points.

use crate::gpu::bound::Params;
use crate::gpu::distances_tiled::{REGISTER_BLOCK, Tiles};
use crate::gpu::prepare::Prepared;

/// Twin of `distances_tiled.wgsl` for block rows `row0..row0 + rows`: s̃ (rows × n, row-major)
/// and each row's witness count, simulating the workgroups' tile walk (tiles of rows and
/// points, coordinates staged in sub-chunks of `tiles.coords`, register blocks of
/// `tiles.row_block` rows × 4 points). Each sum takes its terms in coordinate order, so s̃
/// equals `super::sqdist` bit for bit.
pub fn distances_tiled(prep: &Prepared, tiles: Tiles, row0: usize, rows: usize) -> (Vec<f32>, Vec<u32>) {
    let (n, d) = (prep.n, prep.dim);
    let (tr, tp, kc) = (tiles.rows() as usize, tiles.points() as usize, tiles.coords as usize);
    let (rb, pb) = (tiles.row_block as usize, REGISTER_BLOCK as usize);
    let coord = |p: usize, last: usize, c: usize| if p < last { prep.pts[p * d + c] } else { 0.0 };
    let mut s = vec![0.0f32; rows * n];
    let mut trips = vec![0u32; rows];
    let (gx, gy) = tiles.groups(rows, n);
    for wy in 0..gy as usize {
        for wx in 0..gx as usize {
            let (r0, p0) = (wy * tr, wx * tp);
            let mut wg_trips = 0u32;
            for ty in 0..tiles.threads_rows as usize {
                for tx in 0..tiles.threads_points as usize {
                    let (rr, pp) = (r0 + rb * ty, p0 + pb * tx);
                    let mut acc = vec![[0.0f32; 4]; rb];
                    let mut done = 0u32;
                    for c0 in (0..d).step_by(kc) {
                        for c in c0..(c0 + kc).min(d) {
                            done += 1;
                            for (a, row) in acc.iter_mut().enumerate() {
                                let x = coord(row0 + rr + a, row0 + rows, c);
                                for (b, v) in row.iter_mut().enumerate() {
                                    *v = super::distances::term(prep.form, *v, x - coord(pp + b, n, c));
                                }
                            }
                        }
                    }
                    for (a, row) in acc.iter().enumerate() {
                        for (b, &v) in row.iter().enumerate() {
                            if rr + a < rows && pp + b < n {
                                s[(rr + a) * n + pp + b] = v;
                            }
                        }
                    }
                    wg_trips += done;
                }
            }
            for q in 0..tr {
                if r0 + q < rows {
                    trips[r0 + q] += wg_trips;
                }
            }
        }
    }
    (s, trips)
}

/// Twin of `distances_tiled.wgsl`'s epilogue: for each of the block's rows (s̃ of `s`, rows ×
/// n, all points) and each tile of `tiles.points()` points of `p.col0..p.col0 + p.n` (all n,
/// or a streamed plan's point tile), the smallest U = s̃ + ε over the tile's points other than
/// the row's own, compared on the bits as the kernel does (NaN and negative values last; no
/// point, or none below it: the sentinel 1e38). Row-major, ⌈p.n / TP⌉ per row.
pub fn tile_minima(p: &Params, prep: &Prepared, tiles: Tiles, row0: usize, rows: usize, s: &[f32]) -> Vec<f32> {
    let (all, c0, n, tp) = (prep.n, p.col0 as usize, p.n as usize, tiles.points() as usize);
    let sentinel = 1.0e38f32.to_bits();
    let count = n.div_ceil(tp);
    let mut out = Vec::with_capacity(rows * count);
    for r in 0..rows {
        let g = row0 + r;
        let ni = prep.norms[g];
        for t in 0..count {
            let m = (c0 + t * tp..c0 + ((t + 1) * tp).min(n))
                .filter(|&j| j != g)
                .map(|j| {
                    let v = s[r * all + j];
                    (v + p.eps_of(v, ni, prep.norms[j])).to_bits()
                })
                .fold(sentinel, u32::min);
            out.push(f32::from_bits(m.min(sentinel)));
        }
    }
    out
}
