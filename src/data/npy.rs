//! `.npy` readers: 2-D float64/float32 points, 1-D integer labels.

use ndarray::{Array1, Array2};
use ndarray_npy::{ReadNpyError, ReadNpyExt, ReadableElement};

use crate::error::FileProblem;

/// Reads a 2-D float64 or float32 array as (n, dim, row-major f64 values).
pub fn points(bytes: &[u8]) -> Result<(usize, usize, Vec<f64>), FileProblem> {
    match read::<Array2<f64>>(bytes) {
        Ok(a) => return Ok(flatten(a)),
        Err(ReadNpyError::WrongDescriptor(_)) => {}
        Err(e) => return Err(problem(e, 2)),
    }
    match read::<Array2<f32>>(bytes) {
        Ok(a) => Ok(flatten(a.mapv(f64::from))),
        Err(ReadNpyError::WrongDescriptor(d)) => Err(FileProblem::NpyType(d.to_string())),
        Err(e) => Err(problem(e, 2)),
    }
}

/// Reads a 1-D integer array (any width, signed or not), or a float array of whole numbers.
pub fn labels(bytes: &[u8]) -> Result<Vec<i64>, FileProblem> {
    macro_rules! try_int {
        ($($t:ty),*) => {$(
            match read::<Array1<$t>>(bytes) {
                Ok(a) => return a.iter().map(|&v| i64::try_from(v).map_err(|_| {
                    FileProblem::Npy(format!("label {v} does not fit in 64-bit integer"))
                })).collect(),
                Err(ReadNpyError::WrongDescriptor(_)) => {}
                Err(e) => return Err(problem(e, 1)),
            }
        )*};
    }
    try_int!(i64, i32, i16, i8, u64, u32, u16, u8);
    match read::<Array1<f64>>(bytes) {
        Ok(a) => a.iter().map(|&v| whole(v)).collect(),
        Err(ReadNpyError::WrongDescriptor(d)) => Err(FileProblem::NpyType(d.to_string())),
        Err(e) => Err(problem(e, 1)),
    }
}

/// A float label must be a whole number.
pub(crate) fn whole(v: f64) -> Result<i64, FileProblem> {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        Ok(v as i64)
    } else {
        Err(FileProblem::Npy(format!("label {v} is not an integer")))
    }
}

fn read<T: ReadNpyExt>(bytes: &[u8]) -> Result<T, ReadNpyError> {
    T::read_npy(bytes)
}

fn flatten<A: ReadableElement + Copy + Into<f64>>(a: Array2<A>) -> (usize, usize, Vec<f64>) {
    let (n, d) = a.dim();
    (n, d, a.iter().map(|&v| v.into()).collect())
}

fn problem(e: ReadNpyError, expected: usize) -> FileProblem {
    match e {
        ReadNpyError::WrongNdim(_, got) => FileProblem::Ndim { expected, got },
        ReadNpyError::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => FileProblem::Npy("truncated file".into()),
        ReadNpyError::Io(io) => FileProblem::Io(io),
        other => FileProblem::Npy(other.to_string()),
    }
}
