//! What a calibration reads: the per-packet traces (`--trace FILE.csv`) of a transfer's
//! two ends, or one simulated run's trace that holds both, turned into per-path packet
//! lists. Rows are those of the packet trace's CSV form (docs/metrics.md): a DATA packet
//! is the run of chunk rows an end wrote at one instant for one path; a SACK's arrival
//! at the sender is one `ack` row carrying its cumulative TSN.
//!
//! The two ends of a real transfer number paths independently and name them
//! `local>remote`; a receiver's path `b>a` is the sender's `a>b`. Times are each end's
//! own (seconds since it started): only differences on one end, or on one path across
//! the two ends up to a constant offset, mean anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One DATA packet as one end saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pkt {
    /// Seconds on that end's clock.
    pub t: f64,
    /// The TSN of its first chunk.
    pub tsn: u64,
    /// User bytes of its chunks.
    pub bytes: u64,
    /// Chunks in it.
    pub chunks: u32,
}

/// One path's packets at both ends (indices are the sender's).
#[derive(Clone, Debug, Default)]
pub struct PathObs {
    /// The sender's name of the path.
    pub name: String,
    /// DATA packets the sender sent on it (new, copies and retransmissions), in order.
    pub sent: Vec<Pkt>,
    /// DATA packets that arrived at the receiver on it, in order.
    pub arrived: Vec<Pkt>,
    /// SACKs that arrived at the sender on it: (time, cumulative TSN).
    pub acks: Vec<(f64, u64)>,
    /// TSNs sent on it that the receiver acknowledged but its trace never shows
    /// arriving, on any path: their records are missing (arrivals the receiver
    /// returned with SACKs that were lost), so their packets are not judged.
    pub unrecorded: BTreeSet<u64>,
}

/// Both ends of one transfer.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// Per path of the sender.
    pub paths: Vec<PathObs>,
}

#[derive(Default)]
struct Side {
    names: BTreeMap<usize, String>,
    /// (path, packet) in file order.
    data: Vec<(usize, Pkt)>,
    acks: Vec<(usize, f64, u64)>,
}

/// The row's field `i`, parsed, or an error naming the file and line.
fn field<T: std::str::FromStr>(rec: &csv::StringRecord, i: usize, at: &str) -> Result<T, String> {
    let v = rec.get(i).unwrap_or("");
    v.parse()
        .map_err(|_| format!("{at}: column {} is `{v}`, not a number", i + 1))
}

/// The SCTP bytes of a packet holding `chunks` DATA chunks of `bytes` user bytes in all
/// (common header, chunk headers, padding at most 3 bytes a chunk: taken as none).
pub fn sctp_bytes(chunks: u32, bytes: u64) -> u64 {
    12 + 16 * chunks as u64 + bytes
}

/// Appends the chunk `(t, path, tsn, bytes)` to `side`, joining it to the packet before
/// when that one was written at the same instant on the same path and the two fit one
/// packet of `max_sctp` bytes (packets sent in one burst share an instant too).
fn add_chunk(side: &mut Side, path: usize, t: f64, tsn: u64, bytes: u64, max_sctp: u64) {
    if let Some((p, last)) = side.data.last_mut() {
        let fits = sctp_bytes(last.chunks + 1, last.bytes + bytes) <= max_sctp;
        if *p == path && last.t == t && fits {
            last.bytes += bytes;
            last.chunks += 1;
            return;
        }
    }
    side.data.push((
        path,
        Pkt {
            t,
            tsn,
            bytes,
            chunks: 1,
        },
    ));
}

