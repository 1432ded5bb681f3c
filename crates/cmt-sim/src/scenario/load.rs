//! Reading a scenario: TOML text → `--set` overrides → typed [`Scenario`] → validated
//! [`Built`] world, with one-line errors.

use std::fmt;
use std::path::Path;

use super::{Built, Scenario};

/// A scenario problem, printed on one line: `FILE: field `x.y`: problem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// File (or source label).
    pub file: String,
    /// Dotted field path, if known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: field `{}`: {}", self.file, field, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}
impl std::error::Error for ScenarioError {}

fn err(file: &str, field: Option<String>, message: impl Into<String>) -> ScenarioError {
    let message: String = message.into();
    ScenarioError {
        file: file.to_string(),
        field,
        message: message.lines().next().unwrap_or("").trim().to_string(),
    }
}

/// Reads, overrides, parses and validates a scenario file.
pub fn load_file(path: &Path, overrides: &[String]) -> Result<Built, ScenarioError> {
    let label = path.display().to_string();
    let text = crate::input_file::read_text(path, crate::input_file::MAX_TEXT)
        .map_err(|e| err(&label, None, format!("cannot read file: {e}")))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    load_str_in(&text, &label, stem.as_deref(), overrides, path.parent())
}

/// As [`load_file`], from text; `label` names the source in errors. Relative trace
/// files are looked up from the current directory.
pub fn load_str(
    text: &str,
    label: &str,
    default_name: Option<&str>,
    overrides: &[String],
) -> Result<Built, ScenarioError> {
    load_str_in(text, label, default_name, overrides, None)
}

/// As [`load_str`], resolving relative trace files from `dir`.
pub fn load_str_in(
    text: &str,
    label: &str,
    default_name: Option<&str>,
    overrides: &[String],
    dir: Option<&Path>,
) -> Result<Built, ScenarioError> {
    let mut value: toml::Value = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| {
            let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: ")
        });
        err(
            label,
            None,
            format!("{}{}", at.unwrap_or_default(), e.message()),
        )
    })?;
    for o in overrides {
        apply_override(&mut value, o)
            .map_err(|(field, m)| err(label, field, format!("--set: {m}")))?;
    }
    replace_workload(&mut value, overrides);
    let scenario: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = (path != "." && !path.is_empty()).then_some(path);
        err(label, field, e.into_inner().to_string())
    })?;
    let mut built = super::build::build(&scenario, default_name, dir)
        .map_err(|e| err(label, Some(e.field), e.message))?;
    built.inputs = inputs_fingerprint(text, overrides, &built);
    Ok(built)
}

/// FNV-1a of the scenario text, the overrides and the traces' contents.
fn inputs_fingerprint(text: &str, overrides: &[String], built: &Built) -> String {
    use crate::build_info::{fnv1a, FNV_START};
    let mut h = FNV_START;
    let mut eat = |bytes: &[u8]| {
        fnv1a(&mut h, bytes);
        fnv1a(&mut h, &[0]);
    };
    eat(text.as_bytes());
    for o in overrides {
        eat(o.as_bytes());
    }
    for t in built.links.iter().filter_map(|l| l.trace.as_ref()) {
        eat(&t.fingerprint().to_le_bytes());
    }
    format!("{h:016x}")
}

/// The workload is one of `duration` and `file_size`: an override of one replaces the
/// other (`--set file_size=10MB` turns a timed scenario into a file transfer); when
/// both are overridden, the later override wins, as for any repeated key.
fn replace_workload(root: &mut toml::Value, overrides: &[String]) {
    let last = overrides.iter().rev().find_map(|o| {
        let key = o.split_once('=')?.0.trim();
        (key == "duration" || key == "file_size").then_some(key)
    });
    let Some(t) = root.as_table_mut() else { return };
    match last {
        Some("duration") => drop(t.remove("file_size")),
        Some(_) => drop(t.remove("duration")),
        None => {}
    }
}

/// Applies `KEY=VALUE` where KEY is a dotted path; array elements are chosen by index
/// or by their `name` field (`links.wifi.rate=5Mbps`). VALUE is parsed as a TOML value
/// (number, boolean, quoted string, array, inline table), falling back to a bare string.
fn apply_override(root: &mut toml::Value, o: &str) -> Result<(), (Option<String>, String)> {
    let (key, raw) = o
        .split_once('=')
        .ok_or((None, format!("`{o}` is not KEY=VALUE")))?;
    let key = key.trim();
    let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", raw.trim()))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.trim().to_string()));
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err((Some(key.into()), "empty key segment".into()));
    }
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let here = Some(parts[..=i].join("."));
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()))
            }
            toml::Value::Array(a) => {
                let idx = match part.parse::<usize>() {
                    Ok(i) => i,
                    Err(_) => a
                        .iter()
                        .position(|v| v.get("name").and_then(|n| n.as_str()) == Some(part))
                        .ok_or((here.clone(), format!("no element named `{part}`")))?,
                };
                let len = a.len();
                let slot = a
                    .get_mut(idx)
                    .ok_or((here, format!("index {idx} out of range (length {len})")))?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => return Err((here, "cannot descend into a plain value".into())),
        };
    }
    Ok(())
}
