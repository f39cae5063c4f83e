//! Writes the exact kNN graph of a data set as two .npy files, the precomputed neighbours a
//! UMAP or t-SNE pipeline can take (`umap.UMAP(precomputed_knn=(indices, distances))`; UMAP's
//! lists include each point itself first, so prepend it there).
//!
//! `cargo run --release --example knn_graph -- DATA.npy K OUT_PREFIX` writes
//! `OUT_PREFIX_indices.npy` (n×K int64) and `OUT_PREFIX_distances.npy` (n×K float64).
//! Without arguments: the bundled digits, K = 15, into the system's temporary directory.

use std::fs::File;
use std::io::BufWriter;

use faithful::{Evaluator, read_points, write_npy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (points, k, prefix) = match &args[..] {
        [data, k, prefix] => (read_points(data)?, k.parse()?, prefix.clone()),
        [] => {
            let prefix = std::env::temp_dir().join("faithful_digits_knn");
            (faithful::example_digits().high, 15, prefix.display().to_string())
        }
        _ => return Err("usage: knn_graph DATA K OUT_PREFIX".into()),
    };
    let n = points.n();
    let (graph, report) = Evaluator::builder(points).build().knn(k)?;
    let indices = format!("{prefix}_indices.npy");
    let distances = format!("{prefix}_distances.npy");
    write_npy(&mut BufWriter::new(File::create(&indices)?), n, k, graph.idx.iter().map(|&j| i64::from(j)))?;
    write_npy(&mut BufWriter::new(File::create(&distances)?), n, k, graph.dist.iter().copied())?;
    // The lists are sorted by (distance, index) and never contain the point itself.
    assert!((0..n).all(|i| !graph.row(i, k).contains(&(i as u32))));
    assert!((0..n).all(|i| graph.dist_row(i, k).windows(2).all(|w| w[0] <= w[1])));
    println!("exact {k}-NN of {n} points ({} backend): {indices}, {distances}", report.backend);
    Ok(())
}
