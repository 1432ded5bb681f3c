//! What a sender sends: bytes in memory or a file read as the transfer goes, handed out
//! in pieces and hashed (SHA-256) on the way, so a sender never holds more than its
//! window of a file.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::sink::hex;

enum Origin {
    Memory(Bytes),
    File(File, PathBuf),
}

/// A source of data to send.
pub struct Source {
    from: Origin,
    len: u64,
    read: u64,
    hasher: Sha256,
}

impl Source {
    /// Bytes already in memory.
    pub fn memory(data: Bytes) -> Source {
        Source {
            len: data.len() as u64,
            from: Origin::Memory(data),
            read: 0,
            hasher: Sha256::new(),
        }
    }

    /// A file, opened now (so a missing file fails before the handshake).
    pub fn file(path: &Path) -> Result<Source, String> {
        let at = |e: std::io::Error| format!("{}: cannot read: {e}", path.display());
        let f = File::open(path).map_err(at)?;
        let meta = f.metadata().map_err(at)?;
        if !meta.is_file() {
            return Err(format!("{}: not a regular file", path.display()));
        }
        Ok(Source {
            len: meta.len(),
            from: Origin::File(f, path.to_path_buf()),
            read: 0,
            hasher: Sha256::new(),
        })
    }

    /// Total bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the source has no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes handed out so far.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// Everything was handed out.
    pub fn is_done(&self) -> bool {
        self.read >= self.len
    }

    /// The next piece of at most `max` bytes (fewer only at the end). A file that
    /// shrank while being sent is an error, not a short transfer.
    pub fn next_piece(&mut self, max: usize) -> Result<Bytes, String> {
        let n = (self.len - self.read).min(max as u64) as usize;
        let piece = match &mut self.from {
            Origin::Memory(b) => b.slice(self.read as usize..self.read as usize + n),
            Origin::File(f, path) => {
                let mut buf = vec![0u8; n];
                f.read_exact(&mut buf)
                    .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
                Bytes::from(buf)
            }
        };
        self.hasher.update(&piece);
        self.read += n as u64;
        Ok(piece)
    }

    /// Passes over the first `n` bytes (the part a resuming receiver holds), hashing
    /// them: the next piece starts at `n`, and [`sha256`](Self::sha256) still covers the
    /// whole file. Returns whether those bytes have the SHA-256 `expect`. Only at the
    /// start.
    pub fn skip_verified(&mut self, n: u64, expect: &[u8; 32]) -> Result<bool, String> {
        if self.read != 0 || n > self.len {
            return Err(format!("cannot resume at byte {n} of {}", self.len));
        }
        let h = match &mut self.from {
            Origin::Memory(b) => Sha256::new_with_prefix(&b[..n as usize]),
            Origin::File(f, path) => crate::resume::hash_prefix(f, n)
                .map_err(|e| format!("{}: cannot read: {e}", path.display()))?,
        };
        let same = h.clone().finalize().as_slice() == expect;
        self.hasher = h;
        self.read = n;
        Ok(same)
    }

    /// SHA-256 (hex) of everything handed out.
    pub fn sha256(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_comes_out_in_pieces_with_the_hash_of_the_whole() {
        let p = std::env::temp_dir().join(format!("cmtlab-source-{}", std::process::id()));
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let mut s = Source::file(&p).unwrap();
        let mut got = Vec::new();
        while !s.is_done() {
            let b = s.next_piece(4096).unwrap();
            assert!(b.len() == 4096 || s.is_done());
            got.extend_from_slice(&b);
        }
        assert_eq!(got, data);
        assert_eq!(s.sha256(), hex(&Sha256::digest(&data)));
        let m = Source::memory(Bytes::from(data.clone()));
        assert_eq!(m.len(), 10_000);
        let e = Source::file(Path::new("/no/such/file")).err().unwrap();
        assert!(e.contains("/no/such/file: cannot read"), "{e}");
        let _ = std::fs::remove_file(&p);
    }
}
