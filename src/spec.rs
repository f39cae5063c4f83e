//! Measure specifications: `tnc:k=20`, `kl_div:sigma=0.1`, `ivm:measure=silhouette`.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::error::Error;

/// A parameter value as written by the user.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// An integer (`k=10`).
    Int(i64),
    /// Any other number (`sigma=0.5`, `sigma=1e-3`).
    Float(f64),
    /// Anything else (`measure=silhouette`).
    Str(String),
}

impl ParamValue {
    /// Reads a value the way a user writes it: an integer, else a number, else a string. An
    /// integer past i64 stays text, so that a refusal echoes it as written (never rounded to
    /// `18446744073709552000`); a float parameter still reads it as a number.
    pub fn parse(text: &str) -> ParamValue {
        if let Ok(i) = text.parse::<i64>() {
            ParamValue::Int(i)
        } else if is_integer_literal(text) {
            ParamValue::Str(text.to_string())
        } else if let Ok(f) = text.parse::<f64>() {
            ParamValue::Float(f)
        } else {
            ParamValue::Str(text.to_string())
        }
    }
}

/// `[+-]digits`: an integer as written, whatever its size.
pub(crate) fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => f.write_str(s),
        }
    }
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ParamValue::Int(i) => s.serialize_i64(*i),
            ParamValue::Float(x) => s.serialize_f64(*x),
            ParamValue::Str(v) => s.serialize_str(v),
        }
    }
}

impl From<i64> for ParamValue {
    fn from(v: i64) -> Self {
        ParamValue::Int(v)
    }
}
impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::Float(v)
    }
}
impl From<&str> for ParamValue {
    fn from(v: &str) -> Self {
        ParamValue::Str(v.to_string())
    }
}

/// One requested measure: a ZADU id (alias such as `tnc` or full name) and its parameters.
///
/// ```
/// use faithful::{Error, ParamValue, Spec};
/// let spec: Spec = "tnc:k=10".parse()?;
/// assert_eq!(spec, Spec::new("tnc").with("k", 10));
/// assert_eq!(spec.params, [("k".to_string(), ParamValue::Int(10))]);
/// assert!(matches!("tnc:k".parse::<Spec>(), Err(Error::BadSpec { .. })));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The measure's id as written (alias or full ZADU id).
    pub id: String,
    /// The parameters given, in the order written (defaults are filled in when it runs).
    pub params: Vec<(String, ParamValue)>,
}

impl Spec {
    /// A spec with default parameters.
    pub fn new(id: impl Into<String>) -> Self {
        Spec { id: id.into(), params: Vec::new() }
    }
    /// Sets a parameter.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<ParamValue>) -> Self {
        self.params.push((name.into(), value.into()));
        self
    }
}

impl FromStr for Spec {
    type Err = Error;

    /// Parses `ID[:P=V[,P=V]...]`.
    fn from_str(text: &str) -> Result<Self, Error> {
        let bad = |reason: &str| Error::BadSpec { spec: text.to_string(), reason: reason.to_string() };
        let (id, rest) = match text.split_once(':') {
            Some((id, rest)) => (id.trim(), Some(rest)),
            None => (text.trim(), None),
        };
        if id.is_empty() {
            return Err(bad("the measure id is empty"));
        }
        let mut spec = Spec::new(id);
        if let Some(rest) = rest {
            for part in rest.split(',') {
                let (name, value) = part.split_once('=').ok_or_else(|| bad("parameters are written NAME=VALUE"))?;
                let (name, value) = (name.trim(), value.trim());
                if name.is_empty() || value.is_empty() {
                    return Err(bad("parameters are written NAME=VALUE"));
                }
                if spec.params.iter().any(|(n, _)| n == name) {
                    return Err(bad(&format!("parameter '{name}' is given twice")));
                }
                spec.params.push((name.to_string(), ParamValue::parse(value)));
            }
        }
        Ok(spec)
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)?;
        for (i, (n, v)) in self.params.iter().enumerate() {
            write!(f, "{}{n}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_and_params() {
        let s: Spec = "tnc:k=20".parse().unwrap();
        assert_eq!(s, Spec::new("tnc").with("k", 20i64));
        let s: Spec = "kl_div:sigma=0.1".parse().unwrap();
        assert_eq!(s.params[0].1, ParamValue::Float(0.1));
        let s: Spec = "ivm:measure=silhouette".parse().unwrap();
        assert_eq!(s.params[0].1, ParamValue::Str("silhouette".into()));
        assert_eq!("lcmc".parse::<Spec>().unwrap().params.len(), 0);
        assert_eq!(s.to_string(), "ivm:measure=silhouette");
    }

    #[test]
    fn rejects_malformed() {
        for bad in ["", ":k=2", "tnc:k", "tnc:k=", "tnc:k=1,k=2", "tnc:=3"] {
            assert!(matches!(bad.parse::<Spec>(), Err(Error::BadSpec { .. })), "{bad}");
        }
    }
}
