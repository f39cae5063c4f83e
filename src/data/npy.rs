//! `.npy` readers (2-D float64/float32 points, 1-D integer labels) and the writer of
//! `knn --out`. The data's size is checked against the file's before anything is allocated,
//! and values are decoded in one streaming pass into the final vector: peak memory is the
//! result plus one small buffer, whatever the element type.

use std::io::{Read, Write};

pub(super) use super::npy_header::Dtype;
use super::npy_header::{self, Header};
use super::sized::at_end;
use crate::error::FileProblem;
use crate::quote::quoted;

/// Bytes decoded per read.
const CHUNK: usize = 64 * 1024;

/// Reads a 2-D float64 or float32 array (either byte order, C or Fortran order) of `len` bytes
/// in all as (n, dim, row-major f64 values).
pub fn points(src: &mut impl Read, len: u64) -> Result<(usize, usize, Vec<f64>), FileProblem> {
    let (h, start) = npy_header::read(src)?;
    let t = h.dtype().filter(|t| t.kind == b'f' && matches!(t.size, 4 | 8)).ok_or_else(|| unsupported(&h))?;
    let [n, d] = dims::<2>(&h)?;
    let count = data_len(&h, t, start, len)?;
    let mut out = zeroed::<f64>(count)?;
    // Fortran order stores column by column: element k is row k % n of column k / n.
    let fortran = h.fortran;
    decode(src, t, count, |k, raw| {
        let at = if fortran { (k % n) * d + k / n } else { k };
        out[at] = float(t, raw);
        Ok(())
    })?;
    at_end(src, len)?;
    Ok((n, d, out))
}

/// Reads a 1-D integer array (any width, signed or not), or a float array of whole numbers.
pub fn labels(src: &mut impl Read, len: u64) -> Result<Vec<i64>, FileProblem> {
    let (h, start) = npy_header::read(src)?;
    let t = h
        .dtype()
        .filter(|t| match t.kind {
            b'i' | b'u' => matches!(t.size, 1 | 2 | 4 | 8),
            b'f' => matches!(t.size, 4 | 8),
            _ => false,
        })
        .ok_or_else(|| unsupported(&h))?;
    let [_] = dims::<1>(&h)?;
    let count = data_len(&h, t, start, len)?;
    let mut out = zeroed::<i64>(count)?;
    decode(src, t, count, |k, raw| {
        out[k] = label(t, raw).map_err(|why| FileProblem::Element(format!("label at index {k}: {why}")))?;
        Ok(())
    })?;
    at_end(src, len)?;
    Ok(out)
}

/// Reads the header of a square float64/float32 matrix (a distance matrix) and checks that the
/// data after it is exactly n×n elements, before anything is read or allocated: (n, element
/// type, Fortran order, offset of the data). The values are read later, row block by row block.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn square(src: &mut impl Read, len: u64) -> Result<(usize, Dtype, bool, u64), FileProblem> {
    let (h, start) = npy_header::read(src)?;
    let t = h.dtype().filter(|t| t.kind == b'f' && matches!(t.size, 4 | 8)).ok_or_else(|| unsupported(&h))?;
    let [n, d] = dims::<2>(&h)?;
    if n != d {
        return Err(FileProblem::Npy(format!(
            "shape {} is not square (a distance matrix is n×n)",
            shape_text(&h.shape)
        )));
    }
    data_len(&h, t, start, len)?;
    Ok((n, t, h.fortran, start))
}

/// Reads a 1-D or 2-D array (C or Fortran order) as row-major values: integers of any width
/// (and floats holding whole numbers) with `ints`, float64/float32 otherwise. Returns the shape.
pub(super) fn array<T: Copy + Default>(
    src: &mut impl Read,
    len: u64,
    ints: bool,
    conv: impl Fn(Dtype, &[u8]) -> Result<T, String>,
) -> Result<(Vec<usize>, Vec<T>), FileProblem> {
    let (h, start) = npy_header::read(src)?;
    let t = h
        .dtype()
        .filter(|t| match t.kind {
            b'i' | b'u' => ints && matches!(t.size, 1 | 2 | 4 | 8),
            b'f' => matches!(t.size, 4 | 8),
            _ => false,
        })
        .ok_or_else(|| unsupported(&h))?;
    let shape: Vec<usize> = match h.shape.len() {
        1 => dims::<1>(&h)?.to_vec(),
        2 => dims::<2>(&h)?.to_vec(),
        got => return Err(FileProblem::Ndim { expected: 2, got }),
    };
    let count = data_len(&h, t, start, len)?;
    let mut out = zeroed::<T>(count)?;
    let (n, d) = (shape[0], shape.get(1).copied().unwrap_or(1));
    let fortran = h.fortran && shape.len() == 2;
    decode(src, t, count, |k, raw| {
        let at = if fortran { (k % n) * d + k / n } else { k };
        out[at] = conv(t, raw).map_err(|why| FileProblem::Element(format!("element {at}: {why}")))?;
        Ok(())
    })?;
    at_end(src, len)?;
    Ok((shape, out))
}

