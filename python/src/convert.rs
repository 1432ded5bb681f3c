//! Python values to TOML: scenario and sweep dicts become the TOML text the loaders
//! read, and `set={...}` values become the `KEY=VALUE` overrides of the command line.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `value` as a TOML value; `at` names it in errors (a dotted key path).
pub fn to_toml(value: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    // bool before int: Python's bool is an int.
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(toml::Value::Boolean(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        let i: i64 = value.extract().map_err(|_| {
            PyTypeError::new_err(format!("`{at}`: integer {value} does not fit in 64 bits"))
        })?;
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Ok(toml::Value::Float(f.value()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(toml::Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        return table(d, at).map(toml::Value::Table);
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, item) in value.try_iter()?.enumerate() {
            out.push(to_toml(&item?, &format!("{at}.{i}"))?);
        }
        return Ok(toml::Value::Array(out));
    }
    if value.hasattr("__fspath__")? {
        let s: String = value.call_method0("__fspath__")?.extract()?;
        return Ok(toml::Value::String(s));
    }
    Err(PyTypeError::new_err(format!(
        "`{at}`: cannot put a {} into a scenario (use str, int, float, bool, list or dict)",
        value.get_type().name()?
    )))
}

/// A dict with string keys as a TOML table.
pub fn table(d: &Bound<'_, PyDict>, at: &str) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("`{at}`: keys must be strings, got {k}")))?;
        let here = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        t.insert(key, to_toml(&v, &here)?);
    }
    Ok(t)
}

/// `set={key: value}` as `KEY=VALUE` overrides, in the dict's order.
pub fn overrides(set: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<String>> {
    let Some(set) = set else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (k, v) in set.iter() {
        let key: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("set: keys must be strings, got {k}")))?;
        // A TOML value prints as it is written on the right of `=`.
        out.push(format!("{key}={}", to_toml(&v, &key)?));
    }
    Ok(out)
}

/// Parameters of an algorithm as keyword arguments for a Python constructor: whole
/// numbers become `int` (scenario numbers are stored as floats).
pub fn params_to_kwargs<'py>(
    py: Python<'py>,
    params: &cmt_core::Params,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in &params.0 {
        match v {
            cmt_core::ParamValue::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
                d.set_item(k, *x as i64)?
            }
            cmt_core::ParamValue::Number(x) => d.set_item(k, *x)?,
            cmt_core::ParamValue::Bool(b) => d.set_item(k, *b)?,
            cmt_core::ParamValue::Text(s) => d.set_item(k, s)?,
        }
    }
    Ok(d)
}
