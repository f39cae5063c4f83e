//! Twin of `distances_tiled.wgsl`: the workgroups' tile walk, whose sums take their terms in
//! coordinate order, so s̃ equals the classic kernel's bit for bit.

use crate::gpu::distances_tiled::{REGISTER_BLOCK, Tiles};
use crate::gpu::prepare::Prepared;

/// Twin of `distances_tiled.wgsl` for block rows `row0..row0 + rows`: s̃ (rows × n, row-major)
/// and each row's witness count, simulating the workgroups' tile walk (tiles of rows and
/// points, coordinates staged in sub-chunks of `tiles.coords`, 4 × 4 register blocks). Each
/// sum takes its terms in coordinate order, so s̃ equals `super::sqdist` bit for bit.
pub fn distances_tiled(prep: &Prepared, tiles: Tiles, row0: usize, rows: usize) -> (Vec<f32>, Vec<u32>) {
    let (n, d) = (prep.n, prep.dim);
    let (tr, tp, kc) = (tiles.rows() as usize, tiles.points() as usize, tiles.coords as usize);
    let rb = REGISTER_BLOCK as usize;
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
                    let (rr, pp) = (r0 + rb * ty, p0 + rb * tx);
                    let mut acc = [[0.0f32; 4]; 4];
                    let mut done = 0u32;
                    for c0 in (0..d).step_by(kc) {
                        for c in c0..(c0 + kc).min(d) {
                            done += 1;
                            for (a, row) in acc.iter_mut().enumerate() {
                                let x = coord(row0 + rr + a, row0 + rows, c);
                                for (b, v) in row.iter_mut().enumerate() {
                                    let t = x - coord(pp + b, n, c);
                                    *v += t * t;
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
