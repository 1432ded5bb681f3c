//! The experiment engine's error: one line naming the file (or directory) and the problem.

use std::fmt;

/// A one-line error: `SOURCE: problem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabError(pub String);

impl LabError {
    /// An error about `source`.
    pub fn at(source: &str, message: impl fmt::Display) -> Self {
        LabError(format!("{source}: {message}"))
    }
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.lines().next().unwrap_or(""))
    }
}

impl std::error::Error for LabError {}
