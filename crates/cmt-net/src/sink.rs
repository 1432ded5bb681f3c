//! Where a received file goes, durably: in-order data is written as it is delivered to
//! a temporary file beside the destination; [`Sink::commit`] flushes it, fsyncs it,
//! renames it into place and fsyncs the directory. Until then the destination is
//! untouched — an existing file keeps its old contents — and a sink dropped without a
//! commit removes its temporary file. Memory does not grow with the file.
//!
//! The destination must be a regular file or absent, with two exceptions written through
//! without a temporary file: the null device (`/dev/null`, or a link to it), to measure
//! a transfer without storing it, and `-`, standard output, to stream what arrives into
//! another program (`cmtlab recv --out - | tar x`): there bytes leave as they are
//! delivered, so a transfer that fails midway leaves a truncated stream behind and only
//! the exit status says so (as with `ssh` or `curl` in a pipeline). Anything else that
//! is not a regular file (a directory, another device, a FIFO, a socket) is refused
//! before a peer is involved, so `--out` can never replace a device node with a file.
//!
//! A temporary file is named `.NAME.part-PID-NONCE` and locked (`flock`) while its
//! receiver lives; temporary files of this kind beside the destination that nobody
//! holds locked (left by a receiver that was killed) are removed when a new sink opens.
//!
//! A resumable sink ([`Sink::resumable`], `recv --resume`) writes to `.NAME.part`
//! instead, makes it durable at checkpoints recorded in `.NAME.resume`, keeps both when
//! it ends without a commit, and offers what they hold to the next receiver
//! ([`crate::resume`]).

use std::fs::{File, Metadata};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::pipe::Pipe;
use crate::resume::journal::{self, Record};
use crate::resume::{Header, Offer};

/// Where the bytes go until the commit.
enum Target {
    /// A temporary file beside the destination, renamed over it on commit.
    Temporary(PathBuf),
    /// The null device, written through (nothing to rename).
    Through,
    /// Standard output, written by a thread of its own ([`Pipe`]).
    Stdout(Pipe),
    /// `.NAME.part` with its journal, kept when the sink ends without a commit.
    Resumable(Resumable),
}

/// The state of a resumable sink.
struct Resumable {
    part: PathBuf,
    journal: PathBuf,
    /// The file's total length, once the stream's header said it.
    total: Option<u64>,
    /// What the sink offered when it opened.
    offer: Option<Offer>,
    /// Bytes made durable and recorded so far.
    checkpointed: u64,
    /// A checkpoint after this many more bytes.
    every: u64,
    /// The data turned out wrong: nothing is kept.
    discarded: bool,
}

/// A file being received.
pub struct Sink {
    dest: PathBuf,
    target: Target,
    file: Option<BufWriter<File>>,
    hasher: Sha256,
    bytes: u64,
    committed: bool,
    /// The commit may replace a file of the destination's name.
    replace: bool,
}

