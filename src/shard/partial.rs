//! [`Partial`]: one block's share of a run as it travels between processes (versioned JSON,
//! f64s as their bits), and its binary form for threads of one program (the npm worker pool).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::resources::CoRankCounts;
#[cfg(doc)]
use crate::resources::PassStats;

/// The [`Partial`] format's version; `fold` refuses any other (2: the partial carries its
/// [`Partial::checksum`]).
pub const PARTIAL_VERSION: u32 = 2;
/// The [`Partial`] format's name, the first field of its JSON.
pub const PARTIAL_FORMAT: &str = "faithful-partial";

/// The first bytes of a partial's binary form ([`Partial::to_bytes`]).
pub const PARTIAL_BINARY_MAGIC: &[u8; 8] = b"FPARTBIN";

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
    /// The original space's metric (`euclidean`, `cosine`, `precomputed`, ...; in the
    /// fingerprint too). Partials written before metrics existed are Euclidean.
    #[serde(default = "euclidean")]
    pub metric_high: String,
    /// How the original space was given: `coordinates` or `distance matrix`.
    #[serde(default = "coordinates")]
    pub input_high: String,
    /// The CRC-32 (IEEE, as zip, gzip and PNG use) of the rest of the partial, as 8 hex digits
    /// ([`Partial::content_checksum`]). Every reader checks it: a damaged file (a changed
    /// digit, a flipped bit) is refused, never folded. [`Partial::seal`] sets it.
    pub checksum: String,
}

fn euclidean() -> String {
    "euclidean".into()
}

fn coordinates() -> String {
    "coordinates".into()
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
    /// Rows of either space the co-ranking pass ranked by integer keys (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_integer_keys: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Partial {
    /// The CRC-32 of the partial's content, every field but `checksum`: of its binary form
    /// ([`Partial::to_bytes`]) with `checksum` empty. That form is canonical (the header's
    /// fields in their order, every f64 as its bits), so a partial rewritten by another JSON
    /// tool (other whitespace, another field order) keeps its checksum, and one whose content
    /// changed does not (CRC-32 detects every change of up to 32 consecutive bits, and others
    /// but for 1 in 2^32).
    pub fn content_checksum(&self) -> String {
        let mut h = crc32fast::Hasher::new();
        self.binary("", &mut |b| h.update(b));
        format!("{:08x}", h.finalize())
    }

    /// Sets [`Partial::checksum`] to the content's: a partial built or changed by hand must be
    /// sealed again before a reader accepts it.
    pub fn seal(&mut self) {
        self.checksum = self.content_checksum();
    }

    /// The JSON text (deterministic: the same block of the same run gives the same bytes).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a partial always serialises")
    }
    /// Reads a partial; `what` names it in errors (its file).
    pub fn from_json(text: &str, what: &str) -> Result<Partial> {
        let bad = |reason: String| Error::BadPartial { what: what.into(), reason };
        let p: Partial =
            serde_json::from_str(text).map_err(|e| bad(format!("not a faithful partial ({})", short(&e))))?;
        p.check_header(what)
    }
}

impl Partial {
    /// The binary form the worker pool hands between threads: [`PARTIAL_BINARY_MAGIC`], the
    /// header's byte count (u32), the header (this partial's JSON with every local's `bits`
    /// empty), then each local's values in order, a u64 count and that many u64 bits. All
    /// little-endian. The same content as [`Partial::to_json`], but with no decimal digits
    /// to write and parse: at n = 5 000 the JSON of a call's partials is ~200 KB whose
    /// parsing was most of the pool's fold.
    pub fn to_bytes(&self) -> Vec<u8> {
        let values: usize = self.scores.iter().flat_map(|s| &s.locals).map(|l| 1 + l.bits.len()).sum();
        let mut out = Vec::with_capacity(PARTIAL_BINARY_MAGIC.len() + 4 + 1024 + 8 * values);
        self.binary(&self.checksum, &mut |b| out.extend_from_slice(b));
        out
    }

