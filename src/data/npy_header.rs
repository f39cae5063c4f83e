//! The `.npy` header: magic, version 1–3, and the dict `{'descr': .., 'fortran_order': ..,
//! 'shape': (..)}`, parsed in one linear pass. NumPy's header never nests, so nothing here
//! recurses; the header length is capped before it is read.

use crate::error::FileProblem;
use crate::quote::quoted;

/// Longest header read (NumPy itself refuses more than 10 000 bytes by default).
pub const MAX_HEADER: usize = 64 * 1024;

/// The element type: byte order, kind (`f`, `i`, `u`, ...) and width in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    pub little: bool,
    pub kind: u8,
    pub size: usize,
}

/// A parsed header; `descr` is kept as written for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub descr: String,
    pub fortran: bool,
    pub shape: Vec<u64>,
}

impl Header {
    /// The element type, if `descr` is a plain scalar type (`<f8`, `|u1`, `=i4`, ...).
    pub fn dtype(&self) -> Option<Dtype> {
        let d = self.descr.as_bytes();
        let (order, rest) = match d.first()? {
            b'<' | b'>' | b'|' | b'=' => (d[0], &d[1..]),
            _ => (b'=', d),
        };
        let (&kind, digits) = rest.split_first()?;
        if digits.is_empty() || digits.len() > 2 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let size: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
        let little = match order {
            b'<' => true,
            b'>' => false,
            // `|` is "not applicable" (one byte); `=` is this machine's order.
            _ if size == 1 => true,
            b'=' => cfg!(target_endian = "little"),
            _ => return None,
        };
        Some(Dtype { little, kind, size })
    }
}

/// Length of the fixed prefix (magic, version, header length) for `version`.
fn prefix_len(major: u8) -> Result<usize, FileProblem> {
    match major {
        1 => Ok(10),
        2 | 3 => Ok(12),
        v => Err(bad(format!("unsupported format version {v} (NumPy writes 1, 2 or 3)"))),
    }
}

/// Reads the prefix and header from `src`; returns the header and the bytes consumed.
pub fn read(src: &mut impl std::io::Read) -> Result<(Header, u64), FileProblem> {
    let mut prefix = [0u8; 12];
    read_exact(src, &mut prefix[..8])?;
    if &prefix[..6] != b"\x93NUMPY" {
        return Err(bad("the NumPy magic bytes are missing".into()));
    }
    let start = prefix_len(prefix[6])?;
    read_exact(src, &mut prefix[8..start])?;
    let len = if start == 10 {
        u16::from_le_bytes([prefix[8], prefix[9]]) as usize
    } else {
        u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]) as usize
    };
    if len > MAX_HEADER {
        return Err(bad(format!("header of {len} bytes is longer than the {MAX_HEADER}-byte limit")));
    }
    let mut text = vec![0u8; len];
    read_exact(src, &mut text)?;
    Ok((parse(&text)?, (start + len) as u64))
}

fn read_exact(src: &mut impl std::io::Read, buf: &mut [u8]) -> Result<(), FileProblem> {
    src.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => bad("truncated header".into()),
        _ => FileProblem::Io(e),
    })
}

fn bad(reason: String) -> FileProblem {
    FileProblem::Npy(reason)
}

