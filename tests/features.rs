//! Cargo features (Cargo.toml): a program that embeds faithful with `default-features = false`
//! gets a CPU-only library without the command line's crates or wgpu, and `features = ["gpu"]`
//! adds wgpu and what it needs, nothing else. Checked on `cargo tree`'s normal dependencies.

use std::collections::BTreeSet;
use std::process::Command;

/// `cargo tree -e normal` with `args`, offline and locked, one line per package (`--prefix depth`
/// puts the depth before each name; `--no-dedupe` repeats every subtree in full).
fn tree(args: &[&str]) -> Vec<(usize, String)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-e", "normal", "--prefix", "depth", "--no-dedupe", "--locked", "--offline"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .filter_map(|line| {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            let depth = line[..digits].parse().ok()?;
            Some((depth, line[digits..].split_whitespace().next()?.to_string()))
        })
        .collect()
}

fn names(tree: &[(usize, String)]) -> BTreeSet<String> {
    tree.iter().map(|(_, n)| n.clone()).collect()
}

/// Everything below the direct dependency `dep` (`dep` included).
fn subtree(tree: &[(usize, String)], dep: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut inside = false;
    for (depth, name) in tree {
        if *depth == 1 {
            inside = name == dep;
        }
        if inside {
            out.insert(name.clone());
        }
    }
    out
}

const CLI_OR_GPU: [&str; 4] = ["clap", "indicatif", "ctrlc", "wgpu"];

#[test]
fn without_default_features_the_library_has_no_cli_or_gpu_crates() {
    let lib = names(&tree(&["--no-default-features"]));
    assert!(lib.contains("faithful") && lib.contains("rayon"), "{lib:?}");
    for name in CLI_OR_GPU {
        assert!(!lib.contains(name), "{name} is in the CPU-only library's tree: {lib:?}");
    }
    assert!(!lib.iter().any(|n| n.starts_with("wgpu") || n == "naga"), "{lib:?}");
}

#[test]
fn the_gpu_feature_adds_wgpu_and_what_it_needs_only() {
    let lib = names(&tree(&["--no-default-features"]));
    let gpu_tree = tree(&["--no-default-features", "--features", "gpu"]);
    let wgpu = subtree(&gpu_tree, "wgpu");
    assert!(wgpu.contains("wgpu") && wgpu.contains("wgpu-core"), "{wgpu:?}");
    // The GPU readback awaits wgpu's map_async callback through a oneshot channel.
    let readback = subtree(&gpu_tree, "futures-channel");
    let added: BTreeSet<String> = names(&gpu_tree).difference(&lib).cloned().collect();
    let unexplained: Vec<&String> = added.iter().filter(|n| !wgpu.contains(*n) && !readback.contains(*n)).collect();
    assert!(unexplained.is_empty(), "the gpu feature adds {unexplained:?}, which wgpu does not need");
    for name in ["clap", "indicatif", "ctrlc"] {
        assert!(!added.contains(name), "{name} came with the gpu feature");
    }
}

#[test]
fn the_default_features_have_the_command_line_and_the_gpu() {
    let all = names(&tree(&[]));
    for name in CLI_OR_GPU {
        assert!(all.contains(name), "{name} is missing from the default tree: {all:?}");
    }
}
