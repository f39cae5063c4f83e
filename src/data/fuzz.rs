//! Fuzzing the `.npy`, `.npz` and CSV readers with proptest (a few seconds in every `cargo test`):
//! arbitrary bytes, valid files mutated byte by byte, and valid files read back. Any input
//! gives a result or an error with a one-line message, never a panic, and promptly.

use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::{csv, npy};
use crate::error::FileProblem;

/// What one call may take: microseconds are expected; a super-linear path would show here.
const PROMPT: Duration = Duration::from_secs(1);

/// Every reader on `bytes`; each result is consistent, each error one short line.
fn read_all(bytes: &[u8]) {
    let len = bytes.len() as u64;
    let checked = |what: &str, start: Instant, err: Option<FileProblem>| {
        assert!(start.elapsed() < PROMPT, "{what} took {:?}", start.elapsed());
        if let Some(e) = err {
            let msg = e.to_string();
            assert!(!msg.chars().any(char::is_control), "{what}: control character in {msg:?}");
            assert!(msg.chars().count() < 400, "{what}: {} chars", msg.len());
        }
    };
    let t = Instant::now();
    let r = npy::points(&mut &bytes[..], len);
    if let Ok((n, d, v)) = &r {
        assert_eq!(v.len(), n * d);
    }
    checked("npy points", t, r.err());
    let t = Instant::now();
    checked("npy labels", t, npy::labels(&mut &bytes[..], len).err());
    // The distance-matrix header, the kNN graph's arrays and the .npz format scalar.
    let t = Instant::now();
    let r = npy::square(&mut &bytes[..], len);
    if let Ok((n, ty, _, start)) = &r {
        assert_eq!(start + (n * n * ty.size) as u64, len, "a square matrix's data fills the file");
    }
    checked("npy square", t, r.err());
    let t = Instant::now();
    let r = npy::array(&mut &bytes[..], len, true, npy::int);
    if let Ok((shape, v)) = &r {
        assert_eq!(v.len(), shape.iter().product::<usize>());
    }
    checked("npy int array", t, r.err());
    let t = Instant::now();
    checked("npy float array", t, npy::array(&mut &bytes[..], len, false, npy::float_of).err());
    #[cfg(feature = "npz")]
    {
        let t = Instant::now();
        checked("npy text scalar", t, npy::text_scalar(&mut &bytes[..], len).err());
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let t = Instant::now();
        let r = csv::points(text);
        if let Ok((n, d, v)) = &r {
            assert_eq!(v.len(), n * d);
        }
        checked("csv points", t, r.err());
        let t = Instant::now();
        checked("csv labels", t, csv::labels(text).err());
    }
}

/// A valid `.npy` of `count` elements of `descr` with the given shape and order.
pub(super) fn npy_file(descr: &str, shape: &[u64], fortran: bool, data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let order = if fortran { "True" } else { "False" };
    let header = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}\n");
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

const DESCRS: [&str; 12] = ["<f8", ">f8", "<f4", ">f4", "<i8", ">i4", "<i2", "|i1", "<u8", ">u2", "|u1", "<c16"];

/// Edits applied to a valid file: overwrite, insert, delete, truncate.
#[derive(Debug, Clone)]
pub(super) enum Edit {
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

pub(super) fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to the header and CSV grammars, plus any byte.
    let byte = prop_oneof![
        prop::sample::select(b"[](){}'\":,; \t\n\r0123456789-+.eE#TrueFals<>|=\\\x00\xff".to_vec()),
        any::<u8>(),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(at, b)| Edit::Set(at, b)),
        (any::<usize>(), prop::collection::vec(byte, 1..8)).prop_map(|(at, b)| Edit::Insert(at, b)),
        (any::<usize>(), 1usize..8).prop_map(|(at, n)| Edit::Delete(at, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

pub(super) fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = bytes.len().max(1);
        match e {
            Edit::Set(at, b) if !bytes.is_empty() => bytes[at % len] = *b,
            Edit::Insert(at, b) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, b.iter().copied());
            }
            Edit::Delete(at, n) if !bytes.is_empty() => {
                let at = at % len;
                bytes.drain(at..(at + n).min(bytes.len()));
            }
            Edit::Truncate(at) => bytes.truncate(at % len),
            _ => {}
        }
    }
    bytes
}