/// Parses the header dict (ASCII; NumPy pads it with spaces and ends it with a newline).
pub fn parse(text: &[u8]) -> Result<Header, FileProblem> {
    let mut p = Cursor { s: text, at: 0 };
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.skip_ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.skip_ws();
        p.expect(b':')?;
        p.skip_ws();
        let dup = match key.as_str() {
            "descr" => descr.replace(p.descr()?).is_some(),
            "fortran_order" => fortran.replace(p.boolean()?).is_some(),
            "shape" => shape.replace(p.shape()?).is_some(),
            _ => return Err(bad(format!("unexpected header key {}", quoted(&key)))),
        };
        if dup {
            return Err(bad(format!("header key '{key}' appears twice")));
        }
        p.skip_ws();
        if !p.eat(b',') {
            p.skip_ws();
            p.expect(b'}')?;
            break;
        }
    }
    p.skip_ws();
    if p.at != text.len() {
        return Err(bad("unexpected bytes after the header dict".into()));
    }
    match (descr, fortran, shape) {
        (Some(descr), Some(fortran), Some(shape)) => Ok(Header { descr, fortran, shape }),
        _ => Err(bad("the header lacks 'descr', 'fortran_order' or 'shape'".into())),
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.at += hit as usize;
        hit
    }
    fn expect(&mut self, c: u8) -> Result<(), FileProblem> {
        if self.eat(c) {
            return Ok(());
        }
        let found = match self.peek() {
            Some(b) => quoted(&char::from(b).to_string()),
            None => "the end".into(),
        };
        Err(bad(format!("malformed header: expected '{}' at byte {}, found {found}", c as char, self.at)))
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }
    /// A quoted key or descr: `'...'` or `"..."`, printable ASCII, no escapes.
    fn string(&mut self) -> Result<String, FileProblem> {
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(self.malformed("a quoted string")),
        };
        self.at += 1;
        let start = self.at;
        while let Some(b) = self.peek() {
            if b == q {
                let s = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
                self.at += 1;
                return Ok(s);
            }
            if !(b' '..=b'~').contains(&b) || b == b'\\' {
                return Err(self.malformed("a plain string"));
            }
            self.at += 1;
        }
        Err(self.malformed("a closing quote"))
    }
    fn descr(&mut self) -> Result<String, FileProblem> {
        match self.peek() {
            Some(b'\'' | b'"') => self.string(),
            _ => Err(FileProblem::NpyType("(a structured or nested dtype)".into())),
        }
    }
    fn boolean(&mut self) -> Result<bool, FileProblem> {
        for (word, v) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.s[self.at..].starts_with(word) {
                self.at += word.len();
                return Ok(v);
            }
        }
        Err(self.malformed("True or False for 'fortran_order'"))
    }
    /// `(d0, d1, ...)` with an optional trailing comma; `()` is a scalar.
    fn shape(&mut self) -> Result<Vec<u64>, FileProblem> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            self.skip_ws();
            if self.eat(b')') {
                return Ok(dims);
            }
            let start = self.at;
            let mut v: u64 = 0;
            while let Some(b @ b'0'..=b'9') = self.peek() {
                v = v
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(b - b'0')))
                    .ok_or_else(|| bad("a shape dimension overflows 64 bits".into()))?;
                self.at += 1;
            }
            if self.at == start {
                return Err(self.malformed("a non-negative integer in 'shape'"));
            }
            // Python 2's long suffix, as in files written by old NumPy.
            self.eat(b'L');
            dims.push(v);
            if dims.len() > 32 {
                return Err(bad("'shape' has more than 32 dimensions".into()));
            }
            self.skip_ws();
            if !self.eat(b',') {
                self.skip_ws();
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
    fn malformed(&self, wanted: &str) -> FileProblem {
        bad(format!("malformed header: expected {wanted} at byte {}", self.at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(dict: &str) -> Result<Header, FileProblem> {
        parse(dict.as_bytes())
    }

    #[test]
    fn numpy_headers_parse() {
        let h = header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n").unwrap();
        assert_eq!(h, Header { descr: "<f8".into(), fortran: false, shape: vec![3, 4] });
        let h = header("{\"shape\":(7,),\"descr\":\">i2\",\"fortran_order\":True}").unwrap();
        assert_eq!((h.shape, h.fortran, h.descr.as_str()), (vec![7], true, ">i2"));
        assert_eq!(header("{'descr': '|u1', 'fortran_order': False, 'shape': (), }").unwrap().shape, Vec::<u64>::new());
        assert_eq!(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }").unwrap().shape, vec![2, 3]);
    }

    #[test]
    fn dtypes() {
        let d = |s: &str| Header { descr: s.into(), fortran: false, shape: vec![] }.dtype();
        assert_eq!(d("<f8"), Some(Dtype { little: true, kind: b'f', size: 8 }));
        assert_eq!(d(">f4"), Some(Dtype { little: false, kind: b'f', size: 4 }));
        assert_eq!(d("|i1"), Some(Dtype { little: true, kind: b'i', size: 1 }));
        assert_eq!(d("<c16").map(|t| t.size), Some(16));
        assert_eq!(d("|f8"), None);
        assert_eq!(d("<U"), None);
        assert_eq!(d(""), None);
        assert_eq!(d("<f123"), None);
    }

    #[test]
    fn malformed_headers_are_errors() {
        for bad in [
            "",
            "{",
            "{'descr': '<f8', 'fortran_order': False}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'x': 1}",
            "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
            "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,)}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3 4)}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} trailing",
            "{'descr': '<f\\8', 'fortran_order': False, 'shape': (3,)}",
        ] {
            assert!(header(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn nested_brackets_fail_fast_without_recursion() {
        let deep = format!(
            "{{'descr': {}'<f8'{}, 'fortran_order': False, 'shape': (3,)}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(matches!(header(&deep), Err(FileProblem::NpyType(_))));
        let deep = format!(
            "{{'descr': '<f8', 'fortran_order': False, 'shape': {}3{}}}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        assert!(header(&deep).is_err());
    }

    #[test]
    fn header_length_is_capped_before_reading() {
        let mut file = b"\x93NUMPY\x02\x00".to_vec();
        file.extend(u32::MAX.to_le_bytes());
        let err = read(&mut &file[..]).unwrap_err().to_string();
        assert!(err.contains("limit"), "{err}");
        assert!(read(&mut &b"\x93NUMPY\x07\x00\x10\x00"[..]).unwrap_err().to_string().contains("version 7"));
        assert!(read(&mut &b"\x93NUM"[..]).unwrap_err().to_string().contains("truncated"));
    }
}
