//! Builds the vendored Qhull (vendor/qhull_r: Qhull 2020.2, the copy scipy vendors) and the
//! small C shim that triangulates like `scipy.spatial.Delaunay`, for the gap index (`gi`).

fn main() {
    const QHULL: &[&str] = &[
        "geom2_r.c", "geom_r.c", "global_r.c", "io_r.c", "libqhull_r.c", "mem_r.c", "merge_r.c", "poly2_r.c",
        "poly_r.c", "qset_r.c", "random_r.c", "stat_r.c", "user_r.c", "usermem_r.c", "userprintf_r.c",
    ];
    let mut build = cc::Build::new();
    for f in QHULL {
        build.file(format!("vendor/qhull_r/{f}"));
    }
    build
        .file("src/measures/delaunay.c")
        .include("vendor/qhull_r")
        .warnings(false)
        // Plain IEEE arithmetic, as in scipy's build: no fused multiply-adds.
        .flag_if_supported("-ffp-contract=off")
        .compile("faithful_qhull");
    println!("cargo:rerun-if-changed=vendor/qhull_r");
    println!("cargo:rerun-if-changed=src/measures/delaunay.c");
}