/// Reads one trace file into the sender's and the receiver's rows.
fn read_file(
    file: &Path,
    max_sctp: u64,
    sender: &mut Side,
    receiver: &mut Side,
) -> Result<(), String> {
    let name = file.display().to_string();
    let mut rd = csv::Reader::from_path(file).map_err(|e| format!("{name}: {e}"))?;
    let header = rd.headers().map_err(|e| format!("{name}: {e}"))?.clone();
    let want = cmt_sim::packet_trace::COLUMNS;
    if header.len() < want.len() || header.iter().zip(want).any(|(a, b)| a != b) {
        return Err(format!(
            "{name}: not a cmtlab packet trace in CSV (its header should begin `{}`)",
            want[..4].join(",")
        ));
    }
    for (line, rec) in rd.records().enumerate() {
        let at = format!("{name}:{}", line + 2);
        let rec = rec.map_err(|e| format!("{at}: {e}"))?;
        let (side, dir, kind) = (&rec[1], &rec[4], &rec[5]);
        let t: f64 = field(&rec, 0, &at)?;
        let path: usize = field(&rec, 2, &at)?;
        let end = match side {
            "sender" => &mut *sender,
            "receiver" => &mut *receiver,
            _ => continue,
        };
        end.names.entry(path).or_insert_with(|| rec[3].to_string());
        let data_row = match (side, dir, kind) {
            ("sender", "data", "send" | "retransmit") | ("receiver", "data", "arrive") => true,
            ("sender", "ack", "arrive") => {
                end.acks.push((path, t, field(&rec, 7, &at)?));
                false
            }
            _ => false,
        };
        if data_row {
            let (tsn, bytes) = (field(&rec, 7, &at)?, field(&rec, 8, &at)?);
            add_chunk(end, path, t, tsn, bytes, max_sctp);
        }
    }
    Ok(())
}

/// The sender's path index of the receiver's path named `name`: the one named with the
/// two addresses swapped, else the one of the same name (a simulated run's).
fn sender_index(sender: &BTreeMap<usize, String>, name: &str) -> Option<usize> {
    let swapped = name
        .split_once('>')
        .map(|(a, b)| format!("{b}>{a}"))
        .unwrap_or_default();
    sender
        .iter()
        .find(|(_, n)| **n == swapped)
        .or_else(|| sender.iter().find(|(_, n)| *n == name))
        .map(|(k, _)| *k)
}

/// The sender's path that sent most of the TSNs that arrived on the receiver's path `r`
/// (a NAT or a relay on the way changed the addresses, so names do not match), if any
/// did.
fn by_tsns(s: &Side, r: &Side, path: usize) -> Option<usize> {
    let arrived: BTreeSet<u64> = (r.data.iter())
        .filter(|(p, _)| *p == path)
        .map(|(_, k)| k.tsn)
        .collect();
    let mut count: BTreeMap<usize, usize> = BTreeMap::new();
    for (p, k) in &s.data {
        if arrived.contains(&k.tsn) {
            *count.entry(*p).or_default() += 1;
        }
    }
    count
        .into_iter()
        .max_by_key(|(p, n)| (*n, std::cmp::Reverse(*p)))
        .map(|(p, _)| p)
}

/// Reads the traces `files` (one holding both ends, or one per end, in any order) of a
/// transfer whose SCTP packets had at most `max_sctp` bytes.
pub fn read(files: &[&Path], max_sctp: u64) -> Result<Observed, String> {
    let (mut s, mut r) = (Side::default(), Side::default());
    for f in files {
        read_file(f, max_sctp, &mut s, &mut r)?;
    }
    if s.data.is_empty() {
        return Err("no DATA sent in the traces: give the sender's trace (its `--trace`)".into());
    }
    if r.data.is_empty() {
        return Err(
            "no DATA arrivals in the traces: give the receiver's trace too (`recv --trace`)".into(),
        );
    }
    let map: BTreeMap<usize, usize> = (r.names.iter())
        .filter_map(|(i, name)| {
            let by_name = sender_index(&s.names, name);
            Some((*i, by_name.or_else(|| by_tsns(&s, &r, *i))?))
        })
        .collect();
    let n = s.names.keys().max().map_or(0, |m| m + 1);
    let mut paths: Vec<PathObs> = (0..n)
        .map(|i| PathObs {
            name: s.names.get(&i).cloned().unwrap_or_default(),
            ..PathObs::default()
        })
        .collect();
    for (p, pkt) in s.data {
        paths[p].sent.push(pkt);
    }
    for (p, t, cum) in s.acks {
        if let Some(o) = paths.get_mut(p) {
            o.acks.push((t, cum));
        }
    }
    for (p, pkt) in r.data {
        if let Some(o) = map.get(&p).and_then(|q| paths.get_mut(*q)) {
            o.arrived.push(pkt);
        }
    }
    mark_unrecorded(&mut paths);
    Ok(Observed { paths })
}

