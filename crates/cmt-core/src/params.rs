//! Algorithm parameters as they come from scenario files: a small typed key/value map.
//!
//! Keeping this in the core lets every scheduler, retransmission policy and congestion
//! controller validate its own parameters without the core depending on a file format.

use std::collections::BTreeMap;
use std::fmt;

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A number (integers are stored as floats).
    Number(f64),
    /// A switch.
    Bool(bool),
    /// A name.
    Text(String),
}

/// Parameters of one algorithm, ordered by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(pub BTreeMap<String, ParamValue>);

/// A parameter problem, naming the parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError(pub String);

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ParamError {}

impl Params {
    /// Fails if any parameter is not in `known`.
    pub fn expect_only(&self, algorithm: &str, known: &[&str]) -> Result<(), ParamError> {
        match self.0.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) if known.is_empty() => Err(ParamError(format!(
                "`{algorithm}` takes no parameters, got `{k}`"
            ))),
            Some(k) => Err(ParamError(format!(
                "unknown parameter `{k}` for `{algorithm}` (known: {})",
                known.join(", ")
            ))),
        }
    }
    /// A number, or `default` when absent.
    pub fn number(&self, key: &str, default: f64) -> Result<f64, ParamError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Number(x)) if x.is_finite() => Ok(*x),
            Some(v) => Err(ParamError(format!(
                "parameter `{key}` must be a number, got {v:?}"
            ))),
        }
    }
    /// A whole number ≥ 0 (at most 2^53, exact as a float), or `default` when absent.
    pub fn count(&self, key: &str, default: u64) -> Result<u64, ParamError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Number(x))
                if x.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(x) =>
            {
                Ok(*x as u64)
            }
            Some(v) => Err(ParamError(format!(
                "parameter `{key}` must be a whole number ≥ 0, got {v:?}"
            ))),
        }
    }
    /// A switch, or `default` when absent.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, ParamError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(v) => Err(ParamError(format!(
                "parameter `{key}` must be true or false, got {v:?}"
            ))),
        }
    }
    /// A name, or `default` when absent.
    pub fn text<'a>(&'a self, key: &str, default: &'a str) -> Result<&'a str, ParamError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Text(s)) => Ok(s),
            Some(v) => Err(ParamError(format!(
                "parameter `{key}` must be a string, got {v:?}"
            ))),
        }
    }
}
