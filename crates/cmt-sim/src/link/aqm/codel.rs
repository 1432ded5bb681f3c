//! CoDel, controlled delay (Nichols and Jacobson, "Controlling Queue Delay", ACM Queue
//! 2012; RFC 8289): a queue is judged by its packets' sojourn time, not its length.
//! When the sojourn has stayed above `target` for a whole `interval`, the queue enters
//! its dropping state and drops one packet at the head, then the next after
//! `interval / sqrt(count)` while the sojourn stays above `target`, so the drop rate
//! rises until the senders slow down; it leaves the state as soon as a packet's sojourn
//! falls below `target` or less than one packet remains. Re-entering soon after leaving
//! resumes from the previous drop rate (RFC 8289 §5.5).

use std::collections::VecDeque;

use cmt_core::{Duration, Time};

use super::Queued;
use crate::link::Carried;

/// CoDel's two parameters (RFC 8289 §4.3–4.4; defaults 5 ms and 100 ms).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay.
    pub target: Duration,
    /// The window over which the delay must stay above `target` before dropping: on
    /// the order of a worst-case round trip.
    pub interval: Duration,
    /// Mark ECN-capable packets Congestion Experienced where CoDel would drop them
    /// (RFC 8289 §5, as Linux's `ecn` option; off by default).
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
        }
    }
}

/// Bytes below which a queue is never dropped from (RFC 8289 §5.2: less than one
/// maximum-size packet queued cannot be a standing queue).
const MAX_PACKET: u64 = 1514;

/// The state of one CoDel queue (RFC 8289 §5), its packets kept by the caller.
#[derive(Clone, Debug, Default)]
pub struct Codel {
    /// When the sojourn time went above target and stayed there, plus `interval`
    /// (`None`: it is below target).
    first_above: Option<Time>,
    /// When the next drop is due in the dropping state.
    drop_next: Time,
    /// Drops since entering the dropping state (sets the drop rate).
    count: u32,
    /// `count` when the dropping state was last left.
    last_count: u32,
    /// In the dropping state.
    dropping: bool,
    /// Packets marked instead of dropped.
    pub(crate) marks: u64,
}

impl Codel {
    /// The packet to send from `q` (holding `bytes`), after the drops CoDel decides,
    /// which go to `dropped`.
    pub fn dequeue<P: Carried>(
        &mut self,
        p: &CodelParams,
        now: Time,
        q: &mut VecDeque<Queued<P>>,
        bytes: &mut u64,
        dropped: &mut Vec<P>,
    ) -> Option<P> {
        let (first, ok_to_drop) = self.do_dequeue(p, now, q, bytes);
        let Some(mut pkt) = first else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if self.marks(p, &mut pkt) {
                    // Marked, it is sent; the next signal is due by the control law.
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    return Some(pkt);
                }
                dropped.push(pkt);
                let (next, ok) = self.do_dequeue(p, now, q, bytes);
                let Some(next) = next else {
                    self.dropping = false;
                    return None;
                };
                pkt = next;
                if ok {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            let next = if self.marks(p, &mut pkt) {
                Some(pkt)
            } else {
                dropped.push(pkt);
                self.do_dequeue(p, now, q, bytes).0
            };
            self.dropping = true;
            // Re-entering soon after leaving: start from the drop rate reached then.
            let delta = self.count.saturating_sub(self.last_count);
            let recent = now.saturating_since(self.drop_next) < p.interval * 16;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = control_law(now, p.interval, self.count);
            self.last_count = self.count;
            return next;
        }
        Some(pkt)
    }

    /// CoDel signals congestion on `pkt`: it marks it instead of dropping it when ECN is
    /// on and the packet is ECN-capable, counting the mark.
    fn marks<P: Carried>(&mut self, p: &CodelParams, pkt: &mut P) -> bool {
        if p.ecn && pkt.ecn_capable() {
            pkt.mark_ce();
            self.marks += 1;
            return true;
        }
        false
    }

