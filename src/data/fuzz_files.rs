//! Fuzzing the readers of the original space as files (a few seconds in every `cargo test`):
//! `.npy` distance matrices ([`read_distances`]: header, size, row-block validation),
//! SciPy `.npz` CSR graphs ([`read_knn_npz`]: the zip container, each member's `.npy`, the
//! graph's checks) and index/distance `.npy` pairs ([`read_knn_arrays`]). Valid files are
//! built here, mutated byte by byte (a member's bytes before zipping, so the archive's CRC
//! still holds and the `.npy` parser sees them, or the whole archive's), and read: a result
//! whose every promise holds, or a one-line error, promptly; never a panic.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::fuzz::{apply, edit, npy_file};
use super::{DistanceMatrix, Points, declared_shape, read_distances, read_knn_arrays, read_knn_npz};
use crate::error::Error;

/// What one read may take: these files are a few hundred bytes.
const PROMPT: Duration = Duration::from_secs(2);

fn one_line(what: &str, start: Instant, e: &Error) {
    assert!(start.elapsed() < PROMPT, "{what} took {:?}", start.elapsed());
    let msg = e.to_string();
    assert!(!msg.chars().any(char::is_control), "{what}: control character in {msg:?}");
    assert!(msg.chars().count() < 600, "{what}: {} chars: {msg}", msg.chars().count());
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Every promise of a validated matrix: finite, ≥ 0, zero diagonal, symmetric, all rows readable.
fn check_matrix(m: &DistanceMatrix) {
    let n = m.n();
    let mut row = vec![0.0; n];
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            m.row_from(i, 0, &mut row);
            row.clone()
        })
        .collect();
    m.check_reads().unwrap();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[i].to_bits(), 0, "diagonal [{i}, {i}]");
        for (j, &d) in r.iter().enumerate() {
            assert!(d.is_finite() && d >= 0.0 && d.to_bits() == rows[j][i].to_bits(), "[{i}, {j}] = {d}");
        }
    }
}

/// Every promise of a validated graph: k ≥ 1 distinct in-range neighbours per row, no self,
/// finite non-negative distances in `(distance, index)` order.
fn check_graph(p: &Points) {
    let g = p.knn_graph().expect("a graph space");
    assert!(g.k() >= 1 && g.n() >= 2);
    for i in 0..g.n() {
        let (row, dist) = (g.row(i), g.dist_row(i));
        assert_eq!((row.len(), dist.len()), (g.k(), g.k()));
        let mut seen = row.to_vec();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), row.len(), "row {i} repeats a neighbour");
        assert!(row.iter().all(|&j| (j as usize) < g.n() && j as usize != i), "row {i}: {row:?}");
        assert!(dist.iter().all(|d| d.is_finite() && *d >= 0.0));
        let keyed: Vec<(u64, u32)> = dist.iter().zip(row).map(|(d, &j)| (d.to_bits(), j)).collect();
        assert!(keyed.windows(2).all(|w| w[0] < w[1]), "row {i} out of order");
    }
}

/// An element of type `descr` (float or integer, either byte order) holding `v`.
fn element(descr: &str, v: f64) -> Vec<u8> {
    match descr {
        "<f8" => v.to_le_bytes().to_vec(),
        ">f8" => v.to_be_bytes().to_vec(),
        "<f4" => (v as f32).to_le_bytes().to_vec(),
        ">f4" => (v as f32).to_be_bytes().to_vec(),
        "<i8" => (v as i64).to_le_bytes().to_vec(),
        ">i4" => (v as i32).to_be_bytes().to_vec(),
        "<i4" => (v as i32).to_le_bytes().to_vec(),
        "|u1" => vec![v as u8],
        other => unreachable!("{other}"),
    }
}

fn array(descr: &str, shape: &[u64], fortran: bool, values: &[f64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|&v| element(descr, v)).collect();
    npy_file(descr, shape, fortran, &data)
}

