//! A budget for what a listener sends to sources it knows nothing about: INIT ACKs
//! (several times the size of the INIT that asked for them), ABORTs answering packets
//! of no association (RFC 9260 §8.4) and ERRORs. Source addresses of such packets are
//! unproven, so without a budget a spoofed flood would turn the listener into an
//! amplifier aimed at whoever owns the spoofed address.
//!
//! Two token buckets of bytes: one per source address ([`SOURCE_BURST`], refilled at
//! [`SOURCE_RATE`]) and one for all sources together ([`GLOBAL_BURST`] at
//! [`GLOBAL_RATE`]); a reply goes out only when both hold its size. At most
//! [`MAX_SOURCES`] per-source buckets are kept (full ones are forgotten first: a full
//! bucket is what a new source gets anyway). Whatever a flood sends, the listener's
//! answers stay under `GLOBAL_BURST + GLOBAL_RATE × its duration`; a lone client's
//! INIT and its retransmissions are always answered.

use std::collections::BTreeMap;
use std::net::IpAddr;

use cmt_core::Time;

/// Bytes one source may be sent at once.
pub const SOURCE_BURST: f64 = 4096.0;
/// Bytes per second one source's budget refills (about two INIT ACKs a second).
pub const SOURCE_RATE: f64 = 1024.0;
/// Bytes all sources together may be sent at once.
pub const GLOBAL_BURST: f64 = 64.0 * 1024.0;
/// Bytes per second the shared budget refills.
pub const GLOBAL_RATE: f64 = 32.0 * 1024.0;
/// Per-source budgets kept at most.
pub const MAX_SOURCES: usize = 4096;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Time,
}

impl Bucket {
    fn full(burst: f64, now: Time) -> Bucket {
        Bucket {
            tokens: burst,
            at: now,
        }
    }

    /// Refills up to `burst` at `rate` per second.
    fn refill(&mut self, now: Time, burst: f64, rate: f64) {
        let dt = now.as_nanos().saturating_sub(self.at.as_nanos()) as f64 / 1e9;
        self.tokens = (self.tokens + dt * rate).min(burst);
        self.at = self.at.max(now);
    }
}

/// The reply budget of one listener.
#[derive(Debug)]
pub struct ReplyLimit {
    global: Bucket,
    per_source: BTreeMap<IpAddr, Bucket>,
    /// Replies refused so far.
    pub refused: u64,
}

impl Default for ReplyLimit {
    fn default() -> Self {
        ReplyLimit {
            global: Bucket::full(GLOBAL_BURST, Time::ZERO),
            per_source: BTreeMap::new(),
            refused: 0,
        }
    }
}

impl ReplyLimit {
    /// Whether a reply of `bytes` may go to `to` now; if so, it is charged.
    pub fn allow(&mut self, now: Time, to: IpAddr, bytes: usize) -> bool {
        let bytes = bytes as f64;
        self.global.refill(now, GLOBAL_BURST, GLOBAL_RATE);
        if !self.per_source.contains_key(&to) && self.per_source.len() >= MAX_SOURCES {
            self.forget_full(now);
        }
        let src = self
            .per_source
            .entry(to)
            .or_insert_with(|| Bucket::full(SOURCE_BURST, now));
        src.refill(now, SOURCE_BURST, SOURCE_RATE);
        if src.tokens < bytes || self.global.tokens < bytes {
            self.refused += 1;
            return false;
        }
        src.tokens -= bytes;
        self.global.tokens -= bytes;
        true
    }

    /// Forgets the budgets that refilled completely; if none did, the fullest.
    fn forget_full(&mut self, now: Time) {
        for b in self.per_source.values_mut() {
            b.refill(now, SOURCE_BURST, SOURCE_RATE);
        }
        self.per_source.retain(|_, b| b.tokens < SOURCE_BURST);
        if self.per_source.len() >= MAX_SOURCES {
            let fullest = self
                .per_source
                .iter()
                .max_by(|a, b| a.1.tokens.total_cmp(&b.1.tokens))
                .map(|(a, _)| *a);
            if let Some(a) = fullest {
                self.per_source.remove(&a);
            }
        }
    }
}

/// Whether `ip` names one host: replies never go to a multicast, broadcast or
/// unspecified source (RFC 9260 §8.4 (1)).
pub fn is_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v) => !(v.is_multicast() || v.is_broadcast() || v.is_unspecified()),
        IpAddr::V6(v) => !(v.is_multicast() || v.is_unspecified()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Time {
        Time::from_nanos((s * 1e9) as u64)
    }

    fn ip(i: u32) -> IpAddr {
        IpAddr::from(i.to_be_bytes())
    }

    #[test]
    fn one_source_gets_its_burst_then_its_rate() {
        let mut l = ReplyLimit::default();
        let sent = (0..100).filter(|_| l.allow(secs(0.0), ip(1), 500)).count();
        assert_eq!(sent, (SOURCE_BURST / 500.0) as usize);
        // Ten seconds later: ten seconds of refill, capped at the burst.
        let sent = (0..100).filter(|_| l.allow(secs(10.0), ip(1), 500)).count();
        assert_eq!(sent, (SOURCE_BURST / 500.0) as usize);
        // Another source is not charged for the first one.
        assert!(l.allow(secs(10.0), ip(2), 500));
    }

    #[test]
    fn a_flood_from_many_sources_gets_at_most_the_shared_budget() {
        let mut l = ReplyLimit::default();
        let (mut out, seconds) = (0.0, 20.0);
        // 100,000 spoofed sources, 5,000 a second, each asking once.
        for i in 0..100_000u32 {
            let now = secs(i as f64 * seconds / 100_000.0);
            if l.allow(now, ip(i), 450) {
                out += 450.0;
            }
        }
        let bound = GLOBAL_BURST + GLOBAL_RATE * seconds;
        assert!(out <= bound, "{out} > {bound}");
        assert!(out >= 0.9 * bound, "the budget is used, not starved: {out}");
        assert!(l.per_source.len() <= MAX_SOURCES);
    }
}