/// A valid point file: descr, shape, order and f64 values (exact in f32 where needed).
fn valid_points() -> impl Strategy<Value = (Vec<u8>, usize, usize, Vec<f64>)> {
    (0usize..4, 0usize..6, 1usize..5, any::<bool>(), any::<u64>()).prop_map(|(ty, n, d, fortran, seed)| {
        let mut rng = crate::splitmix::SplitMix64(seed);
        let values: Vec<f64> = (0..n * d).map(|_| f64::from((rng.uniform() * 2e6 - 1e6) as f32)).collect();
        let descr = DESCRS[ty];
        let at = |k: usize| if fortran { values[(k % n) * d + k / n] } else { values[k] };
        let data: Vec<u8> = (0..n * d)
            .flat_map(|k| match descr {
                "<f8" => at(k).to_le_bytes().to_vec(),
                ">f8" => at(k).to_be_bytes().to_vec(),
                "<f4" => (at(k) as f32).to_le_bytes().to_vec(),
                _ => (at(k) as f32).to_be_bytes().to_vec(),
            })
            .collect();
        (npy_file(descr, &[n as u64, d as u64], fortran, &data), n, d, values)
    })
}

/// CSV text of `rows` joined by `sep`, in Rust's round-trip formatting.
fn csv_text(rows: &[Vec<f64>], sep: &str) -> String {
    rows.iter().map(|r| r.iter().map(f64::to_string).collect::<Vec<_>>().join(sep) + "\n").collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        read_all(&bytes);
        // The same bytes behind a valid magic and version, so that the header parser sees them.
        for prefix in [&b"\x93NUMPY\x01\x00"[..], &b"\x93NUMPY\x03\x00"[..]] {
            read_all(&[prefix, &bytes].concat());
        }
    }

    #[test]
    fn mutated_npy_files(ty in 0usize..DESCRS.len(), shape in prop::collection::vec(0u64..5, 0..4), fortran: bool,
                         edits in prop::collection::vec(edit(), 1..6)) {
        let count: u64 = shape.iter().product();
        let size = DESCRS[ty][2..].parse::<usize>().unwrap();
        let file = npy_file(DESCRS[ty], &shape, fortran, &vec![0x3f; count as usize * size]);
        read_all(&apply(file, &edits));
    }

    #[test]
    fn mutated_csv_files(rows in prop::collection::vec(prop::collection::vec(-1e3f64..1e3, 1..4), 0..6),
                         sep in prop::sample::select(vec![",", ";", "\t", " ", ", "]), edits in prop::collection::vec(edit(), 1..6)) {
        read_all(&apply(csv_text(&rows, sep).into_bytes(), &edits));
    }

    #[test]
    fn valid_npy_points_read_back((file, n, d, values) in valid_points()) {
        prop_assert_eq!(npy::points(&mut &file[..], file.len() as u64).unwrap(), (n, d, values));
    }

    #[test]
    fn valid_csv_reads_back(rows in prop::collection::vec(prop::collection::vec(-1e300f64..1e300, 3), 1..6),
                            sep in prop::sample::select(vec![",", ";", "\t", " ", ", ", " ; ", "   "])) {
        let (n, d, v) = csv::points(&csv_text(&rows, sep)).unwrap();
        prop_assert_eq!((n, d, v), (rows.len(), 3, rows.concat()));
    }

    #[test]
    fn integer_labels_read_back(labels in prop::collection::vec(any::<i64>(), 1..20)) {
        let text: String = labels.iter().map(|l| format!("{l}\n")).collect();
        prop_assert_eq!(csv::labels(&text).unwrap(), labels.clone());
        let data: Vec<u8> = labels.iter().flat_map(|l| l.to_be_bytes()).collect();
        let file = npy_file(">i8", &[labels.len() as u64], false, &data);
        prop_assert_eq!(npy::labels(&mut &file[..], file.len() as u64).unwrap(), labels);
    }
}
