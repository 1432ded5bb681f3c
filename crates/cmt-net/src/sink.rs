//! Where a received file goes, durably: in-order data is written as it is delivered to
//! a temporary file beside the destination; [`Sink::commit`] flushes it, fsyncs it,
//! renames it into place and fsyncs the directory. Until then the destination is
//! untouched — an existing file keeps its old contents — and a sink dropped without a
//! commit removes its temporary file. Memory does not grow with the file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A file being received.
pub struct Sink {
    dest: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
    hasher: Sha256,
    bytes: u64,
    committed: bool,
}

impl Sink {
    /// Opens a temporary file beside `dest`; fails (before anything is received) when
    /// the directory does not exist or cannot be written, or `dest` is a directory.
    pub fn create(dest: &Path) -> Result<Sink, String> {
        let name = dest
            .file_name()
            .ok_or_else(|| format!("{}: not a file name", dest.display()))?;
        if dest.is_dir() {
            return Err(format!("{}: is a directory", dest.display()));
        }
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let nonce: u64 = rand::random();
        let tmp = dir.join(format!(
            ".{}.part-{}-{nonce:016x}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| format!("{}: cannot create a file there: {e}", dir.display()))?;
        Ok(Sink {
            dest: dest.to_path_buf(),
            tmp,
            file: Some(BufWriter::with_capacity(1 << 20, file)),
            hasher: Sha256::new(),
            bytes: 0,
            committed: false,
        })
    }

    /// Appends in-order data.
    pub fn write(&mut self, data: &[u8]) -> Result<(), String> {
        let f = self.file.as_mut().ok_or("the file was already committed")?;
        f.write_all(data)
            .map_err(|e| format!("{}: cannot write: {e}", self.dest.display()))?;
        self.hasher.update(data);
        self.bytes += data.len() as u64;
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Makes the file durable under its name; returns its SHA-256 (hex).
    pub fn commit(&mut self) -> Result<String, String> {
        let at = |e: std::io::Error| format!("{}: cannot store: {e}", self.dest.display());
        let f = self.file.take().ok_or("the file was already committed")?;
        let f = f.into_inner().map_err(|e| at(e.into_error()))?;
        f.sync_all().map_err(at)?;
        drop(f);
        std::fs::rename(&self.tmp, &self.dest).map_err(at)?;
        self.committed = true;
        if let Some(dir) = self.dest.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir).and_then(|d| d.sync_all()).map_err(at)?;
        }
        Ok(hex(&self.hasher.clone().finalize()))
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Lower-case hex.
pub fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cmtlab-sink-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_destination_changes_only_on_commit_and_an_abandoned_sink_leaves_nothing() {
        let d = dir("commit");
        let dest = d.join("out.bin");
        std::fs::write(&dest, b"old contents").unwrap();
        let mut s = Sink::create(&dest).unwrap();
        s.write(b"new ").unwrap();
        s.write(b"data").unwrap();
        assert_eq!(
            std::fs::read(&dest).unwrap(),
            b"old contents",
            "untouched so far"
        );
        drop(s);
        assert_eq!(std::fs::read(&dest).unwrap(), b"old contents");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "temporary file removed"
        );
        let mut s = Sink::create(&dest).unwrap();
        s.write(b"new data").unwrap();
        let sha = s.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"new data");
        assert_eq!(sha, hex(&Sha256::digest(b"new data")));
        drop(s);
        assert_eq!(
            std::fs::read(&dest).unwrap(),
            b"new data",
            "a committed sink stays"
        );
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }

    #[test]
    fn a_missing_directory_or_a_directory_as_destination_fails_at_once() {
        let d = dir("missing");
        let e = Sink::create(&d.join("no/such/dir/out.bin")).err().unwrap();
        assert!(
            e.contains("no/such/dir") && e.contains("cannot create"),
            "{e}"
        );
        let e = Sink::create(&d).err().unwrap();
        assert!(e.contains("is a directory"), "{e}");
    }
}
