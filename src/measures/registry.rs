//! The table of measures and the resolution of a [`Spec`] against it.

use super::def::{HighReads, KRule, LocalDef, LocalKind, MeasureDef, ParamDef, ParamKind, Resolved, custom_kmeans};
use crate::error::{Error, Result};
use crate::resources::Needs;
use crate::spec::{ParamValue, Spec};

/// A local output whose mean is the value.
const fn mean(key: &'static str) -> LocalDef {
    LocalDef::new(key, LocalKind::Mean)
}

const K: ParamDef = ParamDef { name: "k", kind: ParamKind::Int, default: "20" };
const SIGMA: ParamDef = ParamDef { name: "sigma", kind: ParamKind::PositiveFloat, default: "0.1" };

/// Every measure faithful implements.
pub static REGISTRY: &[MeasureDef] = &[
    MeasureDef {
        id: "tnc",
        zadu_id: "trustworthiness_continuity",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Trustworthiness,
        keys: &["trustworthiness", "continuity"],
        keyed_by: &[],
        local: &[mean("local_trustworthiness"), mean("local_continuity")],
        needs: |r| Needs::cross(r.k),
        high: HighReads::Declared,
        compute: super::tnc::compute,
        about: "Trustworthiness & continuity: penalise false and missing neighbours by rank",
    },
    MeasureDef {
        id: "mrre",
        zadu_id: "mean_relative_rank_error",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["mrre_false", "mrre_missing"],
        keyed_by: &[],
        local: &[mean("local_mrre_false"), mean("local_mrre_missing")],
        needs: |r| Needs::cross(r.k),
        high: HighReads::Declared,
        compute: super::mrre::compute,
        about: "Mean relative rank error (higher is better, as in ZADU)",
    },
    MeasureDef {
        id: "continuity",
        zadu_id: "continuity",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Trustworthiness,
        keys: &["continuity"],
        keyed_by: &[],
        local: &[mean("local_continuity")],
        needs: |r| Needs::cross_low(r.k),
        high: HighReads::Declared,
        compute: super::tnc::compute_continuity,
        about: "Continuity alone (tnc's second key; not a ZADU id): needs only each point's original k neighbours, \
                so a kNN graph serves it",
    },
    MeasureDef {
        id: "mrre_missing",
        zadu_id: "mean_relative_rank_error_missing",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["mrre_missing"],
        keyed_by: &[],
        local: &[mean("local_mrre_missing")],
        needs: |r| Needs::cross_low(r.k),
        high: HighReads::Declared,
        compute: super::mrre::compute_missing,
        about: "MRRE of the missing neighbours alone (mrre's second key; not a ZADU id): needs only each point's \
                original k neighbours, so a kNN graph serves it",
    },
    MeasureDef {
        id: "lcmc",
        zadu_id: "local_continuity_meta_criteria",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["lcmc"],
        keyed_by: &[],
        local: &[mean("local_lcmc")],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::Declared,
        compute: super::lcmc::compute,
        about: "Local continuity meta-criterion: kNN overlap above chance",
    },
    MeasureDef {
        id: "coranking",
        zadu_id: "coranking",
        // 0: n − 2, every K.
        params: &[ParamDef { name: "k_max", kind: ParamKind::Count, default: "0" }],
        min_classes: 0,
        k_rule: KRule::Curve,
        keys: &["auc_rnx", "q_local", "q_global", "k_max_lcmc"],
        local: &[mean("local_auc_rnx")],
        keyed_by: &[],
        // Its own exact pass over rows (every pair's rank in both spaces), not the kNN lists.
        needs: |_| Needs::default(),
        high: HighReads::Declared,
        compute: super::coranking::compute,
        about: "Co-ranking family for every K ≤ k_max (0: n−2): AUC of R_NX on a log-K axis, Q_local, Q_global; \
                curves qnx, rnx, lcmc, mrre_false, mrre_missing, trustworthiness, continuity (K < n/2)",
    },
    MeasureDef {
        id: "nh",
        zadu_id: "neighborhood_hit",
        params: &[K],
        min_classes: 1,
        k_rule: KRule::Neighbor,
        keys: &["neighborhood_hit"],
        keyed_by: &[],
        local: &[mean("local_neighborhood_hit")],
        needs: |r| Needs::knn_low(r.k),
        high: HighReads::Declared,
        compute: super::nh::compute,
        about: "Neighbourhood hit: share of projection neighbours with the same label",
    },
    MeasureDef {
        id: "ca_tnc",
        zadu_id: "class_aware_trustworthiness_continuity",
        params: &[K],
        min_classes: 2,
        k_rule: KRule::Trustworthiness,
        keys: &["ca_trustworthiness", "ca_continuity"],
        keyed_by: &[],
        local: &[mean("local_ca_trustworthiness"), mean("local_ca_continuity")],
        needs: |r| Needs::cross(r.k),
        high: HighReads::Declared,
        compute: super::ca_tnc::compute,
        about: "Class-aware T&C: false neighbours of other classes, missing ones of the same class",
    },
    MeasureDef {
        id: "nd",
        zadu_id: "neighbor_dissimilarity",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["neighbor_dissimilarity"],
        keyed_by: &[],
        local: &[],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::Declared,
        compute: super::nd::compute,
        about: "Neighbour dissimilarity of the shared-neighbour graphs",
    },
    MeasureDef {
        id: "proc",
        zadu_id: "procrustes",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighborhood,
        keys: &["procrustes"],
        keyed_by: &[],
        local: &[],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::Coordinates,
        compute: super::proc::compute,
        about: "Procrustes distance of each neighbourhood after optimal rotation",
    },
    MeasureDef {
        id: "topo",
        zadu_id: "topographic_product",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["topographic_product"],
        keyed_by: &[],
        local: &[],
        needs: |r| Needs::cross_with_dists(r.k),
        high: HighReads::Declared,
        compute: super::topo::compute,
        about: "Topographic product of neighbour distance ratios",
    },
    // Label and cluster measures: no kNN, they read the point sets and labels directly.
    MeasureDef {
        id: "l_tnc",
        zadu_id: "label_trustworthiness_and_continuity",
        params: &[
            ParamDef { name: "cvm", kind: ParamKind::Choice(&["dsc", "ch_btw"]), default: "dsc" },
            // np.random.seed / RandomState: 0 <= seed < 2^32.
            ParamDef { name: "random_seed", kind: ParamKind::Seed(32), default: "0" },
        ],
        min_classes: 2,
        k_rule: KRule::None,
        keys: &["label_trustworthiness", "label_continuity"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Coordinates,
        compute: super::l_tnc::compute,
        about: "Label T&C: per class pair, a cluster validation measure in X vs Y (random_seed: ch_btw shuffles only)",
    },
    MeasureDef {
        id: "dsc",
        zadu_id: "distance_consistency",
        params: &[],
        min_classes: 2,
        k_rule: KRule::None,
        keys: &["distance_consistency"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Declared,
        compute: super::dsc::compute,
        about: "Distance consistency: share of points nearest to their own class centroid",
    },
    MeasureDef {
        id: "ivm",
        zadu_id: "internal_validation_measure",
        params: &[ParamDef {
            name: "measure",
            kind: ParamKind::Choice(&[
                "silhouette",
                "calinski_harabasz",
                "davies_bouldin",
                "dunn",
                "average_between_within",
            ]),
            default: "silhouette",
        }],
        min_classes: 2,
        k_rule: KRule::None,
        keys: &["silhouette"],
        keyed_by: &["measure"],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Declared,
        compute: super::ivm::compute,
        about: "Internal validation of the projection with the labels as clusters (scikit-learn's three; Dunn's index, \
                mean between- over within-class distance); key: the measure's name",
    },
    MeasureDef {
        id: "c_evm",
        zadu_id: "clustering_and_external_validation_measure",
        params: &[
            ParamDef {
                name: "measure",
                kind: ParamKind::Choice(&["arand", "ami", "nmi", "vmeasure"]),
                default: "arand",
            },
            ParamDef { name: "clustering", kind: ParamKind::Choice(&["kmeans"]), default: "kmeans" },
        ],
        min_classes: 2,
        k_rule: KRule::None,
        keys: &["kmeans_arand"],
        keyed_by: &["clustering", "measure"],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Declared,
        compute: super::c_evm::compute,
        about: "k-means (k = classes, k-means++ seeded as ZADU) on the projection vs the labels; key: {clustering}_{measure}",
    },
    MeasureDef {
        id: "cadi",
        zadu_id: "class_angular_distortion_index",
        params: &[
            ParamDef { name: "n_triplets", kind: ParamKind::Count, default: "0" },
            // np.random.default_rng: any non-negative integer (faithful: below 2^63).
            ParamDef { name: "random_seed", kind: ParamKind::Seed(63), default: "0" },
        ],
        min_classes: 2,
        k_rule: KRule::None,
        keys: &["class_angular_distortion_index"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Coordinates,
        compute: super::cadi::compute,
        about: "Class angular distortion index over random class triplets (n_triplets=0: 10n)",
    },
    MeasureDef {
        id: "gi",
        zadu_id: "gap_index",
        params: &[ParamDef { name: "metric", kind: ParamKind::Choice(&["euclidean"]), default: "euclidean" }],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["gap_index"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Coordinates,
        compute: super::gi::compute,
        about: "Gap index: area distortion of the projection's Delaunay triangles (2-D projections)",
    },
    MeasureDef {
        id: "stress",
        zadu_id: "stress",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["stress"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::pair_sums(),
        high: HighReads::Declared,
        compute: super::stress::compute,
        about: "Stress: √(Σ(d^X − d^Y)² / Σ(d^X)²) over all pairs",
    },
    MeasureDef {
        id: "sn_stress",
        zadu_id: "scale_normalized_stress",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["scale_normalized_stress"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::pair_sums(),
        high: HighReads::Declared,
        compute: super::sn_stress::compute,
        about: "Scale-normalised stress: the stress of the best scaling α·Y",
    },
    MeasureDef {
        id: "nm_stress",
        zadu_id: "non_metric_stress",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["non_metric_stress"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::pair_isotonic(),
        high: HighReads::Declared,
        compute: super::nm_stress::compute,
        about: "Non-metric stress: residual of the isotonic regression of d^Y on d^X over all pairs",
    },
    MeasureDef {
        id: "pr",
        zadu_id: "pearson_r",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["pearson_r"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::pair_sums(),
        high: HighReads::Declared,
        compute: super::pr::compute,
        about: "Pearson correlation of d^X and d^Y over all pairs",
    },
    MeasureDef {
        id: "srho",
        zadu_id: "spearman_rho",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["spearman_rho"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::pair_ranks(),
        high: HighReads::Declared,
        compute: super::srho::compute,
        about: "Spearman correlation (average ranks, ties averaged) of d^X and d^Y over all pairs",
    },
    MeasureDef {
        id: "kl_div",
        zadu_id: "kl_divergence",
        params: &[SIGMA],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["kl_divergence"],
        keyed_by: &[],
        local: &[],
        needs: |r| Needs::density(r.float("sigma")),
        high: HighReads::Declared,
        compute: super::kl_div::compute,
        about: "KL divergence of the Gaussian densities (bandwidth sigma) of X and Y",
    },
    MeasureDef {
        id: "dtm",
        zadu_id: "distance_to_measure",
        params: &[SIGMA],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["distance_to_measure"],
        keyed_by: &[],
        local: &[],
        needs: |r| Needs::density(r.float("sigma")),
        high: HighReads::Declared,
        compute: super::dtm::compute,
        about: "Distance to measure: Σ|p − q| of the Gaussian densities of X and Y",
    },
    MeasureDef {
        id: "snc",
        zadu_id: "steadiness_cohesiveness",
        params: &[
            ParamDef { name: "iteration", kind: ParamKind::Count, default: "150" },
            ParamDef { name: "walk_num_ratio", kind: ParamKind::PositiveFloat, default: "0.3" },
            ParamDef { name: "alpha", kind: ParamKind::PositiveFloat, default: "0.1" },
            // 0: ⌊√n⌋, ZADU's k=None.
            ParamDef { name: "k", kind: ParamKind::Int, default: "0" },
            // Or ZADU's '<k>-means': k-means with k clusters instead of ⌊√m⌋.
            ParamDef {
                name: "clustering_strategy",
                kind: ParamKind::Clustering(&["dbscan", "kmeans"]),
                default: "dbscan",
            },
            // NumPy's RandomState(random_state); ZADU's default None is unseeded.
            ParamDef { name: "random_state", kind: ParamKind::Seed(32), default: "0" },
        ],
        min_classes: 0,
        k_rule: KRule::NeighborSqrt,
        keys: &["steadiness", "cohesiveness"],
        keyed_by: &[],
        local: &[
            LocalDef::new("local_steadiness", LocalKind::Score),
            LocalDef::new("local_cohesiveness", LocalKind::Score),
        ],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::CoordinatesUnless { param: "clustering_strategy", value: "dbscan" },
        compute: super::snc::compute,
        about: "Steadiness & cohesiveness: random-walk clusters (HDBSCAN or k-means) of one space, \
                distorted in the other (k=0: ⌊√n⌋; seeded as ZADU's RandomState)",
    },
    // Beyond ZADU: the distance, embedding-cost and neighbourhood measures of the other
    // libraries (SickleJS, tf-projection-qm, PaCMAP, TriMap, TorchDR); their ids are their own.
    MeasureDef {
        id: "sammon",
        zadu_id: "sammon_stress",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["sammon_stress"],
        keyed_by: &[],
        local: &[LocalDef::new("local_sammon_stress", LocalKind::Sum)],
        needs: |_| Needs::sammon(),
        high: HighReads::Declared,
        compute: super::sammon::compute,
        about: "Sammon's stress: Σ(d^X − d^Y)²/d^X ÷ Σd^X over all pairs (pairs at d^X = 0 left out); lower is better",
    },
    MeasureDef {
        id: "cca_stress",
        zadu_id: "curvilinear_component_analysis_stress",
        params: &[
            // A length in the projection's units: no default is right for every projection.
            ParamDef { name: "lambda", kind: ParamKind::PositiveFloat, default: "" },
            ParamDef { name: "kernel", kind: ParamKind::Choice(&["exponential", "step"]), default: "exponential" },
        ],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["cca_stress", "cca_stress_raw"],
        keyed_by: &[],
        local: &[LocalDef::new("local_cca_stress", LocalKind::Sum)],
        needs: |r| Needs::cca(super::cca_stress::job(r)),
        high: HighReads::Declared,
        compute: super::cca_stress::compute,
        about: "CCA stress: Σ(d^X − d^Y)²F(d^Y) ÷ Σ(d^X)²F(d^Y), F = exp(−d/λ) or 1[d ≤ λ] (lambda required); lower is better",
    },
    MeasureDef {
        id: "residual_variance",
        zadu_id: "residual_variance",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["residual_variance"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::pair_sums(),
        high: HighReads::Declared,
        compute: super::residual_variance::compute,
        about: "Residual variance: 1 − r² of d^X and d^Y over all pairs (Isomap's); lower is better",
    },
    MeasureDef {
        id: "nerv",
        zadu_id: "neighbor_retrieval_visualizer",
        params: &[
            ParamDef { name: "lambda", kind: ParamKind::UnitFloat, default: "0.5" },
            ParamDef { name: "perplexity", kind: ParamKind::PositiveFloat, default: "30" },
            // separate: each space's bandwidths from the perplexity; shared: X's reused in Y (SickleJS).
            ParamDef { name: "bandwidth", kind: ParamKind::Choice(&["separate", "shared"]), default: "separate" },
        ],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["nerv", "nerv_recall", "nerv_precision"],
        keyed_by: &[],
        local: &[mean("local_nerv"), mean("local_nerv_recall"), mean("local_nerv_precision")],
        needs: |r| Needs::nerv(super::nerv::job(r)),
        high: HighReads::Declared,
        compute: super::nerv::compute,
        about: "NeRV: mean over points of λ·KL(p‖q) + (1−λ)·KL(q‖p) of Gaussian neighbourhoods of the given perplexity; lower is better",
    },
    MeasureDef {
        id: "knn_overlap",
        zadu_id: "knn_overlap",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["knn_overlap", "jaccard"],
        keyed_by: &[],
        local: &[
            mean("local_knn_overlap"),
            mean("local_jaccard"),
            LocalDef::new("true_neighbours", LocalKind::Count),
            LocalDef::new("false_neighbours", LocalKind::Count),
            LocalDef::new("missing_neighbours", LocalKind::Count),
        ],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::Declared,
        compute: super::knn_overlap::compute,
        about: "kNN overlap |N^X ∩ N^Y|/k and Jaccard |∩|/|∪| per point; true, false and missing neighbours",
    },
    MeasureDef {
        id: "ale",
        zadu_id: "average_local_error",
        // true: of the squared distances, tf-projection-qm's.
        params: &[ParamDef { name: "squared", kind: ParamKind::Choice(&["false", "true"]), default: "false" }],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["average_local_error"],
        keyed_by: &[],
        local: &[mean("local_average_local_error")],
        needs: |r| Needs::ale(super::ale::squared(r)),
        high: HighReads::Declared,
        compute: super::ale::compute,
        about: "Average local error: per point the mean |d^X/max d^X − d^Y/max d^Y| over the others; lower is better",
    },
    MeasureDef {
        id: "density_preservation",
        zadu_id: "density_preservation",
        params: &[K],
        min_classes: 0,
        k_rule: KRule::Neighbor,
        keys: &["density_preservation"],
        keyed_by: &[],
        local: &[LocalDef::new("local_density_preservation", LocalKind::LogRatio)],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::Declared,
        compute: super::density_preservation::compute,
        about: "densMAP's density preservation: Pearson r of the log local radii (mean squared kNN distance) of X and Y",
    },
    MeasureDef {
        id: "triplet_accuracy",
        zadu_id: "random_triplet_accuracy",
        params: &[
            // 0: 5n, PaCMAP's five per point.
            ParamDef { name: "n_triplets", kind: ParamKind::Count, default: "0" },
            // np.random.default_rng(random_state), as PaCMAP's rng: faithful reproduces seeds < 2^63.
            ParamDef { name: "random_state", kind: ParamKind::Seed(63), default: "0" },
            ParamDef { name: "exhaustive", kind: ParamKind::Choice(&["false", "true"]), default: "false" },
        ],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["triplet_accuracy"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Pairs,
        compute: super::triplet_accuracy::compute,
        about: "PaCMAP's random-triplet accuracy: share of triplets whose distance order is kept (n_triplets=0: 5n)",
    },
    MeasureDef {
        id: "global_score",
        zadu_id: "global_score",
        params: &[],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["global_score"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Coordinates,
        compute: super::global_score::compute,
        about: "TriMap's global score: exp(−(E_Y − E_PCA)/E_PCA) of linear reconstruction errors (1 for PCA)",
    },
    // Topology (SickleJS's persistent homology of both spaces, compared as ripser and gudhi do).
    MeasureDef {
        id: "topology",
        zadu_id: "persistent_homology",
        params: &[ParamDef { name: "dim", kind: ParamKind::Choice(&["0", "1"]), default: "0" }],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["bottleneck", "wasserstein"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Pairs,
        compute: super::topology::compute,
        about: "Persistent homology (Vietoris–Rips, H0 or H1) of X and Y compared by the bottleneck and 1-Wasserstein \
                distances; curves: the diagrams (dim=0: deaths_high, deaths_low; dim=1: births_/deaths_ of each)",
    },
    // Class separation beyond ZADU (SickleJS's; ivm also takes dunn and average_between_within).
    MeasureDef {
        id: "hypothesis_margin",
        zadu_id: "hypothesis_margin",
        params: &[],
        min_classes: 2,
        k_rule: KRule::None,
        keys: &["hypothesis_margin"],
        keyed_by: &[],
        // A point alone in its class has no near hit (null); with every class of two or more
        // points each result reports the kind as mean.
        local: &[LocalDef::new("local_hypothesis_margin", LocalKind::PartialMean)],
        needs: |_| Needs::default(),
        high: HighReads::Declared,
        compute: super::hypothesis_margin::compute,
        about: "Hypothesis margin: per point ½(distance to the nearest other class − to the nearest own-class point) \
                in the projection, averaged; higher is better",
    },
    MeasureDef {
        id: "knn_classification",
        zadu_id: "knn_classification",
        params: &[K],
        min_classes: 1,
        k_rule: KRule::Neighbor,
        keys: &["knn_accuracy_low", "knn_accuracy_high", "knn_accuracy_ratio"],
        keyed_by: &[],
        local: &[mean("local_knn_accuracy_low")],
        needs: |r| Needs::knn_both(r.k),
        high: HighReads::Declared,
        compute: super::knn_classification::compute,
        about: "Leave-one-out kNN classification accuracy (majority of k neighbours, ties to the smallest label) \
                in the projection and the original space, and their ratio",
    },
    MeasureDef {
        id: "gce",
        zadu_id: "gabriel_classification_error",
        params: &[],
        min_classes: 1,
        k_rule: KRule::None,
        keys: &["gabriel_classification_error"],
        keyed_by: &[],
        // A point with a single Gabriel neighbour has no value in DRquality (NaN): null.
        local: &[LocalDef::new("local_gce", LocalKind::PartialMean)],
        needs: |_| Needs::default(),
        high: HighReads::Pairs,
        compute: super::gce::compute,
        about: "Gabriel classification error (DRquality): each point's Gabriel neighbours in the 2-D projection, \
                ranked by original distance, weighted by DRquality's harmonic decay where of another class; lower is better",
    },
    // Scatterplot diagnostics of the 2-D projection alone.
    MeasureDef {
        id: "scagnostics",
        zadu_id: "scagnostics",
        // pyscagnostics' parameters and defaults: the starting hexagonal grid (halved while more
        // than 250 bins are occupied) and the MST outlier peeling.
        params: &[
            ParamDef { name: "bins", kind: ParamKind::Int, default: "50" },
            ParamDef { name: "remove_outliers", kind: ParamKind::Choice(&["true", "false"]), default: "true" },
        ],
        min_classes: 0,
        k_rule: KRule::None,
        keys: &["outlying", "skewed", "clumpy", "sparse", "striated", "convex", "skinny", "stringy", "monotonic"],
        keyed_by: &[],
        local: &[],
        needs: |_| Needs::default(),
        high: HighReads::Declared,
        compute: super::scagnostics::compute,
        about: "Wilkinson's nine scagnostics of the 2-D scatterplot (outlying, skewed, clumpy, sparse, striated, convex, \
                skinny, stringy, monotonic) after hexagonal binning, as pyscagnostics (R scagnostics' code) computes them",
    },
];

/// The measures a kNN graph serves, in registry order: those whose default spec is
/// [`Resolved::graph_servable`] (a measure with a parameter that has no default is not).
pub fn graph_measures() -> impl Iterator<Item = &'static MeasureDef> {
    REGISTRY.iter().filter(|def| Resolved::new(&Spec::new(def.id)).is_ok_and(|r| r.graph_servable()))
}

/// ZADU 0.5.4 measures not implemented yet (alias, full id).
pub static ZADU_PENDING: &[(&str, &str)] = &[];

/// Finds a measure by alias or full ZADU id.
pub fn find(id: &str) -> Result<&'static MeasureDef> {
    if let Some(def) = REGISTRY.iter().find(|d| d.id == id || d.zadu_id == id) {
        return Ok(def);
    }
    if ZADU_PENDING.iter().any(|(a, full)| *a == id || *full == id) {
        return Err(Error::NotImplemented { id: id.to_string() });
    }
    let known = REGISTRY.iter().map(|d| d.id).collect::<Vec<_>>().join(", ");
    Err(Error::UnknownMeasure { id: id.to_string(), known })
}

impl Resolved {
    /// Checks every parameter whose range depends on the number of points: `k` (ZADU's rule,
    /// [`Resolved::check_k`]) and nerv's perplexity (1 ≤ perplexity ≤ n − 1); and scagnostics'
    /// `bins` (2 ≤ bins ≤ 1000).
    pub fn check_n(&self, n: usize) -> Result<()> {
        self.check_k(n)?;
        if self.def.id == "nerv" {
            super::nerv::check_perplexity(self, n)?;
        }
        if self.def.id == "scagnostics" {
            super::scagnostics::check_bins(self)?;
        }
        Ok(())
    }

    /// Resolves `spec`: known id, known parameters of the right type. `k` is range-checked later,
    /// against n, by [`Resolved::check_k`].
    pub fn new(spec: &Spec) -> Result<Self> {
        let def = find(&spec.id)?;
        for (name, _) in &spec.params {
            if !def.params.iter().any(|p| p.name == name) {
                let accepted = if def.params.is_empty() {
                    "none".to_string()
                } else {
                    def.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                };
                return Err(Error::UnknownParam { id: def.id.into(), param: name.clone(), accepted });
            }
        }
        let mut params = Vec::with_capacity(def.params.len());
        for p in def.params {
            let given = spec.params.iter().find(|(n, _)| n == p.name).map(|(_, v)| v.clone());
            if given.is_none() && p.default.is_empty() {
                return Err(Error::MissingParam { id: def.id.into(), param: p.name.into(), example: "1".into() });
            }
            let value = given.unwrap_or_else(|| ParamValue::parse(p.default));
            params.push((p.name.to_string(), typed(def, p, value)?));
        }
        let k_given = match params.iter().find(|(n, _)| n == "k" || n == "k_max") {
            Some((_, ParamValue::Int(k))) => *k,
            _ => 0,
        };
        Ok(Resolved { def, params, k: k_given.max(0) as usize, k_given })
    }

    /// Checks the memory that this spec's parameters size against `budget` bytes, before any
    /// work: `k` sizes the neighbour lists and cross ranks (n·k entries per space and
    /// projection), `n_triplets` the triplets drawn. Without this, a large value aborts on
    /// allocation instead of failing with a message.
    pub fn check_memory(&self, n: usize, projections: usize, budget: u64) -> Result<()> {
        let mut planned: Vec<(&str, u64, String)> = Vec::new();
        if self.def.k_rule != KRule::None {
            let bytes = self.needs().list_bytes(n, projections);
            planned.push(("k", bytes, format!("neighbour lists of {n} points ({projections} projection(s))")));
        }
        if self.params.iter().any(|(p, _)| p == "n_triplets") {
            let given = super::support::params::param_int(self, "n_triplets");
            let (t, per) = if self.def.id == "triplet_accuracy" {
                (super::triplet_accuracy::triplets(n, given), super::triplet_accuracy::BYTES_PER_TRIPLET)
            } else {
                (super::cadi::triplets(n, given), super::cadi::BYTES_PER_TRIPLET)
            };
            planned.push(("n_triplets", t.saturating_mul(per), format!("{t} triplets")));
        }
        if self.def.id == "topology" && super::topology::dim(self) == 1 {
            // Each space in turn: the pair distances and edges of one at a time.
            let bytes = super::support::rips::planned_bytes(n);
            planned.push(("dim", bytes, format!("the Rips H1 reduction of {n} points (pair distances and edges)")));
        }
        for (param, bytes, what) in planned {
            if bytes > budget {
                let value = self.params.iter().find(|(p, _)| p == param).map_or(String::new(), |(_, v)| v.to_string());
                return Err(Error::ParamMemory {
                    id: self.def.id.into(),
                    param: param.into(),
                    value,
                    what,
                    bytes,
                    budget,
                });
            }
        }
        Ok(())
    }
}

fn typed(def: &MeasureDef, p: &ParamDef, value: ParamValue) -> Result<ParamValue> {
    // A number held as text ({"k": "5"} from Python or JSON): the spec text reads `k=5` as a
    // number and keeps as text only an integer past i64, so an in-range number here was quoted.
    // Refused as that, for every numeric kind alike (not "past the 64-bit range" for "5", nor
    // "5" taken and "0.5" refused by a float).
    let numeric = !matches!(p.kind, ParamKind::Choice(_) | ParamKind::Clustering(_));
    if let ParamValue::Str(s) = &value {
        let in_range = s.parse::<i64>().is_ok() || (!crate::spec::is_integer_literal(s) && s.parse::<f64>().is_ok());
        if numeric && in_range {
            return Err(Error::BadParam {
                id: def.id.into(),
                param: p.name.into(),
                value: format!("\"{s}\""),
                reason: "a number written as text; pass it without quotes".into(),
            });
        }
    }
    // An integer past i64 is kept as written (for the message); a float parameter reads it.
    let value = match (p.kind, value) {
        (ParamKind::Float | ParamKind::PositiveFloat, ParamValue::Str(s)) if crate::spec::is_integer_literal(&s) => {
            s.parse::<f64>().map_or(ParamValue::Str(s), ParamValue::Float)
        }
        (_, v) => v,
    };
    // A whole number written as a float keeps its point (`k=5.0`, not `k=5`, which would read
    // as an integer the refusal then rejects); any other value as it displays.
    let shown = match &value {
        ParamValue::Float(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 => format!("{x}.0"),
        v => v.to_string(),
    };
    let bad = |reason: &str| Error::BadParam {
        id: def.id.into(),
        param: p.name.into(),
        value: shown.clone(),
        reason: reason.into(),
    };
    // An integer past i64 (kept as written) is an integer all the same: say what is wrong.
    if matches!(p.kind, ParamKind::Int | ParamKind::Count | ParamKind::Seed(_))
        && matches!(&value, ParamValue::Str(s) if crate::spec::is_integer_literal(s))
    {
        return Err(bad("is an integer past the 64-bit range (−2^63 to 2^63 − 1)"));
    }
    match (p.kind, &value) {
        (ParamKind::Int, ParamValue::Int(_)) => Ok(value.clone()),
        (ParamKind::Int, _) => Err(bad("must be an integer")),
        (ParamKind::Count, ParamValue::Int(i)) if *i >= 0 => Ok(value.clone()),
        (ParamKind::Count, _) => Err(bad("must be an integer, zero or greater")),
        (ParamKind::Seed(bits), ParamValue::Int(i)) if *i >= 0 && (bits >= 63 || *i < 1i64 << bits) => {
            Ok(value.clone())
        }
        (ParamKind::Seed(32), _) => {
            Err(bad("must be an integer with 0 <= seed < 2^32 (4294967296), as NumPy's RandomState accepts"))
        }
        (ParamKind::Seed(bits), _) => Err(bad(&format!("must be an integer with 0 <= seed < 2^{bits}"))),
        (ParamKind::Float, ParamValue::Int(i)) => Ok(ParamValue::Float(*i as f64)),
        (ParamKind::Float, ParamValue::Float(f)) if f.is_finite() => Ok(value.clone()),
        (ParamKind::Float, _) => Err(bad("must be a finite number")),
        (ParamKind::PositiveFloat, ParamValue::Int(i)) if *i > 0 => Ok(ParamValue::Float(*i as f64)),
        (ParamKind::PositiveFloat, ParamValue::Float(f)) if f.is_finite() && *f > 0.0 => Ok(value.clone()),
        (ParamKind::PositiveFloat, _) => Err(bad("must be finite and greater than zero")),
        (ParamKind::UnitFloat, ParamValue::Int(i)) if (0..=1).contains(i) => Ok(ParamValue::Float(*i as f64)),
        (ParamKind::UnitFloat, ParamValue::Float(f)) if (0.0..=1.0).contains(f) => Ok(value.clone()),
        (ParamKind::UnitFloat, _) => Err(bad("must be a number with 0 <= value <= 1")),
        (ParamKind::Choice(options), v) => {
            let s = v.to_string();
            if options.contains(&s.as_str()) {
                Ok(ParamValue::Str(s))
            } else {
                Err(bad(&format!("must be one of {}", options.join(", "))))
            }
        }
        (ParamKind::Clustering(options), v) => {
            let s = v.to_string();
            match (options.contains(&s.as_str()), custom_kmeans(&s)) {
                (true, _) | (false, Some(Ok(_))) => Ok(ParamValue::Str(s)),
                (false, Some(Err(reason))) => Err(bad(reason)),
                (false, None) => Err(bad(&format!("must be one of {}, or '<k>-means' (k >= 1)", options.join(", ")))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_given_as_text_are_refused_as_that() {
        let refusal = |id: &str, param: &str, text: &str| {
            let spec = Spec::new(id).with(param, ParamValue::Str(text.into()));
            Resolved::new(&spec).err().map(|e| e.to_string())
        };
        for (id, param, text) in
            [("tnc", "k", "5"), ("mrre", "k", "-3"), ("l_tnc", "random_seed", "7"), ("kl_div", "sigma", "0.5")]
        {
            let e = refusal(id, param, text).expect("refused");
            assert!(e.contains(&format!("={text:?}: a number written as text")), "{e}");
        }
        // An integer past i64 (the spec text's only numeric text) keeps its own reasons.
        let e = refusal("tnc", "k", "99999999999999999999").expect("refused");
        assert!(e.contains("past the 64-bit range"), "{e}");
        // A choice is text: unaffected.
        for text in ["silhouette", "5"] {
            let e = refusal("c_evm", "measure", text);
            assert!(!e.as_deref().unwrap_or("").contains("as text"), "{e:?}");
        }
    }

    fn keys(spec: &str) -> Vec<String> {
        Resolved::new(&spec.parse::<Spec>().expect("a spec")).expect("resolves").keys()
    }

    #[test]
    fn keyed_measures_name_their_output_after_their_parameters() {
        assert_eq!(keys("tnc"), ["trustworthiness", "continuity"]);
        assert_eq!(keys("ivm"), ["silhouette"]);
        assert_eq!(keys("ivm:measure=davies_bouldin"), ["davies_bouldin"]);
        assert_eq!(keys("c_evm"), ["kmeans_arand"]);
        assert_eq!(keys("c_evm:measure=vmeasure"), ["kmeans_vmeasure"]);
    }

    /// `keys` of a keyed measure is the key of its defaults (what `--list` shows), and every
    /// parameter it is keyed by is a choice.
    #[test]
    fn keyed_by_names_choice_parameters_and_keys_are_the_defaults() {
        for def in REGISTRY.iter().filter(|d| !d.keyed_by.is_empty()) {
            for name in def.keyed_by {
                let p = def.params.iter().find(|p| p.name == *name).expect("a declared parameter");
                assert!(matches!(p.kind, ParamKind::Choice(_)), "{}: {name} is a choice", def.id);
            }
            assert_eq!(keys(def.id), def.keys, "{}", def.id);
        }
    }

    /// Every measure declares what it reads of the original space: a parameter it depends on
    /// is a declared choice with that value; a measure that reads pairs or coordinates itself
    /// is never served by a kNN graph; and the measures a graph serves are exactly those that
    /// docs/measures.md (its kNN graph row) and the README (its `--high-knn` item) name.
    #[test]
    fn every_measure_declares_what_it_reads_of_the_original_space_and_the_docs_name_the_graph_set() {
        use std::collections::BTreeSet;
        for def in REGISTRY {
            match def.high {
                HighReads::Declared | HighReads::Pairs | HighReads::Coordinates => {}
                HighReads::CoordinatesUnless { param, value } => {
                    let p = def.params.iter().find(|p| p.name == param).expect("a declared parameter");
                    let (ParamKind::Choice(options) | ParamKind::Clustering(options)) = p.kind else {
                        panic!("{}: {param} is a choice", def.id);
                    };
                    assert!(options.contains(&value), "{}: {value} is one of {param}'s choices", def.id);
                }
            }
            if let Ok(r) = Resolved::new(&Spec::new(def.id)) {
                let reads_itself = matches!(r.high_reads(), HighReads::Pairs | HighReads::Coordinates);
                assert!(!(reads_itself && r.graph_servable()), "{}", def.id);
            }
        }
        let served: BTreeSet<&str> = graph_measures().map(|d| d.id).collect();
        for id in ["continuity", "lcmc", "coranking", "snc", "nh"] {
            assert!(served.contains(id), "{id}");
        }
        for id in ["tnc", "stress", "proc", "gce", "triplet_accuracy", "topology", "cca_stress"] {
            assert!(!served.contains(id), "{id}");
        }
        let ids: BTreeSet<&str> = REGISTRY.iter().map(|d| d.id).collect();
        let named = |words: &mut dyn Iterator<Item = &'static str>| -> BTreeSet<&'static str> {
            words.filter(|w| ids.contains(w)).collect()
        };
        let docs = include_str!("../../docs/measures.md");
        let row = docs.lines().find(|l| l.starts_with("| a kNN graph")).expect("the kNN graph row");
        let cell = row.split('|').nth(2).expect("its measures served");
        assert_eq!(named(&mut cell.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))), served);
        let readme = include_str!("../../README.md");
        let item = readme.split("\n- ").find(|b| b.starts_with("`--high-knn G.npz`")).expect("the --high-knn item");
        assert_eq!(named(&mut item.split('`').skip(1).step_by(2)), served);
    }
}
