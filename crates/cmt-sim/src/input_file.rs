//! Input files read with a bound: a scenario, sweep or study file, or a capacity
//! trace, that is larger than any real one (a device such as `/dev/zero`, a file
//! given by mistake) is refused once the bound is passed, instead of being read until
//! memory runs out.

use std::io::Read;
use std::path::Path;

/// Most bytes of a scenario, sweep or study file (TOML text).
pub const MAX_TEXT: u64 = 4 << 20;
/// Most bytes of a capacity trace (Mahimahi: one line per 1500-byte opportunity; the
/// cellular traces in `traces/` are 0.3–1.2 MB).
pub const MAX_TRACE: u64 = 256 << 20;

/// The text of `path`, at most `max` bytes of UTF-8; the error says what is wrong
/// (without the path, which callers name their own way).
pub fn read_text(path: &Path, max: u64) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > max {
        return Err(format!(
            "larger than {} MiB: not a file of this kind",
            max >> 20
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_device_is_refused_at_the_bound() {
        let e = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        let e = read_text(Path::new("/no/such/file"), 1 << 20).unwrap_err();
        assert!(e.contains("No such file"), "{e}");
    }
}
