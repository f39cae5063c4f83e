//! [`Partial`]: one block's share of a run as it travels between processes (versioned JSON,
//! f64s as their bits).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::resources::CoRankCounts;
#[cfg(doc)]
use crate::resources::PassStats;

/// The [`Partial`] format's version; `fold` refuses any other.
pub const PARTIAL_VERSION: u32 = 1;
/// The [`Partial`] format's name, the first field of its JSON.
pub const PARTIAL_FORMAT: &str = "faithful-partial";

/// One row block's share of a run: its local values with their pairwise sums, the work done,
/// and a fingerprint of the inputs and specs. Serialised as JSON ([`Partial::to_json`]); f64s
/// travel as their IEEE bits so that no decimal round trip can change one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    /// [`PARTIAL_FORMAT`].
    pub format: String,
    /// [`PARTIAL_VERSION`].
    pub version: u32,
    /// FNV-1a 64 of the version, n, dimensions, coordinates, labels, projection name and
    /// resolved specs: partials of different runs never fold together.
    pub fingerprint: String,
    /// Points.
    pub n: usize,
    /// Dimensions of the original space.
    pub dim_high: usize,
    /// Dimensions of the projection.
    pub dim_low: usize,
    /// The projection's name.
    pub projection: String,
    /// The resolved specs, defaults filled in (`tnc:k=5`).
    pub specs: Vec<String>,
    /// The block: rows `rows[0]..rows[1]`.
    pub rows: [usize; 2],
    /// One per spec, in order.
    pub scores: Vec<PartialScore>,
    /// The row pass's work on this block (what was counted depends on the backend).
    pub work: PartialWork,
    /// `cpu` or `gpu`: which backend built this block's neighbours and ranks (not in the
    /// fingerprint: blocks served anywhere fold together, to the same bits).
    #[serde(default = "cpu")]
    pub backend: String,
    /// The GPU adapter that served, when the GPU did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// Why the backend differs from the one asked for, when it does (`auto`'s choice too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
}

/// The backend of a partial written before partials named theirs: only the CPU mapped then.
fn cpu() -> String {
    "cpu".into()
}

/// One spec's share of a block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialScore {
    /// The measure's id.
    pub id: String,
    /// One per local key, in the measure's order.
    pub locals: Vec<PartialLocal>,
    /// The co-ranking tallies of the block's rows (`coranking` only; their `rows` are the
    /// block's local values).
    pub counts: Option<CoRankCounts>,
}

/// One local key's values on a block, and their pairwise sum (the tree node's sum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialLocal {
    /// The local key.
    pub key: String,
    /// `f64::to_bits` of each row's value.
    pub bits: Vec<u64>,
    /// `f64::to_bits` of their pairwise sum.
    pub sum_bits: u64,
}

/// The row pass's tallies ([`PassStats`]) of a block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialWork {
    /// Distance rows computed.
    pub distance_rows: u64,
    /// Cross ranks read off the other space's kNN list.
    pub ranks_from_knn: u64,
    /// Cross ranks counted over a whole row.
    pub ranks_counted: u64,
    /// Row scans done to count ranks.
    pub rank_scans: u64,
    /// Original-space ranks looked up in the resident rank table (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ranks_from_table: u64,
    /// Projection rows whose kNN came from the spatial index (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub low_rows_indexed: u64,
    /// Projection ranks counted in the spatial index (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub low_ranks_indexed: u64,
    /// Projection rows whose count in the index fell back to the full row (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub low_index_fallbacks: u64,
    /// Rows whose lists came from the fused co-ranking pass (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_fused: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Partial {
    /// The JSON text (deterministic: the same block of the same run gives the same bytes).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a partial always serialises")
    }
    /// Reads a partial; `what` names it in errors (its file).
    pub fn from_json(text: &str, what: &str) -> Result<Partial> {
        let bad = |reason: String| Error::BadPartial { what: what.into(), reason };
        let p: Partial =
            serde_json::from_str(text).map_err(|e| bad(format!("not a faithful partial ({})", short(&e))))?;
        if p.format != PARTIAL_FORMAT {
            return Err(bad(format!("format is {:?}, expected {PARTIAL_FORMAT:?}", p.format)));
        }
        if p.version != PARTIAL_VERSION {
            return Err(bad(format!("version {} is not {PARTIAL_VERSION}, the one this faithful reads", p.version)));
        }
        Ok(p)
    }
}

/// A JSON error in at most 160 characters: serde quotes an unknown field or a bad value whole,
/// and a damaged partial's one-line message must stay short.
fn short(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.chars().count() <= 160 {
        return text;
    }
    let head: String = text.chars().take(120).collect();
    format!("{head}... at line {} column {}", e.line(), e.column())
}
