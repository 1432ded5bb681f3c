//! Names that become folders under an output directory (a sweep's `name`, a study
//! run's `name`) or are printed: one plain path component, so that nothing is written
//! outside the folder it belongs in, and no control characters, so that printing a
//! name cannot drive the terminal.

/// Checks `name`, the value of `field`: non-empty, at most 200 bytes, not `.` or `..`,
/// no `/` or `\`, no control characters.
pub fn check_folder_name(field: &str, name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        Some("is empty")
    } else if name.len() > 200 {
        Some("is longer than 200 bytes")
    } else if name == "." || name == ".." {
        Some("names no folder of its own")
    } else if name.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else {
        None
    };
    match why {
        Some(w) => Err(format!(
            "field `{field}`: `{}` {w} (give a plain folder name such as `rbuf-sweep`)",
            name.escape_default()
        )),
        None => Ok(()),
    }
}

/// A value as a folder name: letters and digits kept, every run of anything else one `-`
/// ("every path down 10 s" → "every-path-down-10-s").
pub fn slug(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "value".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{check_folder_name, slug};

    #[test]
    fn a_slug_is_a_plain_folder_name() {
        assert_eq!(slug("every path down 10 s"), "every-path-down-10-s");
        assert_eq!(
            slug("first path's address removed"),
            "first-path-s-address-removed"
        );
        assert_eq!(slug("../.."), "value");
        assert!(check_folder_name("x", &slug("a/b\\c")).is_ok());
    }

    #[test]
    fn only_a_plain_component_without_control_characters_passes() {
        assert!(check_folder_name("name", "demo-rbuf_2.v1").is_ok());
        for bad in ["", ".", "..", "../../x", "a/b", "a\\b", "\u{1b}[31mred"] {
            let e = check_folder_name("name", bad).unwrap_err();
            assert!(e.starts_with("field `name`: `"), "{e}");
            assert!(!e.contains('\u{1b}'), "the message itself is escaped: {e}");
        }
    }
}
