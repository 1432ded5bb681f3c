//! An output file a command writes when it ends (`--summary`), opened when it starts:
//! a path that cannot be written fails before any work (and before a peer is
//! involved), and a command that fails leaves the file as it found it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output file, open for writing, not written yet.
pub struct Output {
    path: PathBuf,
    file: File,
    /// The command created it (removed again if nothing is written).
    created: bool,
    written: bool,
}

impl Output {
    /// Opens `path` for writing without changing it; `flag` names the option in errors.
    pub fn open(path: &Path, flag: &str) -> Result<Output, String> {
        let existed = path.exists();
        let file = File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("{flag} {}: cannot write: {e}", path.display()))?;
        Ok(Output {
            path: path.to_path_buf(),
            file,
            created: !existed,
            written: false,
        })
    }

    /// Replaces the file's contents with `text`.
    pub fn write(mut self, text: &str) -> Result<(), String> {
        let at = |e: std::io::Error| format!("{}: cannot write: {e}", self.path.display());
        if self.file.metadata().map_err(at)?.is_file() {
            self.file.set_len(0).map_err(at)?;
        }
        self.file.write_all(text.as_bytes()).map_err(at)?;
        self.file.flush().map_err(at)?;
        self.written = true;
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_leaves_the_file_as_it_was_and_a_bad_path_fails_at_once() {
        let d = std::env::temp_dir().join(format!("cmtlab-output-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let old = d.join("old.json");
        std::fs::write(&old, "old").unwrap();
        drop(Output::open(&old, "--summary").unwrap());
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
        let new = d.join("new.json");
        drop(Output::open(&new, "--summary").unwrap());
        assert!(!new.exists(), "not left behind empty");
        Output::open(&old, "--summary")
            .unwrap()
            .write("{}\n")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "{}\n");
        let e = Output::open(&d.join("no/such/dir/s.json"), "--summary")
            .err()
            .unwrap();
        assert!(
            e.starts_with("--summary ") && e.contains("cannot write"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