/// What a non-regular file is, for the error.
fn kind_of(m: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Whether `m` (of the destination, links followed) is the null device.
fn is_null_device(m: &Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    m.file_type().is_char_device()
        && std::fs::metadata("/dev/null").is_ok_and(|n| n.rdev() == m.rdev())
}

/// The most bytes a temporary file's name adds to its destination's
/// (`.NAME.part-PID-NONCE`: a dot, `.part-`, a pid of up to 10 digits, a dash and 16 hex
/// digits): a name this much shorter than the file system's limit can be received.
pub const TEMP_EXTRA_BYTES: usize = 1 + ".part-".len() + 10 + 1 + 16;

/// The file writer's buffer at most (and by default), bytes.
pub const MAX_BUFFER: u64 = 1 << 20;

/// The writer's buffer for a transfer whose receive window is `window`: as large as the
/// window, within 64 KiB and [`MAX_BUFFER`] (the data of a small window never needs
/// more to be written in large pieces).
pub const fn buffer_for(window: u64) -> u64 {
    let floor = 64 << 10;
    if window < floor {
        floor
    } else if window > MAX_BUFFER {
        MAX_BUFFER
    } else {
        window
    }
}

impl Sink {
    /// Opens a temporary file beside `dest`; fails (before anything is received) when
    /// the directory does not exist or cannot be written, or `dest` exists and is not
    /// a regular file (the null device aside, see the module's doc).
    pub fn create(dest: &Path) -> Result<Sink, String> {
        if is_stdout(dest) {
            return Self::stdout();
        }
        let name = dest
            .file_name()
            .ok_or_else(|| format!("{}: not a file name", dest.display()))?;
        if check_destination(dest)? {
            return Self::null_device(dest);
        }
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let prefix = format!(".{}.part-", name.to_string_lossy());
        remove_stale(&dir, &prefix);
        let nonce: u64 = rand::random();
        let tmp = dir.join(format!("{prefix}{}-{nonce:016x}", std::process::id()));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| format!("{}: cannot create a file there: {e}", dir.display()))?;
        // Held until the sink is done: marks the file as a live receiver's.
        lock(&file);
        Ok(Self::with(dest, Target::Temporary(tmp), file))
    }

    /// As [`create`](Self::create), for a destination that must not exist when the
    /// file is committed: the commit fails, and the file already there stays, when one
    /// of its name appeared meanwhile (an atomic no-replace rename).
    pub fn create_new(dest: &Path) -> Result<Sink, String> {
        let mut s = Self::create(dest)?;
        s.replace = false;
        Ok(s)
    }

    /// Standard output (`-`), written as data is delivered by a thread of its own, at
    /// most [`PIPE_BUFFERED`] bytes ahead of the reader.
    fn stdout() -> Result<Sink, String> {
        use std::os::fd::AsFd;
        let label = "standard output";
        let fd = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| format!("{label}: cannot write: {e}"))?;
        let pipe = Pipe::spawn(File::from(fd), label, PIPE_BUFFERED);
        Ok(Sink {
            dest: PathBuf::from(label),
            target: Target::Stdout(pipe),
            file: None,
            hasher: Sha256::new(),
            bytes: 0,
            committed: false,
            replace: true,
        })
    }

    /// Whether more delivered data may be written now: false while the reader of
    /// standard output lags [`PIPE_BUFFERED`] bytes behind (the receiver then leaves
    /// data in the association, whose window closes).
    pub fn has_room(&self) -> bool {
        match &self.target {
            Target::Stdout(p) => p.has_room(),
            _ => true,
        }
    }

    /// Bytes written but not yet taken by standard output's writer (0 for files).
    pub fn pending(&self) -> u64 {
        match &self.target {
            Target::Stdout(p) => p.pending(),
            _ => 0,
        }
    }

    /// Woken when standard output's writer made progress or failed (`None` for files,
    /// written at once).
    pub fn ready(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        match &self.target {
            Target::Stdout(p) => Some(p.ready()),
            _ => None,
        }
    }

    /// Standard output's writer failed (its reader went away, say).
    pub fn failed(&self) -> Option<String> {
        match &self.target {
            Target::Stdout(p) => p.error(),
            _ => None,
        }
    }

    fn null_device(dest: &Path) -> Result<Sink, String> {
        let file = File::options()
            .write(true)
            .open(dest)
            .map_err(|e| format!("{}: cannot open: {e}", dest.display()))?;
        Ok(Self::with(dest, Target::Through, file))
    }

    /// Gives the file writer a buffer of `bytes` (before anything was written; the
    /// default is [`MAX_BUFFER`]): a serving receiver sizes it to the transfer's receive
    /// window ([`buffer_for`]).
    pub fn resize_buffer(&mut self, bytes: usize) {
        if self.bytes == 0 {
            if let Some(w) = self.file.take() {
                match w.into_inner() {
                    Ok(f) => self.file = Some(BufWriter::with_capacity(bytes, f)),
                    Err(e) => self.file = Some(e.into_inner()),
                }
            }
        }
    }

    fn with(dest: &Path, target: Target, file: File) -> Sink {
        Sink {
            dest: dest.to_path_buf(),
            target,
            file: Some(BufWriter::with_capacity(MAX_BUFFER as usize, file)),
            hasher: Sha256::new(),
            bytes: 0,
            committed: false,
            replace: true,
        }
    }

    /// As [`create`](Self::create), resumable: writes to `.NAME.part` beside `dest`,
    /// checkpoints every `every` bytes, and keeps what it holds when it ends without a
    /// commit. What an earlier resumable sink left there (as its journal records it) is
    /// kept and returned as the offer to make to the sender.
    pub fn resumable(dest: &Path, every: u64) -> Result<(Sink, Option<Offer>), String> {
        if is_stdout(dest) {
            return Err(
                "--resume keeps what arrived in a file beside --out; standard output has none"
                    .into(),
            );
        }
        if dest.file_name().is_none() {
            return Err(format!("{}: not a file name", dest.display()));
        }
        if check_destination(dest)? {
            return Ok((Self::null_device(dest)?, None));
        }
        let (part, journal) = journal::paths(dest);
        let at = |e: std::io::Error| format!("{}: cannot write: {e}", part.display());
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&part)
            .map_err(at)?;
        if !lock(&file) && cfg!(target_os = "linux") {
            return Err(format!(
                "{}: another receiver is writing it",
                part.display()
            ));
        }
        let (hasher, offer) = crate::resume::reopen(&file, &part, journal::read(&journal))?;
        let mut s = Self::with(dest, Target::Through, file);
        s.hasher = hasher;
        s.bytes = offer.map_or(0, |o| o.offset);
        s.target = Target::Resumable(Resumable {
            part,
            journal,
            total: None,
            offer,
            checkpointed: s.bytes,
            every: every.max(1),
            discarded: false,
        });
        Ok((s, offer))
    }

    /// The stream's header arrived: append after what was offered, or start over.
    pub fn begin(&mut self, h: Header) -> Result<(), String> {
        let offered = match &self.target {
            Target::Resumable(r) => r.offer,
            _ => None,
        };
        match offered {
            Some(o) if h.start == o.offset && h.total == o.total => {}
            _ if h.start == 0 => self.restart()?,
            _ => {
                return Err(format!(
                    "the sender resumes at byte {} of {}, which was not offered",
                    h.start, h.total
                ))
            }
        }
        // A stream of unknown length is not resumable: no checkpoints.
        if let Target::Resumable(r) = &mut self.target {
            r.total = (h.total != crate::resume::UNKNOWN_LENGTH).then_some(h.total);
        }
        Ok(())
    }

    /// A stream without a header (a peer other than cmtlab): it starts at the first
    /// byte, and is not resumable (no checkpoints without the file's length).
    pub fn begin_unframed(&mut self) -> Result<(), String> {
        self.restart()
    }

    /// Drops whatever was held (the sender starts from the first byte), what waits in
    /// the writer's buffer too.
    fn restart(&mut self) -> Result<(), String> {
        if self.bytes > 0 {
            let w = self.file.take().ok_or("the file was already committed")?;
            let cap = w.capacity();
            let (mut f, _dropped) = w.into_parts();
            let at = |e: std::io::Error| format!("{}: cannot write: {e}", self.dest.display());
            crate::resume::truncate(&mut f, 0).map_err(at)?;
            self.file = Some(BufWriter::with_capacity(cap, f));
            self.hasher = Sha256::new();
            self.bytes = 0;
            if let Target::Resumable(r) = &mut self.target {
                r.checkpointed = 0;
            }
        }
        Ok(())
    }

    /// Appends in-order data.
    pub fn write(&mut self, data: &[u8]) -> Result<(), String> {
        if let Target::Stdout(p) = &mut self.target {
            p.send(bytes::Bytes::copy_from_slice(data))?;
        } else {
            let f = self.file.as_mut().ok_or("the file was already committed")?;
            f.write_all(data)
                .map_err(|e| format!("{}: cannot write: {e}", self.dest.display()))?;
        }
        self.hasher.update(data);
        self.bytes += data.len() as u64;
        if let Target::Resumable(r) = &self.target {
            if self.bytes - r.checkpointed >= r.every {
                self.checkpoint()?;
            }
        }
        Ok(())
    }

    /// Makes what was written so far durable and records it in the journal (resumable
    /// sinks; others have nothing to record).
    pub fn checkpoint(&mut self) -> Result<(), String> {
        let (Target::Resumable(r), Some(f)) = (&mut self.target, self.file.as_mut()) else {
            return Ok(());
        };
        let Some(total) = r.total else {
            return Ok(());
        };
        let at = |e: std::io::Error| format!("{}: cannot write: {e}", r.part.display());
        f.flush().map_err(at)?;
        f.get_ref().sync_data().map_err(at)?;
        journal::write(
            &r.journal,
            Record {
                total,
                offset: self.bytes,
            },
        )?;
        r.checkpointed = self.bytes;
        Ok(())
    }

    /// What a resumable sink holds now, as an offer to a sender that resumes (`None`
    /// for other sinks, or before the stream's header gave the file's length).
    pub fn live_offer(&self) -> Option<Offer> {
        match &self.target {
            Target::Resumable(r) => r.total.map(|total| Offer {
                total,
                offset: self.bytes,
                prefix_sha256: self.hasher.clone().finalize().into(),
            }),
            _ => None,
        }
    }

    /// Another association takes over the file (its sender went silent and came back):
    /// what was written is made durable, and a resumable sink offers all of it — the
    /// next stream's header may start there, or at the first byte.
    pub fn hand_over(&mut self) -> Result<(), String> {
        self.checkpoint()?;
        let offer = self.live_offer();
        if let Target::Resumable(r) = &mut self.target {
            r.offer = offer;
        }
        Ok(())
    }

    /// What was received is wrong (it does not match the sender's digest): a resumable
    /// sink keeps nothing of it.
    pub fn discard(&mut self) {
        if let Target::Resumable(r) = &mut self.target {
            r.discarded = true;
        }
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The SHA-256 (hex) of what was written so far.
    pub fn digest(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }

    /// Makes the file durable under its name; returns its SHA-256 (hex).
    pub fn commit(&mut self) -> Result<String, String> {
        if let Target::Stdout(p) = &mut self.target {
            p.finish()?;
            self.committed = true;
            return Ok(self.digest());
        }
        let at = |e: std::io::Error| format!("{}: cannot store: {e}", self.dest.display());
        let f = self.file.take().ok_or("the file was already committed")?;
        let f = f.into_inner().map_err(|e| at(e.into_error()))?;
        let tmp = match &self.target {
            Target::Temporary(tmp) => tmp,
            Target::Resumable(r) => &r.part,
            Target::Through | Target::Stdout(_) => {
                self.committed = true;
                return Ok(self.digest());
            }
        };
        f.sync_all().map_err(at)?;
        match self.replace {
            true => std::fs::rename(tmp, &self.dest).map_err(at)?,
            false => rename_new(tmp, &self.dest).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => format!(
                    "{}: a file of that name appeared during the transfer; it stays",
                    self.dest.display()
                ),
                _ => at(e),
            })?,
        }
        drop(f); // the lock goes with it, after the rename
        self.committed = true;
        if let Target::Resumable(r) = &self.target {
            let _ = std::fs::remove_file(&r.journal);
        }
        if let Some(dir) = self.dest.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir).and_then(|d| d.sync_all()).map_err(at)?;
        }
        Ok(self.digest())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        let keep = match &self.target {
            Target::Temporary(tmp) => {
                let _ = std::fs::remove_file(tmp);
                return;
            }
            Target::Through | Target::Stdout(_) => return,
            Target::Resumable(r) => !r.discarded,
        };
        if keep {
            // Best effort: what was received since the last checkpoint is kept too.
            let _ = self.checkpoint();
        } else if let Target::Resumable(r) = &self.target {
            let _ = std::fs::remove_file(&r.part);
            let _ = std::fs::remove_file(&r.journal);
        }
    }
}