    /// Takes the head packet; whether CoDel may drop it (its sojourn has been above
    /// target for an interval).
    fn do_dequeue<P: Carried>(
        &mut self,
        p: &CodelParams,
        now: Time,
        q: &mut VecDeque<Queued<P>>,
        bytes: &mut u64,
    ) -> (Option<P>, bool) {
        let Some(head) = q.pop_front() else {
            self.first_above = None;
            return (None, false);
        };
        *bytes -= u64::from(head.pkt.wire_size());
        let sojourn = now.saturating_since(head.at);
        if sojourn < p.target || *bytes <= MAX_PACKET {
            self.first_above = None;
            return (Some(head.pkt), false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + p.interval);
                (Some(head.pkt), false)
            }
            Some(t) => (Some(head.pkt), now >= t),
        }
    }
}

/// When the next drop is due: `interval / sqrt(count)` after `t` (RFC 8289 §5.4).
fn control_law(t: Time, interval: Duration, count: u32) -> Time {
    let gap = interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
    t + Duration::from_nanos(gap as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct P(u32);
    impl Carried for P {
        fn wire_size(&self) -> u32 {
            self.0
        }
        fn flow(&self) -> u32 {
            0
        }
    }

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    /// A 1,500-byte packet queued at `t` ms.
    fn push(q: &mut VecDeque<Queued<P>>, bytes: &mut u64, t: u64) {
        q.push_back(Queued {
            pkt: P(1500),
            at: ms(t),
        });
        *bytes += 1500;
    }

    #[test]
    fn the_drop_spacing_follows_the_inverse_square_root_of_the_count() {
        let i = Duration::from_millis(100);
        let t0 = ms(1000);
        assert_eq!(control_law(t0, i, 1), ms(1100));
        assert_eq!(control_law(t0, i, 4), ms(1050));
        assert_eq!(control_law(t0, i, 100), ms(1010));
    }

    /// A queue whose sojourn stays above target: nothing is dropped for the first
    /// interval, then one drop, then drops at interval/sqrt(2), interval/sqrt(3), ...
    #[test]
    fn a_standing_queue_is_dropped_from_after_an_interval_at_the_control_laws_pace() {
        let p = CodelParams::default();
        let mut c = Codel::default();
        let mut q = VecDeque::new();
        let mut bytes = 0u64;
        let mut drops_at = Vec::new();
        // One 1500-byte packet arrives and one leaves every ms; each waited 20 ms.
        for t in 0..400u64 {
            push(&mut q, &mut bytes, t);
            if t < 20 {
                continue;
            }
            let mut dropped = Vec::new();
            let out = c.dequeue(&p, ms(t), &mut q, &mut bytes, &mut dropped);
            assert!(out.is_some());
            for _ in dropped {
                drops_at.push(t);
            }
        }
        // Above target from t = 20 ms: the first drop one interval later.
        assert_eq!(drops_at[0], 120);
        let gaps: Vec<u64> = drops_at.windows(2).map(|w| w[1] - w[0]).collect();
        // 100/sqrt(1), 100/sqrt(2), 100/sqrt(3), ... ms, on the 1 ms grid.
        assert_eq!(&gaps[..3], &[100, 71, 58]);
    }

    #[test]
    fn a_queue_below_target_or_under_one_packet_is_never_dropped_from() {
        let p = CodelParams::default();
        let mut c = Codel::default();
        let mut q = VecDeque::new();
        let mut bytes = 0u64;
        for t in 0..1000u64 {
            // Sojourn 4 ms: below target.
            push(&mut q, &mut bytes, t);
            if t >= 4 {
                let mut dropped = Vec::new();
                c.dequeue(&p, ms(t), &mut q, &mut bytes, &mut dropped);
                assert!(dropped.is_empty());
            }
        }
        // One packet queued a long time: less than MAX_PACKET behind it, kept.
        let mut q = VecDeque::from([Queued {
            pkt: P(1500),
            at: ms(0),
        }]);
        let mut bytes = 1500;
        let mut dropped = Vec::new();
        for t in [2000, 2200, 2400] {
            c.dequeue(&p, ms(t), &mut q, &mut bytes, &mut dropped);
        }
        assert!(dropped.is_empty());
    }
}