/// An integer element as i64 (as a label is read).
pub(super) fn int(t: Dtype, raw: &[u8]) -> Result<i64, String> {
    label(t, raw)
}

/// A float element, widened exactly to f64.
pub(super) fn float_of(t: Dtype, raw: &[u8]) -> Result<f64, String> {
    Ok(float(t, raw))
}

/// The text of a 0-d string array (`np.array(b'csr')`, `|S3`, or `np.array('csr')`, `<U3`).
#[cfg(all(feature = "npz", not(target_arch = "wasm32")))]
pub(super) fn text_scalar(src: &mut impl Read, len: u64) -> Result<String, FileProblem> {
    let (h, start) = npy_header::read(src)?;
    let d = h.descr.as_bytes();
    let (kind, width) = match d {
        [b'|' | b'<' | b'>' | b'=', k @ (b'S' | b'U'), rest @ ..] => {
            (*k, std::str::from_utf8(rest).ok().and_then(|r| r.parse::<usize>().ok()).ok_or_else(|| unsupported(&h))?)
        }
        _ => return Err(unsupported(&h)),
    };
    if !h.shape.is_empty() || width > 64 {
        return Err(FileProblem::Npy(format!("expected a short text scalar, got shape {}", shape_text(&h.shape))));
    }
    let bytes = if kind == b'U' { width * 4 } else { width };
    if len.saturating_sub(start) != bytes as u64 {
        return Err(FileProblem::Npy("the text scalar's size does not match its type".into()));
    }
    let mut raw = vec![0u8; bytes];
    src.read_exact(&mut raw)?;
    let text: String = if kind == b'U' {
        let little = d[0] != b'>';
        raw.chunks_exact(4)
            .map(|c| {
                let v = if little {
                    u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                } else {
                    u32::from_be_bytes([c[0], c[1], c[2], c[3]])
                };
                char::from_u32(v).unwrap_or('\u{fffd}')
            })
            .collect()
    } else {
        raw.iter().map(|&b| b as char).collect()
    };
    Ok(text.trim_end_matches('\0').to_string())
}

/// Decodes one row's elements of type `t` from `raw` into `out`, widened exactly to f64.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn decode_floats(t: Dtype, raw: &[u8], out: &mut [f64]) {
    for (o, r) in out.iter_mut().zip(raw.chunks_exact(t.size)) {
        *o = float(t, r);
    }
}

fn unsupported(h: &Header) -> FileProblem {
    FileProblem::NpyType(quoted(&h.descr))
}

/// The shape as exactly `N` dimensions.
fn dims<const N: usize>(h: &Header) -> Result<[usize; N], FileProblem> {
    let shape: [u64; N] =
        h.shape.as_slice().try_into().map_err(|_| FileProblem::Ndim { expected: N, got: h.shape.len() })?;
    let mut out = [0; N];
    for (o, &s) in out.iter_mut().zip(&shape) {
        *o = usize::try_from(s).map_err(|_| too_big(h))?;
    }
    Ok(out)
}

fn too_big(h: &Header) -> FileProblem {
    FileProblem::Npy(format!("shape {} is too large", shape_text(&h.shape)))
}

/// Python's spelling of a shape: `(3,)`, `(3, 4)`.
fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

/// Checks that the data after the header is exactly shape × element size; returns the count.
fn data_len(h: &Header, t: Dtype, start: u64, len: u64) -> Result<usize, FileProblem> {
    let count = h.shape.iter().try_fold(1u64, |a, &s| a.checked_mul(s)).ok_or_else(|| too_big(h))?;
    let need = count.checked_mul(t.size as u64).ok_or_else(|| too_big(h))?;
    let have = len.saturating_sub(start);
    if need != have {
        let what = if need > have { "truncated" } else { "has extra bytes" };
        return Err(FileProblem::Npy(format!(
            "{what}: shape {} of {} needs {need} data bytes, the file has {have}",
            shape_text(&h.shape),
            quoted(&h.descr)
        )));
    }
    usize::try_from(count).map_err(|_| too_big(h))
}

