//! No Fast result is ever labelled exact (issue 24). One evaluator runs Fast and then Exact on
//! the GPU, on data inside the certified domain, on a 300-point integer lattice with 1e-9
//! jitter (ties at f32 resolution), and with a projection outside the certified domain (every
//! call with it falls back to the CPU, which once reused the Fast list under an "exact"
//! label). Everything a report labels exact (the run, each output, the kNN graph) equals the
//! CPU reference bit for bit; what differs from it is labelled fast. The command line's `knn`
//! says "fast ... not certified exact" in its header for the same lists.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use std::process::Command;

use faithful::gpu::GpuRequest;
use faithful::{BackendChoice, Evaluation, Evaluator, Numerics, Points, RunReport, Spec};

/// (name, original space, projection): inside the certified domain, and the jittered lattice.
fn cases() -> Vec<(&'static str, Points, Points)> {
    let n = 300;
    let mut rng = common::Rng(11);
    let generic = common::points("generic", n, 6, |_, _| rng.uniform());
    let mut rng = common::Rng(12);
    let generic_low = common::points("generic_low", n, 2, |_, _| rng.uniform());
    let mut jit = common::Rng(3);
    let lattice = common::points("lattice", n, 4, |i, c| ((i >> (2 * c)) & 3) as f64 + 1e-9 * (jit.uniform() - 0.5));
    let lattice_low =
        common::points("lattice_low", n, 2, |i, c| ((i * (c + 1)) % 5) as f64 + 1e-9 * (jit.uniform() - 0.5));
    // The projection outside the certified domain (a nonzero coordinate below 2^-458): every
    // call with it falls back to the CPU, which must not take a Fast list for an exact one.
    let mut tiny = generic_low.as_slice().to_vec();
    tiny[1] = 1e-140;
    let outside_low = Points::from_vec("outside_low", n, 2, tiny).unwrap();
    vec![
        ("inside", generic.clone(), generic_low),
        ("lattice_jitter_1e-9", lattice, lattice_low),
        ("projection_outside_the_domain", generic, outside_low),
    ]
}

fn specs() -> Vec<Spec> {
    ["tnc:k=10", "mrre:k=10", "lcmc:k=10", "coranking:k_max=20"].iter().map(|s| s.parse().unwrap()).collect()
}

/// Everything `got` labels exact equals the CPU reference `want`: the whole run when the run
/// says exact. A run that says fast must also say which outputs were fast.
fn exact_where_labelled(tag: &str, got: &Evaluation, want: &Evaluation) {
    let run = &got.run;
    let fast: Vec<&str> = run.served.iter().filter(|s| s.numerics == "fast").map(|s| s.output.as_str()).collect();
    assert_eq!(run.numerics == "fast", !fast.is_empty(), "{tag}: run numerics {} vs outputs {fast:?}", run.numerics);
    if run.numerics == "exact" {
        assert_eq!(
            got.projections[0].scores, want.projections[0].scores,
            "{tag}: labelled exact but differs from the CPU reference"
        );
    }
}

fn knn_exact_where_labelled(
    tag: &str,
    got: &(std::sync::Arc<faithful::Neighbours>, RunReport),
    want: &faithful::Neighbours,
) -> bool {
    let (nb, run) = got;
    let same = nb.idx == want.idx
        && nb.dist.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
            == want.dist.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
    if run.numerics == "exact" {
        assert!(same, "{tag}: kNN labelled exact ({} served) but differs from the CPU reference", run.backend);
    }
    same
}

#[test]
fn fast_then_exact_on_one_evaluator_labels_only_exact_results_exact() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let k = 10;
    for (name, high, low) in cases() {
        let cpu = Evaluator::builder(high.clone()).backend(BackendChoice::Cpu).build();
        let want = cpu.measure_many(&[&low], None, &specs()).unwrap();
        let want_knn = cpu.knn(k).unwrap().0;

        let mut eval = Evaluator::builder(high.clone()).backend(BackendChoice::Gpu).numerics(Numerics::Fast).build();
        // Fast: the kNN list first (kept), then a measure that may reuse it.
        let fast_knn = eval.knn(k).unwrap();
        let fast_same = knn_exact_where_labelled(&format!("{name} fast knn"), &fast_knn, &want_knn);
        let fast = eval.measure_many(&[&low], None, &specs()).unwrap();
        exact_where_labelled(&format!("{name} fast measure"), &fast, &want);
        if fast.run.plan.knn_high_reused {
            let kh = fast.run.served.iter().find(|s| s.output == "knn_high").unwrap();
            assert_eq!(kh.numerics, fast_knn.1.numerics, "{name}: a reused list keeps its own label");
        }
        // Exact on the same evaluator: the Fast list is never reused.
        eval.set_numerics(Numerics::Exact);
        let exact = eval.measure_many(&[&low], None, &specs()).unwrap();
        assert_eq!(exact.run.numerics, "exact", "{name}: {:?}", exact.run.served);
        exact_where_labelled(&format!("{name} exact measure"), &exact, &want);
        let exact_knn = eval.knn(k).unwrap();
        assert_eq!(exact_knn.1.numerics, "exact");
        assert!(knn_exact_where_labelled(&format!("{name} exact knn"), &exact_knn, &want_knn));
        // And a Fast call after the Exact one may reuse the exact list, labelled exact.
        eval.set_numerics(Numerics::Fast);
        let again = eval.measure_many(&[&low], None, &specs()).unwrap();
        exact_where_labelled(&format!("{name} fast after exact"), &again, &want);
        eprintln!(
            "{name}: fast knn {} ({}), equal to the reference: {fast_same}; exact served by {} ({:?})",
            fast_knn.1.numerics, fast_knn.1.backend, exact.run.backend, exact.run.fallback_reason
        );
    }
}

/// The same on the command line: `knn --numerics fast` on the GPU says "fast ... not certified
/// exact" whenever its lists are Fast, and whatever says exact equals `--backend cpu`.
#[test]
fn knn_command_labels_fast_lists() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, high, _) in cases() {
        let path = dir.path().join(format!("{name}.csv"));
        let text: String = (0..high.n())
            .map(|i| high.row(i).iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(",") + "\n")
            .collect();
        std::fs::write(&path, text).unwrap();
        let run = |extra: &[&str]| {
            let out = Command::new(env!("CARGO_BIN_EXE_faithful"))
                .args(["knn", "--k", "10", "--data"])
                .arg(&path)
                .args(extra)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        };
        let cpu: serde_json::Value = serde_json::from_str(&run(&["--backend", "cpu", "--json"])).unwrap();
        for numerics in ["fast", "exact"] {
            let got: serde_json::Value =
                serde_json::from_str(&run(&["--backend", "gpu", "--numerics", numerics, "--json"])).unwrap();
            let header = run(&["--backend", "gpu", "--numerics", numerics]);
            let first = header.lines().next().unwrap();
            let labelled = got["run"]["numerics"].as_str().unwrap();
            if labelled == "exact" {
                assert!(first.starts_with("exact 10-NN"), "{name}: {first}");
                assert_eq!(got["indices"], cpu["indices"], "{name} {numerics}: labelled exact");
                assert_eq!(got["distances"].to_string(), cpu["distances"].to_string(), "{name} {numerics}");
            } else {
                assert_eq!(numerics, "fast");
                assert!(first.starts_with("fast (the GPU's f32 order, not certified exact) 10-NN"), "{name}: {first}");
            }
            if numerics == "exact" {
                assert_eq!(labelled, "exact");
            }
        }
    }
}