/// A symmetric n×n matrix with a zero diagonal, values exact in f32, as an `.npy` file.
fn distance_file(n: usize, ty: usize, fortran: bool, seed: u64) -> (Vec<u8>, Vec<f64>) {
    let mut rng = crate::splitmix::SplitMix64(seed);
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        for j in i + 1..n {
            // Small integers: ties and exact symmetry in either width.
            let d = (rng.uniform() * 4.0).floor();
            (v[i * n + j], v[j * n + i]) = (d, d);
        }
    }
    // Fortran order of a symmetric matrix is the same bytes as C order.
    (array(["<f8", ">f8", "<f4", ">f4"][ty], &[n as u64, n as u64], fortran, &v), v)
}

/// A graph's CSR members as SciPy writes them: row i's neighbours are the next `k` points
/// round the ring at half their offset, stored farthest first (so every row is reordered).
fn csr_members(n: usize, k: usize, int_descr: &str, float_descr: &str) -> Vec<(&'static str, Vec<u8>)> {
    let indptr: Vec<f64> = (0..=n).map(|r| (r * k) as f64).collect();
    let (mut idx, mut dist) = (Vec::new(), Vec::new());
    for i in 0..n {
        for t in (1..=k).rev() {
            idx.push(((i + t) % n) as f64);
            dist.push(t as f64 * 0.5);
        }
    }
    let scalar = |text: &str| {
        let header = format!("{{'descr': '|S{}', 'fortran_order': False, 'shape': (), }}\n", text.len());
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(text.as_bytes());
        out
    };
    vec![
        ("format.npy", scalar("csr")),
        ("shape.npy", array("<i8", &[2], false, &[n as f64, n as f64])),
        ("indptr.npy", array(int_descr, &[n as u64 + 1], false, &indptr)),
        ("indices.npy", array(int_descr, &[(n * k) as u64], false, &idx)),
        ("data.npy", array(float_descr, &[(n * k) as u64], false, &dist)),
    ]
}

