//! The resume journal, `.NAME.resume` beside `--out`: the file's total length and how
//! many of its bytes `.NAME.part` holds durably. Three lines of text, written to a
//! temporary file, fsynced and renamed over the old journal, so a journal on disk is
//! always a whole one; one that does not parse is ignored (and the partial file with it).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

const FIRST_LINE: &str = "cmtlab resume 1";

/// What a journal records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The whole file's length.
    pub total: u64,
    /// Bytes of the partial file made durable.
    pub offset: u64,
}

/// The partial file and the journal of destination `dest`.
pub fn paths(dest: &Path) -> (PathBuf, PathBuf) {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (
        dir.join(format!(".{name}.part")),
        dir.join(format!(".{name}.resume")),
    )
}

/// The record of `journal`, if there is a readable one.
pub fn read(journal: &Path) -> Option<Record> {
    let text = std::fs::read_to_string(journal).ok()?;
    let mut lines = text.lines();
    if lines.next()? != FIRST_LINE {
        return None;
    }
    let mut value =
        |key: &str| -> Option<u64> { lines.next()?.strip_prefix(key)?.trim().parse().ok() };
    let total = value("total")?;
    let offset = value("offset")?;
    (offset <= total).then_some(Record { total, offset })
}

/// Writes `r` to `journal` atomically and durably (temporary file, fsync, rename, fsync
/// of the directory).
pub fn write(journal: &Path, r: Record) -> Result<(), String> {
    let at = |e: std::io::Error| format!("{}: cannot write: {e}", journal.display());
    let tmp = journal.with_extension("resume.tmp");
    let mut f = File::create(&tmp).map_err(at)?;
    write!(f, "{FIRST_LINE}\ntotal {}\noffset {}\n", r.total, r.offset).map_err(at)?;
    f.sync_all().map_err(at)?;
    std::fs::rename(&tmp, journal).map_err(at)?;
    if let Some(dir) = journal.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir).and_then(|d| d.sync_all()).map_err(at)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_a_round_trip_and_a_damaged_journal_is_ignored() {
        let d = std::env::temp_dir().join(format!("cmtlab-journal-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (part, journal) = paths(&d.join("out.bin"));
        assert_eq!(part.file_name().unwrap(), ".out.bin.part");
        assert_eq!(journal.file_name().unwrap(), ".out.bin.resume");
        let r = Record {
            total: 100 << 20,
            offset: 12 << 20,
        };
        write(&journal, r).unwrap();
        assert_eq!(read(&journal), Some(r));
        for bad in [
            "",
            "cmtlab resume 2\ntotal 5\noffset 1\n",
            "cmtlab resume 1\ntotal 5\n",
            "cmtlab resume 1\ntotal 5\noffset 6\n",
            "cmtlab resume 1\ntotal x\noffset 1\n",
        ] {
            std::fs::write(&journal, bad).unwrap();
            assert_eq!(read(&journal), None, "{bad:?}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
