//! The report's data container: `[u32 header length LE][header JSON][padding to 8][arrays]`,
//! each array 8-byte aligned at the offset its header entry names (from the start of the array
//! section), then gzip, then base64 (web/views/report.js reads it back with
//! DecompressionStream).

use std::io::Write as _;

use serde_json::{Map, Value, json};

/// Arrays by name with their bytes; the header refers to them by name.
#[derive(Default)]
pub struct Arrays {
    bytes: Vec<u8>,
    index: Map<String, Value>,
}

/// A little-endian element type of the container.
pub trait Element: Copy {
    const DTYPE: &'static str;
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! element {
    ($t:ty, $name:literal) => {
        impl Element for $t {
            const DTYPE: &'static str = $name;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
element!(f64, "f64");
element!(f32, "f32");
element!(u32, "u32");
element!(i32, "i32");

impl Arrays {
    /// Adds `values` as array `name`; returns the name (for the header).
    pub fn add<T: Element>(&mut self, name: &str, values: impl ExactSizeIterator<Item = T>) -> String {
        while !self.bytes.len().is_multiple_of(8) {
            self.bytes.push(0);
        }
        let offset = self.bytes.len();
        let length = values.len();
        for v in values {
            v.put(&mut self.bytes);
        }
        self.index.insert(name.into(), json!({ "dtype": T::DTYPE, "offset": offset, "length": length }));
        name.to_string()
    }
}

/// The container of `header` (with the array index added as `arrays`) and `arrays`, gzipped:
/// (the compressed bytes, the uncompressed length).
pub fn pack(mut header: Map<String, Value>, arrays: &Arrays) -> (Vec<u8>, usize) {
    header.insert("arrays".into(), Value::Object(arrays.index.clone()));
    let text = serde_json::to_vec(&Value::Object(header)).expect("the header serialises");
    let mut raw = Vec::with_capacity(8 + text.len() + arrays.bytes.len());
    raw.extend_from_slice(&(text.len() as u32).to_le_bytes());
    raw.extend_from_slice(&text);
    while raw.len() % 8 != 0 {
        raw.push(b' ');
    }
    raw.extend_from_slice(&arrays.bytes);
    // mtime 0 and no file name: the same inputs give the same bytes.
    let mut gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::new(6));
    gz.write_all(&raw).expect("writing to memory");
    (gz.finish().expect("writing to memory"), raw.len())
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (s, keep) in [(18, true), (12, true), (6, c.len() > 1), (0, c.len() > 2)] {
            out.push(if keep { T[((v >> s) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn the_container_reads_back_with_aligned_arrays() {
        let mut a = Arrays::default();
        a.add("x", [1.5f64, -2.0].into_iter());
        a.add("i", [7u32, 8, 9].into_iter());
        a.add("y", [0.25f64].into_iter());
        let mut header = Map::new();
        header.insert("title".into(), json!("t"));
        let (gz, raw_len) = pack(header, &a);
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).unwrap();
        assert_eq!(raw.len(), raw_len);
        let hlen = u32::from_le_bytes(raw[..4].try_into().unwrap()) as usize;
        let header: Value = serde_json::from_slice(&raw[4..4 + hlen]).unwrap();
        let start = (4 + hlen).div_ceil(8) * 8;
        let y = &header["arrays"]["y"];
        let off = start + y["offset"].as_u64().unwrap() as usize;
        assert_eq!(off % 8, 0);
        assert_eq!(f64::from_le_bytes(raw[off..off + 8].try_into().unwrap()), 0.25);
        assert_eq!(header["arrays"]["i"]["dtype"], "u32");
        // The same inputs, the same bytes.
        assert_eq!(pack(Map::new(), &a).0, pack(Map::new(), &a).0);
    }
}
