//! The name a file is stored under in a served directory: the one the sender gives in
//! the stream's header, accepted only as a single plain path component, so nothing a
//! sender says can reach outside the directory, hide a file or collide with the
//! receiver's own temporary files; and a file of that name is replaced only when the
//! server was told it may.

use std::path::{Path, PathBuf};

/// The longest name accepted, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// Why `name` cannot name a file in the directory, if it cannot.
pub fn check(name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "it is empty"
    } else if name.len() > MAX_NAME_BYTES {
        "it is longer than 255 bytes"
    } else if name == "." || name == ".." {
        "it names a directory"
    } else if name.contains('/') || name.contains('\\') {
        "it contains a path separator (only a file name is accepted)"
    } else if name.starts_with('.') {
        "it starts with a dot (hidden files and the receiver's temporary files do)"
    } else if name.chars().any(char::is_control) {
        "it contains a control character"
    } else {
        return Ok(());
    };
    Err(format!("the name {:?} is refused: {why}", printable(name)))
}

/// Where a transfer named `name` goes in `dir`: an error when the name is refused
/// ([`check`]), when the sender gave none, or when a file (or anything else) of that
/// name exists and `overwrite` is off.
pub fn destination(dir: &Path, name: Option<&str>, overwrite: bool) -> Result<PathBuf, String> {
    let name =
        name.ok_or("the sender gave no name for its data (a stream: `cmtlab send - --name NAME`)")?;
    check(name)?;
    let dest = dir.join(name);
    if !overwrite && std::fs::symlink_metadata(&dest).is_ok() {
        return Err(format!(
            "{:?} exists on the receiver, which replaces files only when started with --overwrite",
            printable(name)
        ));
    }
    Ok(dest)
}

/// `name` cut to 64 characters, for messages.
fn printable(name: &str) -> String {
    name.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_file_name_is_accepted_and_anything_that_could_escape_or_hide_is_not() {
        for ok in ["report.pdf", "a b", "ümlaut.txt", "x..y", "-", "file.part"] {
            assert!(check(ok).is_ok(), "{ok}");
        }
        let refused = [
            ("", "empty"),
            ("..", "directory"),
            (".", "directory"),
            ("../etc/passwd", "separator"),
            ("a/b", "separator"),
            ("/etc/passwd", "separator"),
            ("..\\win.ini", "separator"),
            (".bashrc", "dot"),
            (".x.part-1-2", "dot"),
            ("a\nb", "control"),
            ("tab\there", "control"),
        ];
        for (name, why) in refused {
            let e = check(name).unwrap_err();
            assert!(e.contains(why), "{name:?}: {e}");
        }
        assert!(check(&"x".repeat(255)).is_ok());
        assert!(check(&"x".repeat(256)).unwrap_err().contains("255"));
    }

    #[test]
    fn an_existing_name_is_replaced_only_when_allowed_and_a_missing_name_is_refused() {
        let dir = std::env::temp_dir().join(format!("cmtlab-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("there"), b"old").unwrap();
        assert_eq!(
            destination(&dir, Some("new"), false).unwrap(),
            dir.join("new")
        );
        let e = destination(&dir, Some("there"), false).unwrap_err();
        assert!(e.contains("--overwrite"), "{e}");
        assert_eq!(
            destination(&dir, Some("there"), true).unwrap(),
            dir.join("there")
        );
        let e = destination(&dir, None, true).unwrap_err();
        assert!(e.contains("--name"), "{e}");
        let e = destination(&dir, Some("../there"), true).unwrap_err();
        assert!(e.contains("separator"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
