//! A path's sent packets matched to its arrivals: which were lost, and the one-way
//! delay (up to the two clocks' offset) of each that arrived. Packets are matched by
//! the TSN of their first chunk on the same path. A TSN sent k times on a path and
//! arriving there j times lost k − j of its transmissions, taken to be the earliest
//! (a retransmission follows a loss); the delay is only read for TSNs sent once.
//! Packets sent after the last one that arrived are not judged: the traces may end
//! while they are in flight. Nor are those whose TSN the receiver's trace has no
//! record of though it was acknowledged ([`PathObs::unrecorded`]).

use std::collections::BTreeMap;

use super::observed::{PathObs, Pkt};

/// What became of one sent packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fate {
    /// It arrived, this many seconds (plus the clock offset) after it left.
    Arrived(f64),
    /// It arrived, but which of its TSN's transmissions did is unknown.
    ArrivedSomeTime,
    /// It never arrived.
    Lost,
    /// Not judged: it never arrived, and neither did anything sent after it on the
    /// path (still in flight when the traces end: a simulated run cut at its
    /// duration); or its TSN was acknowledged but the receiver's trace lacks its record.
    Unknown,
}

/// The fate of each of `p.sent` (same order), and for each of `p.arrived` the index in
/// `p.sent` of the packet it was, when known.
pub fn match_path(p: &PathObs) -> (Vec<Fate>, Vec<Option<usize>>) {
    let mut arrivals: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for a in &p.arrived {
        arrivals.entry(a.tsn).or_default().push(a.t);
    }
    let mut sends: BTreeMap<u64, usize> = BTreeMap::new();
    for s in &p.sent {
        *sends.entry(s.tsn).or_default() += 1;
    }
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    let mut fates: Vec<Fate> = p
        .sent
        .iter()
        .map(|s| {
            let k = seen.entry(s.tsn).or_default();
            let nth = *k;
            *k += 1;
            let got = arrivals.get(&s.tsn).map_or(&[][..], Vec::as_slice);
            let lost = sends[&s.tsn].saturating_sub(got.len());
            if p.unrecorded.contains(&s.tsn) {
                Fate::Unknown
            } else if nth < lost {
                Fate::Lost
            } else if sends[&s.tsn] == 1 {
                Fate::Arrived(got[0] - s.t)
            } else {
                Fate::ArrivedSomeTime
            }
        })
        .collect();
    let last_arrived = fates.iter().rposition(|f| *f != Fate::Lost);
    for f in fates.iter_mut().skip(last_arrived.map_or(0, |i| i + 1)) {
        *f = Fate::Unknown;
    }
    let once: BTreeMap<u64, usize> = p
        .sent
        .iter()
        .enumerate()
        .filter(|(_, s)| sends[&s.tsn] == 1)
        .map(|(i, s)| (s.tsn, i))
        .collect();
    let sent_at = p
        .arrived
        .iter()
        .map(|a: &Pkt| {
            let first = arrivals.get(&a.tsn).is_some_and(|v| v[0] == a.t);
            once.get(&a.tsn).copied().filter(|_| first)
        })
        .collect();
    (fates, sent_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(t: f64, tsn: u64) -> Pkt {
        Pkt {
            t,
            tsn,
            bytes: 1000,
            chunks: 1,
        }
    }

    #[test]
    fn a_tsn_sent_twice_and_received_once_lost_its_first_transmission() {
        let p = PathObs {
            sent: vec![
                pkt(0.0, 1),
                pkt(0.1, 2),
                pkt(0.5, 1),
                pkt(0.6, 3),
                pkt(0.7, 4),
            ],
            arrived: vec![pkt(0.15, 2), pkt(0.55, 1), pkt(0.75, 4)],
            ..PathObs::default()
        };
        let (fates, sent_at) = match_path(&p);
        assert_eq!(fates[0], Fate::Lost);
        assert!(matches!(fates[1], Fate::Arrived(d) if (d - 0.05).abs() < 1e-9));
        assert_eq!(fates[2], Fate::ArrivedSomeTime);
        assert_eq!(fates[3], Fate::Lost);
        assert_eq!(sent_at, vec![Some(1), None, Some(4)]);
        // Nothing sent after the last arrival is judged.
        let mut p = p;
        p.sent.push(pkt(0.8, 5));
        assert_eq!(match_path(&p).0[5], Fate::Unknown);
        // Nor a packet whose arrival record is missing: not lost, not judged.
        p.unrecorded.insert(3);
        assert_eq!(match_path(&p).0[3], Fate::Unknown);
    }
}
