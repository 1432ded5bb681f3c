//! The name a file is stored under in a served directory: the one the sender gives in
//! the stream's header, accepted only as a single plain path component, so nothing a
//! sender says can reach outside the directory, hide a file or collide with the
//! receiver's own temporary files; and a file of that name is replaced only when the
//! server was told it may.

use std::path::{Path, PathBuf};

use crate::sink::TEMP_EXTRA_BYTES;

/// The longest name a file system with Linux's `NAME_MAX` (255 bytes) takes with room
/// for the receiver's temporary file beside it: 221 bytes.
pub const MAX_NAME_BYTES: usize = 255 - TEMP_EXTRA_BYTES;

/// Characters that are invisible or change how the text around them shows — bidi
/// controls (a name can show as `exe.txt` and be `txt.exe`), zero-width ones, the soft
/// hyphen, the byte-order mark, line and paragraph separators: a name with one would
/// mislead whoever reads a listing or a log, so it is refused, not escaped.
fn misleads(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// Why `name` cannot name a file stored by a receiver on a file system of 255-byte names
/// ([`check_for`] with [`MAX_NAME_BYTES`]).
pub fn check(name: &str) -> Result<(), String> {
    check_for(name, MAX_NAME_BYTES)
}

/// Why `name` cannot name a file in a directory that takes names of at most `limit`
/// bytes (its file system's limit less the temporary file's suffix), if it cannot.
pub fn check_for(name: &str, limit: usize) -> Result<(), String> {
    let long = format!(
        "it is {} bytes long: this receiver takes at most {limit} (its file system's \
         limit, less the room its temporary file's suffix needs)",
        name.len()
    );
    let why = if name.is_empty() {
        "it is empty"
    } else if name.len() > limit {
        long.as_str()
    } else if name == "." || name == ".." {
        "it names a directory"
    } else if name.contains('/') || name.contains('\\') {
        "it contains a path separator (only a file name is accepted)"
    } else if name.starts_with('.') {
        "it starts with a dot (hidden files and the receiver's temporary files do)"
    } else if name.starts_with('-') {
        "it starts with '-' (a command given the name would read it as an option)"
    } else if name.trim() != name {
        "it starts or ends with white space"
    } else if name.chars().any(char::is_control) {
        "it contains a control character"
    } else if name.chars().any(misleads) {
        "it contains an invisible or text-reordering character (it would show as \
         another name)"
    } else {
        return Ok(());
    };
    Err(format!("the name {:?} is refused: {why}", printable(name)))
}

/// The longest name `dir` takes for a transfer: its file system's limit
/// (`statvfs`'s `f_namemax`; 255 where unknown) less [`TEMP_EXTRA_BYTES`].
pub fn limit_in(dir: &Path) -> usize {
    #[cfg(target_os = "linux")]
    let max = rustix::fs::statvfs(dir).map_or(255, |v| v.f_namemax as usize);
    #[cfg(not(target_os = "linux"))]
    let max = {
        let _ = dir;
        255
    };
    max.saturating_sub(TEMP_EXTRA_BYTES)
}

/// Where a transfer named `name` goes in `dir`: an error when the name is refused
/// ([`check`]), when the sender gave none, or when a file (or anything else) of that
/// name exists and `overwrite` is off.
pub fn destination(dir: &Path, name: Option<&str>, overwrite: bool) -> Result<PathBuf, String> {
    let name =
        name.ok_or("the sender gave no name for its data (a stream: `cmtlab send - --name NAME`)")?;
    check_for(name, limit_in(dir))?;
    let dest = dir.join(name);
    if !overwrite && std::fs::symlink_metadata(&dest).is_ok() {
        return Err(format!(
            "{:?} exists on the receiver, which replaces files only when started with --overwrite",
            printable(name)
        ));
    }
    Ok(dest)
}

/// `name` cut to 64 characters, for messages (shown with `{:?}`, which escapes control,
/// invisible and reordering characters).
fn printable(name: &str) -> String {
    name.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_file_name_is_accepted_and_anything_that_could_escape_or_hide_is_not() {
        for ok in [
            "report.pdf",
            "a b",
            "ümlaut.txt",
            "x..y",
            "a-b",
            "file.part",
            "日本語.txt",
        ] {
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
            ("-", "option"),
            ("--help", "option"),
            (" ", "white space"),
            ("name ", "white space"),
            ("\u{202E}fdp.exe", "reordering"),
            ("a\u{200B}b", "invisible"),
            ("\u{FEFF}bom", "invisible"),
            ("line\u{2028}break", "invisible"),
        ];
        for (name, why) in refused {
            let e = check(name).unwrap_err();
            assert!(e.contains(why), "{name:?}: {e}");
        }
        assert!(check(&"x".repeat(MAX_NAME_BYTES)).is_ok());
        let e = check(&"x".repeat(MAX_NAME_BYTES + 1)).unwrap_err();
        assert!(e.contains("at most 221"), "{e}");
        // What the check accepts, the receiver's temporary file can be named after:
        // the longest accepted name gets a temporary file on a real file system.
        let dir = std::env::temp_dir().join(format!("cmtlab-names-long-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let name = "y".repeat(limit_in(&dir));
        let mut sink = crate::sink::Sink::create(&dir.join(&name)).expect("a temporary file");
        sink.discard();
        std::fs::remove_dir_all(&dir).unwrap();
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