/// Fills each path's [`PathObs::unrecorded`]: a TSN at or below the highest cumulative
/// acknowledgement arrived, so if no arrival on any path holds it (as the first chunk
/// or one after it), the receiver's trace lacks its record.
fn mark_unrecorded(paths: &mut [PathObs]) {
    let covered: BTreeSet<u64> = paths
        .iter()
        .flat_map(|p| &p.arrived)
        .flat_map(|a| a.tsn..a.tsn + a.chunks.max(1) as u64)
        .collect();
    let Some(acked) = paths.iter().flat_map(|p| &p.acks).map(|a| a.1).max() else {
        return;
    };
    for p in paths {
        p.unrecorded = (p.sent.iter().map(|s| s.tsn))
            .filter(|t| *t <= acked && !covered.contains(t))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_acknowledged_tsn_with_no_arrival_anywhere_is_unrecorded() {
        let pkt = |tsn, chunks| Pkt {
            t: 0.0,
            tsn,
            bytes: 1000,
            chunks,
        };
        let mut paths = vec![
            PathObs {
                // 2 went on path 0, 3 was lost there and resent on path 1.
                sent: vec![pkt(1, 1), pkt(2, 1), pkt(3, 1), pkt(6, 1)],
                arrived: vec![pkt(1, 1)],
                acks: vec![(1.0, 4)],
                ..PathObs::default()
            },
            PathObs {
                // 4 arrived inside the packet led by 3.
                sent: vec![pkt(3, 2)],
                arrived: vec![pkt(3, 2)],
                ..PathObs::default()
            },
        ];
        mark_unrecorded(&mut paths);
        // 2 was acknowledged (4 is the cumulative ack) and never recorded arriving;
        // 3 arrived on path 1; 6 is beyond the acknowledgement.
        assert_eq!(paths[0].unrecorded, BTreeSet::from([2]));
        assert!(paths[1].unrecorded.is_empty());
    }

    #[test]
    fn a_receivers_path_is_the_senders_with_the_addresses_swapped() {
        let s: BTreeMap<usize, String> = [(0, "a:1>b:2".into()), (1, "c:1>d:2".into())].into();
        assert_eq!(sender_index(&s, "d:2>c:1"), Some(1));
        assert_eq!(sender_index(&s, "a:1>b:2"), Some(0));
        assert_eq!(sender_index(&s, "other"), None);
    }

    #[test]
    fn a_path_whose_addresses_changed_on_the_way_is_matched_by_its_tsns() {
        let pkt = |tsn| Pkt {
            t: 0.0,
            tsn,
            bytes: 1000,
            chunks: 1,
        };
        let s = Side {
            data: vec![
                (0, pkt(1)),
                (1, pkt(2)),
                (1, pkt(3)),
                (0, pkt(4)),
                (1, pkt(4)),
            ],
            ..Side::default()
        };
        // The receiver's path 0 got 2, 3 and 4: path 1 sent all three, path 0 one.
        let r = Side {
            data: vec![(0, pkt(2)), (1, pkt(1)), (0, pkt(3)), (0, pkt(4))],
            ..Side::default()
        };
        assert_eq!(by_tsns(&s, &r, 0), Some(1));
        assert_eq!(by_tsns(&s, &r, 1), Some(0));
        assert_eq!(by_tsns(&s, &r, 2), None);
    }
}