    /// [`Partial::to_bytes`]'s bytes, its header's checksum `checksum`, in pieces to `sink`.
    fn binary(&self, checksum: &str, sink: &mut dyn FnMut(&[u8])) {
        let Partial {
            format,
            version,
            fingerprint,
            n,
            dim_high,
            dim_low,
            projection,
            specs,
            rows,
            scores,
            work,
            backend,
            adapter,
            fallback_reason,
            metric_high,
            input_high,
            checksum: _,
        } = self;
        let head = Partial {
            format: format.clone(),
            version: *version,
            fingerprint: fingerprint.clone(),
            n: *n,
            dim_high: *dim_high,
            dim_low: *dim_low,
            projection: projection.clone(),
            specs: specs.clone(),
            rows: *rows,
            scores: scores
                .iter()
                .map(|s| PartialScore {
                    id: s.id.clone(),
                    locals: s
                        .locals
                        .iter()
                        .map(|l| PartialLocal { key: l.key.clone(), bits: Vec::new(), sum_bits: l.sum_bits })
                        .collect(),
                    counts: s.counts.clone(),
                })
                .collect(),
            work: work.clone(),
            backend: backend.clone(),
            adapter: adapter.clone(),
            fallback_reason: fallback_reason.clone(),
            metric_high: metric_high.clone(),
            input_high: input_high.clone(),
            checksum: checksum.into(),
        }
        .to_json();
        sink(PARTIAL_BINARY_MAGIC);
        sink(&u32::try_from(head.len()).expect("a partial's header is far below 4 GiB").to_le_bytes());
        sink(head.as_bytes());
        let mut buf = Vec::new();
        for l in scores.iter().flat_map(|s| &s.locals) {
            buf.clear();
            buf.extend_from_slice(&(l.bits.len() as u64).to_le_bytes());
            buf.extend(l.bits.iter().flat_map(|b| b.to_le_bytes()));
            sink(&buf);
        }
    }

    /// Reads [`Partial::to_bytes`]'s form; `what` names it in errors. Every count is checked
    /// against the bytes that follow it before anything is allocated, so memory stays within
    /// the input's size, and the input must end exactly after the last value.
    pub fn from_bytes(bytes: &[u8], what: &str) -> Result<Partial> {
        let bad = |reason: String| Error::BadPartial { what: what.into(), reason };
        let rest = bytes.strip_prefix(&PARTIAL_BINARY_MAGIC[..]).ok_or_else(|| {
            bad("not a faithful partial in binary form (it does not begin with its magic bytes)".into())
        })?;
        let (len, rest) = split_u64ish(rest, 4).ok_or_else(|| bad("it ends inside its header's length".into()))?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > rest.len() {
            return Err(bad(format!("its header claims {len} bytes but {} follow", rest.len())));
        }
        let (head, mut rest) = rest.split_at(len);
        let mut p: Partial =
            serde_json::from_slice(head).map_err(|e| bad(format!("its header is not a partial's ({})", short(&e))))?;
        for s in &mut p.scores {
            for l in &mut s.locals {
                if !l.bits.is_empty() {
                    return Err(bad(format!("its header holds the values of {:?} (they follow the header)", l.key)));
                }
                let (count, after) = split_u64ish(rest, 8)
                    .ok_or_else(|| bad(format!("it ends before the count of {:?}'s values", l.key)))?;
                if count > (after.len() / 8) as u64 {
                    return Err(bad(format!(
                        "{:?} claims {count} values but only {} bytes follow",
                        l.key,
                        after.len()
                    )));
                }
                let (values, after) = after.split_at(8 * count as usize);
                l.bits = values
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8 bytes")))
                    .collect();
                rest = after;
            }
        }
        if !rest.is_empty() {
            return Err(bad(format!("{} bytes follow its last value", rest.len())));
        }
        p.check_header(what)
    }
}

/// The little-endian unsigned integer of the first `width` (4 or 8) bytes, and the rest.
fn split_u64ish(bytes: &[u8], width: usize) -> Option<(u64, &[u8])> {
    if bytes.len() < width {
        return None;
    }
    let (head, rest) = bytes.split_at(width);
    let mut b = [0u8; 8];
    b[..width].copy_from_slice(head);
    Some((u64::from_le_bytes(b), rest))
}