/// A vector of `count` zeros, or an error when memory cannot hold it (never an abort).
fn zeroed<T: Copy + Default>(count: usize) -> Result<Vec<T>, FileProblem> {
    let mut v = Vec::new();
    let bytes = count as u64 * std::mem::size_of::<T>() as u64;
    v.try_reserve_exact(count).map_err(|_| FileProblem::OutOfMemory(bytes))?;
    v.resize(count, T::default());
    Ok(v)
}

/// Streams `count` elements of type `t` from `src` to `put(index, raw bytes)`.
fn decode(
    src: &mut impl Read,
    t: Dtype,
    count: usize,
    mut put: impl FnMut(usize, &[u8]) -> Result<(), FileProblem>,
) -> Result<(), FileProblem> {
    let mut buf = vec![0u8; CHUNK - CHUNK % t.size];
    let mut k = 0;
    while k < count {
        let take = (count - k).min(buf.len() / t.size);
        let chunk = &mut buf[..take * t.size];
        src.read_exact(chunk).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                FileProblem::Npy("the data ends early (the file changed while being read?)".into())
            }
            _ => FileProblem::Io(e),
        })?;
        for raw in chunk.chunks_exact(t.size) {
            put(k, raw)?;
            k += 1;
        }
    }
    Ok(())
}

/// The element's bits, widened to 64 (no sign extension).
fn bits(t: Dtype, raw: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if t.little {
        b[..raw.len()].copy_from_slice(raw);
        u64::from_le_bytes(b)
    } else {
        b[8 - raw.len()..].copy_from_slice(raw);
        u64::from_be_bytes(b)
    }
}

fn float(t: Dtype, raw: &[u8]) -> f64 {
    match t.size {
        4 => f64::from(f32::from_bits(bits(t, raw) as u32)),
        _ => f64::from_bits(bits(t, raw)),
    }
}

/// A label: any integer that fits in i64, or a float holding a whole number in i64's range.
fn label(t: Dtype, raw: &[u8]) -> Result<i64, String> {
    let x = bits(t, raw);
    match t.kind {
        b'i' => {
            let shift = 64 - 8 * t.size as u32;
            Ok(((x << shift) as i64) >> shift)
        }
        b'u' => i64::try_from(x).map_err(|_| format!("{x} does not fit in a 64-bit integer")),
        _ => {
            let v = float(t, raw);
            // Every whole f64 in [-2^63, 2^63) converts exactly.
            let two_63 = 2f64.powi(63);
            if v.is_finite() && v.fract() == 0.0 && (-two_63..two_63).contains(&v) {
                Ok(v as i64)
            } else {
                Err(format!("{} is not an integer", super::shown(v)))
            }
        }
    }
}

/// An element type [`write()`] can store.
pub trait Element: Copy {
    /// NumPy's descriptor, little-endian.
    const DESCR: &'static str;
    /// The value's 8 little-endian bytes.
    fn le_bytes(self) -> [u8; 8];
}