fn zip(members: &[(&str, Vec<u8>)], deflate: bool) -> Vec<u8> {
    let method = if deflate { zip::CompressionMethod::Deflated } else { zip::CompressionMethod::Stored };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in members {
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn distance_matrices_read_back(n in 2usize..7, ty in 0usize..4, fortran: bool, seed: u64) {
        let dir = tempfile::tempdir().unwrap();
        let (file, v) = distance_file(n, ty, fortran, seed);
        let path = write(dir.path(), "d.npy", &file);
        prop_assert_eq!(declared_shape(&path), Some(vec![n, n]));
        let m = DistanceMatrix::read(&path).unwrap();
        let mut row = vec![0.0; n];
        for i in 0..n {
            m.row_from(i, 0, &mut row);
            prop_assert_eq!(&row[..], &v[i * n..(i + 1) * n]);
        }
        check_matrix(&m);
    }

    #[test]
    fn mutated_distance_matrices(n in 0usize..6, ty in 0usize..4, fortran: bool, seed: u64,
                                 edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = distance_file(n, ty, fortran, seed);
        let path = write(dir.path(), "d.npy", &apply(file, &edits));
        let shape_t = Instant::now();
        // The header's shape, trusted before any read: never a panic, and never other than
        // what a whole read finds.
        let declared = declared_shape(&path);
        assert!(shape_t.elapsed() < PROMPT, "declared_shape took {:?}", shape_t.elapsed());
        let t = Instant::now();
        match DistanceMatrix::read(&path) {
            Ok(m) => {
                check_matrix(&m);
                if let Some(shape) = declared {
                    prop_assert_eq!(shape, vec![m.n(), m.n()]);
                }
            }
            Err(e) => one_line("distance matrix", t, &e),
        }
        if let Err(e) = read_distances(&path) {
            one_line("read_distances", t, &e);
        }
    }

    #[test]
    fn csr_graphs_read_back(n in 2usize..9, k in 1usize..4, deflate: bool,
                            ints in prop::sample::select(vec!["<i8", ">i4", "<i4"]),
                            floats in prop::sample::select(vec!["<f8", ">f8", "<f4", ">f4"])) {
        let k = k.min(n - 1);
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "g.npz", &zip(&csr_members(n, k, ints, floats), deflate));
        prop_assert_eq!(declared_shape(&path), Some(vec![n, n]));
        let p = read_knn_npz(&path).unwrap();
        check_graph(&p);
        let g = p.knn_graph().unwrap();
        prop_assert_eq!((g.n(), g.k(), g.report().rows_reordered), (n, k, if k > 1 { n } else { 0 }));
        for i in 0..n {
            prop_assert_eq!(g.row(i)[0] as usize, (i + 1) % n);
        }
    }

    #[test]
    fn mutated_npz_members(n in 0usize..6, k in 1usize..4, deflate: bool, which in 0usize..5,
                           ints in prop::sample::select(vec!["<i8", ">i4", "|u1"]),
                           floats in prop::sample::select(vec!["<f8", ">f4"]),
                           drop_member: bool, edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let mut members = csr_members(n, k, ints, floats);
        if drop_member {
            members.remove(which);
        } else {
            members[which].1 = apply(std::mem::take(&mut members[which].1), &edits);
        }
        let path = write(dir.path(), "g.npz", &zip(&members, deflate));
        let shape_t = Instant::now();
        let declared = declared_shape(&path);
        assert!(shape_t.elapsed() < PROMPT, "declared_shape took {:?}", shape_t.elapsed());
        let t = Instant::now();
        match read_knn_npz(&path) {
            Ok(p) => {
                check_graph(&p);
                if let Some(shape) = declared {
                    prop_assert_eq!(shape.first(), Some(&p.n()));
                }
            }
            Err(e) => one_line("npz member", t, &e),
        }
    }

    #[test]
    fn mutated_npz_archives(n in 2usize..6, k in 1usize..3, deflate: bool, edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let file = zip(&csr_members(n, k.min(n - 1), "<i4", "<f8"), deflate);
        let path = write(dir.path(), "g.npz", &apply(file, &edits));
        let shape_t = Instant::now();
        let declared = declared_shape(&path);
        assert!(shape_t.elapsed() < PROMPT, "declared_shape took {:?}", shape_t.elapsed());
        let t = Instant::now();
        match read_knn_npz(&path) {
            Ok(p) => {
                check_graph(&p);
                if let Some(shape) = declared {
                    prop_assert_eq!(shape.first(), Some(&p.n()));
                }
            }
            Err(e) => one_line("npz archive", t, &e),
        }
    }

    #[test]
    fn mutated_knn_arrays(n in 0usize..6, k in 1usize..4, on_indices: bool, edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let idx: Vec<f64> = (0..n * k).map(|t| ((t / k + 1 + t % k) % n.max(1)) as f64).collect();
        let dist: Vec<f64> = (0..n * k).map(|t| (t % k) as f64).collect();
        let mut i_file = array("<i8", &[n as u64, k as u64], false, &idx);
        let mut d_file = array("<f4", &[n as u64, k as u64], false, &dist);
        let target = if on_indices { &mut i_file } else { &mut d_file };
        *target = apply(std::mem::take(target), &edits);
        let (ip, dp) = (write(dir.path(), "i.npy", &i_file), write(dir.path(), "d.npy", &d_file));
        let shape_t = Instant::now();
        let declared = (declared_shape(&ip), declared_shape(&dp));
        assert!(shape_t.elapsed() < PROMPT, "declared_shape took {:?}", shape_t.elapsed());
        let t = Instant::now();
        match read_knn_arrays(&ip, &dp) {
            Ok(p) => {
                check_graph(&p);
                for shape in [declared.0, declared.1].into_iter().flatten() {
                    prop_assert_eq!(shape.first(), Some(&p.n()));
                }
            }
            Err(e) => one_line("knn arrays", t, &e),
        }
    }
}