/// The fields of a partial: its JSON begins with one of them (checked before the rest is read).
const FIELDS: [&str; 17] = [
    "format",
    "version",
    "fingerprint",
    "n",
    "dim_high",
    "dim_low",
    "projection",
    "specs",
    "rows",
    "scores",
    "work",
    "backend",
    "adapter",
    "fallback_reason",
    "metric_high",
    "input_high",
    "checksum",
];

/// The longest string (in bytes, as written) a partial's JSON may hold: its strings are names,
/// specs and reasons, and a longer one is refused before a parser holds it.
pub const PARTIAL_MAX_STRING_BYTES: usize = 1 << 16;

/// A reader that fails (an I/O error a parser reports) as soon as a JSON string in what it
/// passes is longer than [`PARTIAL_MAX_STRING_BYTES`]: JSON's `"` outside a string always opens
/// one and `\` escapes the next byte inside, so the scan needs no parser. Under a buffer, the
/// parser above it never holds more of a string than the limit and one buffer.
struct StringGuard<R> {
    inner: R,
    in_string: bool,
    escaped: bool,
    len: usize,
}

impl<R: std::io::Read> std::io::Read for StringGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let got = self.inner.read(buf)?;
        for &b in &buf[..got] {
            if !self.in_string {
                if b == b'"' {
                    (self.in_string, self.len) = (true, 0);
                }
                continue;
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                continue;
            }
            self.len += 1;
            if self.len > PARTIAL_MAX_STRING_BYTES {
                return Err(std::io::Error::other(format!(
                    "a string longer than {PARTIAL_MAX_STRING_BYTES} bytes, which no partial holds"
                )));
            }
        }
        Ok(got)
    }
}

/// `reader` buffered, its strings bounded ([`StringGuard`]).
fn guarded<R: std::io::Read>(reader: R) -> std::io::BufReader<StringGuard<R>> {
    std::io::BufReader::new(StringGuard { inner: reader, in_string: false, escaped: false, len: 0 })
}

/// A file's first bytes for [`begins_as_a_partial`], JSON whitespace before the `{` and
/// before the first field's `"` skipped (a stream of whitespace is read, never held).
fn head_bytes(reader: impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(256);
    for b in std::io::Read::bytes(std::io::BufReader::new(reader)) {
        let b = b?;
        if head.len() < 2 && matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        head.push(b);
        if head.len() == 256 || head.len() == 1 && b != b'{' {
            break;
        }
    }
    Ok(head)
}

impl Partial {
    /// Reads a partial from a file in bounded memory: its first bytes are checked before
    /// anything else is read; one streaming pass counts its values without keeping them, and a
    /// partial with more than `budget` values is refused ([`Error::BadPartial`]) as soon as the
    /// count passes it; only then does a second pass build it. So neither a file of a few
    /// repeated digits (`0,0,0,…`: 4 bytes of values per byte of file) nor one that is not a
    /// partial at all is held in memory. `reopen` gives the reader again for each pass;
    /// `budget` is the count of values the partials may still hold, and this one's are taken
    /// from it (a fold holds every partial at once).
    pub fn from_reader<R: std::io::Read>(
        mut reopen: impl FnMut() -> std::io::Result<R>,
        what: &str,
        budget: &mut u64,
    ) -> Result<Partial> {
        let bad = |reason: String| Error::BadPartial { what: what.into(), reason };
        let io = |e: std::io::Error| bad(format!("cannot read it ({e})"));
        let head = head_bytes(reopen().map_err(io)?).map_err(io)?;
        if !begins_as_a_partial(&head) {
            return Err(bad(
                "not a faithful partial (it does not begin as one: a JSON object of a partial's fields)".into()
            ));
        }
        let values = count_values(guarded(reopen().map_err(io)?), *budget)
            .map_err(|e| bad(format!("not a faithful partial ({})", short(&e))))?
            .ok_or_else(|| {
                bad(format!(
                    "holds more numbers than the {budget} the memory budget still allows for the partials (raise --memory-budget)"
                ))
            })?;
        *budget -= values;
        let mut de = serde_json::Deserializer::from_reader(guarded(reopen().map_err(io)?));
        let p: Partial = serde::Deserialize::deserialize(&mut de)
            .and_then(|p| de.end().map(|()| p))
            .map_err(|e| bad(format!("not a faithful partial ({})", short(&e))))?;
        p.check_header(what)
    }