/// Bytes of delivered data that may wait for standard output's reader.
pub const PIPE_BUFFERED: u64 = 4 << 20;

/// Whether `dest` names standard output (`-`).
pub fn is_stdout(dest: &Path) -> bool {
    dest.as_os_str() == "-"
}

/// Checks the destination (module doc): `Ok(true)` for the null device, `Ok(false)` for
/// a regular file or none, an error for anything else.
fn check_destination(dest: &Path) -> Result<bool, String> {
    match std::fs::metadata(dest) {
        Ok(m) if is_null_device(&m) => Ok(true),
        Ok(m) if !m.is_file() => Err(format!(
            "{}: is a {}, not a regular file (give a file name, or /dev/null to discard the data)",
            dest.display(),
            kind_of(&m)
        )),
        _ => Ok(false),
    }
}

/// Takes the advisory lock that marks a temporary file as a live receiver's (held
/// until the file is closed); `false` when another process holds it.
#[cfg(target_os = "linux")]
fn lock(f: &File) -> bool {
    use rustix::fs::{flock, FlockOperation};
    flock(f, FlockOperation::NonBlockingLockExclusive).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn lock(_: &File) -> bool {
    false
}

/// Removes the temporary files starting with `prefix` in `dir` that no live receiver
/// holds (their lock can be taken). Errors only mean a file stays.
fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let stale = e.file_name().to_str().is_some_and(|n| {
            n.strip_prefix(prefix)
                .is_some_and(|rest| rest.split_once('-').is_some())
        }) && e.file_type().is_ok_and(|t| t.is_file())
            && File::open(e.path()).is_ok_and(|f| lock(&f));
        if stale {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Renames `from` to `to` unless `to` exists (then `AlreadyExists`), atomically.
#[cfg(target_os = "linux")]
fn rename_new(from: &Path, to: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    Ok(renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE)?)
}

/// Elsewhere: a hard link (which fails when `to` exists), then the old name removed.
#[cfg(not(target_os = "linux"))]
fn rename_new(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
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

    #[test]
    fn a_device_other_than_the_null_device_is_refused_and_the_null_device_written_through() {
        let e = Sink::create(Path::new("/dev/zero")).err().unwrap();
        assert!(e.contains("/dev/zero: is a character device"), "{e}");
        let mut s = Sink::create(Path::new("/dev/null")).unwrap();
        s.write(b"gone").unwrap();
        assert_eq!(s.commit().unwrap(), hex(&Sha256::digest(b"gone")));
        let m = std::fs::metadata("/dev/null").unwrap();
        assert!(is_null_device(&m), "/dev/null is still the device");
    }

    #[test]
    fn a_temporary_file_nobody_holds_is_removed_and_a_live_ones_kept() {
        let d = dir("stale");
        let dest = d.join("out.bin");
        // A killed receiver's file (unlocked), a live one's (locked by this process
        // through another open file description), and an unrelated file.
        let stale = d.join(".out.bin.part-999999-00000000000000aa");
        std::fs::write(&stale, b"partial").unwrap();
        let live = Sink::create(&dest).unwrap();
        let Target::Temporary(live_tmp) = &live.target else {
            panic!("a temporary file")
        };
        let other = d.join(".other.bin.part-1-2");
        std::fs::write(&other, b"x").unwrap();
        let next = Sink::create(&dest).unwrap();
        assert!(!stale.exists(), "the killed receiver's file is gone");
        assert!(live_tmp.exists(), "a live receiver's file stays");
        assert!(other.exists(), "another destination's file stays");
        drop((live, next));
    }
}