impl Element for f64 {
    const DESCR: &'static str = "<f8";
    fn le_bytes(self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

impl Element for i64 {
    const DESCR: &'static str = "<i8";
    fn le_bytes(self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

/// Writes a rows×cols C-order array as `.npy` version 1.0 (what `numpy.save` writes).
pub fn write<T: Element>(
    w: &mut (impl Write + ?Sized),
    rows: usize,
    cols: usize,
    values: impl IntoIterator<Item = T>,
) -> std::io::Result<()> {
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}", T::DESCR);
    // NumPy pads the header with spaces so that the data starts at a multiple of 64 bytes.
    header.push_str(&" ".repeat(63 - (10 + header.len()) % 64));
    header.push('\n');
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&(header.len() as u16).to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    for v in values {
        w.write_all(&v.le_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file with any header dict and data.
    fn file(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((dict.len() as u16).to_le_bytes());
        out.extend(dict.as_bytes());
        out.extend(data);
        out
    }

    fn read_points(bytes: &[u8]) -> Result<(usize, usize, Vec<f64>), FileProblem> {
        points(&mut &bytes[..], bytes.len() as u64)
    }

    fn read_labels(bytes: &[u8]) -> Result<Vec<i64>, FileProblem> {
        labels(&mut &bytes[..], bytes.len() as u64)
    }

    #[test]
    fn written_files_read_back() {
        let mut f = Vec::new();
        write(&mut f, 2, 3, [1.5, -2.0, 3.25, 0.0, 1e-300, 7.0]).unwrap();
        assert_eq!((10 + u16::from_le_bytes([f[8], f[9]]) as usize) % 64, 0);
        assert_eq!(read_points(&f).unwrap(), (2, 3, vec![1.5, -2.0, 3.25, 0.0, 1e-300, 7.0]));
        let mut f = Vec::new();
        write(&mut f, 4, 1, [i64::MIN, -1, 0, i64::MAX]).unwrap();
        let flat = f.clone();
        assert!(matches!(read_labels(&flat), Err(FileProblem::Ndim { expected: 1, got: 2 })));
    }

    #[test]
    fn byte_orders_widths_and_fortran_order() {
        let le: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let c = file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", &le);
        assert_eq!(read_points(&c).unwrap().2, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let f = file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", &le);
        assert_eq!(read_points(&f).unwrap().2, vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
        let be: Vec<u8> = [1.0f64, -2.5].iter().flat_map(|v| v.to_be_bytes()).collect();
        let b = file("{'descr': '>f8', 'fortran_order': False, 'shape': (1, 2), }", &be);
        assert_eq!(read_points(&b).unwrap().2, vec![1.0, -2.5]);
        let i: Vec<u8> = [-3i16, 7, 300].iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(
            read_labels(&file("{'descr': '>i2', 'fortran_order': False, 'shape': (3,), }", &i)).unwrap(),
            vec![-3, 7, 300]
        );
        assert_eq!(
            read_labels(&file("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", &[255, 0])).unwrap(),
            vec![255, 0]
        );
        assert_eq!(
            read_labels(&file("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", &[255, 0])).unwrap(),
            vec![-1, 0]
        );
        let u: Vec<u8> = u64::MAX.to_le_bytes().to_vec();
        let err = read_labels(&file("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", &u))
            .unwrap_err()
            .to_string();
        assert!(err.contains("18446744073709551615 does not fit"), "{err}");
        let big: Vec<u8> = 9.007_199_254_740_994e15f64.to_le_bytes().to_vec();
        assert_eq!(
            read_labels(&file("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", &big)).unwrap(),
            vec![9_007_199_254_740_994]
        );
        let half: Vec<u8> = 0.5f32.to_le_bytes().to_vec();
        assert!(read_labels(&file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &half)).is_err());
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        let huge = file("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 10), }", &[0; 16]);
        let err = read_points(&huge).unwrap_err().to_string();
        assert!(err.contains("truncated") && err.contains("80000000000000 data bytes"), "{err}");
        let overflow = file("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", &[]);
        assert!(read_points(&overflow).unwrap_err().to_string().contains("too large"));
        let extra = file("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", &[0; 9]);
        assert!(read_points(&extra).unwrap_err().to_string().contains("extra bytes"));
        let zero = file("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4000000000000000000), }", &[]);
        assert_eq!(read_points(&zero).unwrap(), (0, 4_000_000_000_000_000_000, vec![]));
    }

    #[test]
    fn a_source_shorter_than_promised_is_an_error() {
        let f = file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", &[0; 16]);
        assert!(points(&mut &f[..f.len() - 3], f.len() as u64).is_err());
        assert!(points(&mut &[f.clone(), vec![1]].concat()[..], f.len() as u64).is_err());
    }

    #[test]
    fn unsupported_types_and_ranks() {
        let e =
            read_points(&file("{'descr': '<c16', 'fortran_order': False, 'shape': (1, 1), }", &[0; 16])).unwrap_err();
        assert!(matches!(e, FileProblem::NpyType(ref d) if d == "'<c16'"));
        let e = read_points(&file("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }", &[0; 8])).unwrap_err();
        assert!(matches!(e, FileProblem::NpyType(_)));
        let e = read_points(&file("{'descr': '<f8', 'fortran_order': False, 'shape': (8,), }", &[0; 64])).unwrap_err();
        assert!(matches!(e, FileProblem::Ndim { expected: 2, got: 1 }));
        let e = read_labels(&file("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", &[0; 4]))
            .unwrap_err();
        assert!(matches!(e, FileProblem::NpyType(_)));
    }
}