    /// The format, version and checksum checks of a parsed partial.
    fn check_header(self, what: &str) -> Result<Partial> {
        let bad = |reason: String| Error::BadPartial { what: what.into(), reason };
        if self.format != PARTIAL_FORMAT {
            return Err(bad(format!("format is {:?}, expected {PARTIAL_FORMAT:?}", self.format)));
        }
        if self.version != PARTIAL_VERSION {
            return Err(bad(format!("version {} is not {PARTIAL_VERSION}, the one this faithful reads", self.version)));
        }
        let content = self.content_checksum();
        if self.checksum != content {
            return Err(bad(format!(
                "its checksum {} is not its content's {content}: a damaged partial (shard its block again)",
                crate::quote::quoted(&self.checksum)
            )));
        }
        Ok(self)
    }
}

/// Whether `head` (a file's first bytes) begins as a partial does: `{`, then the name of one
/// of its fields in quotes (any field order, any whitespace: a partial rewritten by another
/// JSON tool still reads), so that a file of anything else is refused before it is read.
fn begins_as_a_partial(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let Some(rest) = text.trim_start().strip_prefix('{') else { return false };
    let Some(rest) = rest.trim_start().strip_prefix('"') else { return false };
    FIELDS.iter().any(|f| rest.strip_prefix(f).is_some_and(|r| r.starts_with('"')))
}

/// The values in a JSON document (numbers, strings, booleans, nulls), counted in one streaming
/// pass that keeps none of them (the document's syntax is checked on the way); `Ok(None)` as
/// soon as there are more than `limit`, without reading the rest.
fn count_values(reader: impl std::io::Read, limit: u64) -> std::result::Result<Option<u64>, serde_json::Error> {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    /// The running count, its limit, and whether the limit stopped the pass.
    struct Tally {
        n: u64,
        limit: u64,
        over: bool,
    }
    struct Count<'a>(&'a mut Tally);
    impl Count<'_> {
        fn one<E: serde::de::Error>(self) -> std::result::Result<(), E> {
            self.0.n += 1;
            if self.0.n > self.0.limit {
                self.0.over = true;
                return Err(E::custom("over the limit"));
            }
            Ok(())
        }
    }
    impl<'de> DeserializeSeed<'de> for Count<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Count<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> std::result::Result<(), E> {
            self.one()
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> std::result::Result<(), E> {
            self.one()
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> std::result::Result<(), E> {
            self.one()
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<(), E> {
            // A string holds its bytes: counted as the 8-byte values they would fill.
            self.0.n += (v.len() / 8) as u64;
            self.one()
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> std::result::Result<(), E> {
            self.one()
        }
        fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<(), E> {
            self.one()
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
            while seq.next_element_seed(Count(&mut *self.0))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            while map.next_key::<IgnoredAny>()?.is_some() {
                map.next_value_seed(Count(&mut *self.0))?;
            }
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut tally = Tally { n: 0, limit, over: false };
    let counted = Count(&mut tally).deserialize(&mut de).and_then(|()| de.end());
    match counted {
        Err(_) if tally.over => Ok(None),
        Err(e) => Err(e),
        Ok(()) => Ok(Some(tally.n)),
    }
}

/// A JSON error in at most 160 characters: serde quotes an unknown field or a bad value whole,
/// and a damaged partial's one-line message must stay short.
fn short(e: &serde_json::Error) -> String {
    // serde quotes what it read (an unknown field's name): a control character there would
    // break the one-line message, so each is written escaped.
    let text: String = e
        .to_string()
        .chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect();
    if text.chars().count() <= 160 {
        return text;
    }
    let head: String = text.chars().take(120).collect();
    format!("{head}... at line {} column {}", e.line(), e.column())
}
