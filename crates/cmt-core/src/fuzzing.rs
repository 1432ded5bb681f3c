//! Fuzzing harnesses: what a hostile network can hand the core, with the invariants
//! that must hold whatever it is. Shared by the cargo-fuzz targets in `fuzz/` and by
//! `tests/fuzzing.rs`, which runs the same harnesses on a bounded number of generated
//! inputs and on the seed corpus in every `cargo test`. Each harness panics when an
//! invariant breaks; any other panic is a bug found.
//!
//! Inputs are byte strings read as a little program ([`Input`]): an operation byte,
//! then its arguments. Datagrams taken from the input get a valid CRC32c
//! ([`with_valid_crc`]) so that fuzzing reaches the chunk parsers and the state
//! machines behind the checksum instead of stopping at it.

use bytes::Bytes;

use crate::assoc::{AssocInit, Association};
use crate::auth::AuthConfig;
use crate::cc::RenoFactory;
use crate::config::Config;
use crate::packet::{Chunk, InitChunk, Packet, Payload};
use crate::rtx::{RtxCwndFactory, RtxFactory};
use crate::sched::{RoundRobinFactory, SchedulerFactory};
use crate::setup::{ListenOutcome, Listener, SetupConfig};
use crate::time::{Duration, Time};
use crate::view::PathId;
use crate::wire::{checksum, decode, encode};
use crate::Algorithms;

/// The input, read from the front; reads past its end give zeros.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// Reads `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }
    /// Whether everything was read.
    pub fn is_done(&self) -> bool {
        self.pos >= self.data.len()
    }
    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    /// The next `n` bytes (fewer at the end).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = (start + n).min(self.data.len());
        self.pos = start + n;
        &self.data[start..end]
    }
    /// A datagram: a 16-bit length, then that many bytes.
    pub fn datagram(&mut self) -> &'a [u8] {
        let n = u16::from_le_bytes([self.byte(), self.byte()]) as usize;
        self.take(n)
    }
}

/// `data` with its CRC32c field set to the checksum of the rest (RFC 9260 Appendix A),
/// when it is long enough to have one.
pub fn with_valid_crc(data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    if v.len() >= 12 {
        v[8..12].fill(0);
        let crc = checksum(&v);
        v[8..12].copy_from_slice(&crc.to_le_bytes());
    }
    v
}

/// The packet an encoder makes of `p`, decoded again: must be `p` itself.
fn assert_round_trip(p: &Packet) {
    let mut raw = Vec::new();
    encode(p, 1, 2, &mut raw);
    let back = decode(&raw).expect("our own encoding parses").packet;
    assert_eq!(&back, p, "a packet we send changes on the wire");
}

/// One datagram: `decode` returns on any bytes (checksum repaired, so the chunk parsers
/// see them), and what it accepts re-encodes to bytes that parse to the same packet.
/// Returns how many of the two forms parsed.
pub fn decode_one(data: &[u8]) -> usize {
    let mut parsed = 0;
    for raw in [data.to_vec(), with_valid_crc(data)] {
        if let Ok(d) = decode(&raw) {
            assert_round_trip(&d.packet);
            parsed += 1;
        }
    }
    parsed
}

fn endpoint(cfg: &Config, init: AssocInit) -> Association {
    let algs = Algorithms {
        scheduler: RoundRobinFactory.build(2),
        rtx: RtxCwndFactory::default().build(),
        cc: &RenoFactory,
    };
    Association::new(cfg.clone(), 2, algs, init, ()).expect("a valid configuration")
}

/// Outputs a call may produce before it must have nothing more to send.
const MAX_OUTPUT: usize = 100_000;

/// Everything `e` has to send now, each checked against the codec.
fn drain(e: &mut Association, now: Time) -> Vec<(PathId, Packet)> {
    let mut out = Vec::new();
    while let Some(t) = e.poll_transmit(now) {
        assert_round_trip(&t.packet);
        out.push((t.path, t.packet));
        assert!(out.len() < MAX_OUTPUT, "endless output at one instant");
    }
    out
}

/// Fires `e`'s timers due at `now` as a driver does (each expiry followed by taking
/// what is to send, which runs the timers handled at send time, like T2-shutdown);
/// they must move past `now` (no busy loop). Returns what was sent.
fn fire(e: &mut Association, now: Time) -> Vec<(PathId, Packet)> {
    let mut out = Vec::new();
    for _ in 0..1_000 {
        match e.poll_timeout() {
            Some(t) if t <= now => {
                e.handle_timeout(now);
                out.extend(drain(e, now));
            }
            _ => return out,
        }
    }
    panic!("a timer stays due after it was handled");
}

/// What must hold of an endpoint after every step.
fn check(e: &Association, written: u64) {
    assert!(
        e.rbuf_held() <= e.config().rbuf,
        "receive buffer above its size"
    );
    let unacked = e.unacked_bytes();
    assert!(unacked <= written, "{unacked} unacked of {written} written");
}

/// Two established endpoints over two paths — A sends a file to B — with the input
/// deciding, step by step, what the network does: deliver or lose their packets,
/// advance time, or hand either end a datagram of its own (checksum repaired, and
/// under the right verification tag when the input says so). Invariants: no panic;
/// every packet either end sends survives the codec; B's buffer stays within its
/// size; A never counts more unacknowledged bytes than it was given; output and timers
/// come to rest at every instant. Returns the bytes B delivered in order.
pub fn association(data: &[u8]) -> usize {
    let mut input = Input::new(data);
    let cfg = Config {
        rbuf: 16_384,
        ..Config::default()
    };
    let (ia, ib) = AssocInit::pair(u64::from(input.byte()), cfg.rbuf, cfg.rbuf);
    let tags = (ia.local_vtag, ib.local_vtag);
    let (mut a, mut b) = (endpoint(&cfg, ia), endpoint(&cfg, ib));
    let written = 40_000u64;
    let file: Vec<u8> = (0..written as u32).map(|i| (i * 7) as u8).collect();
    a.write(Payload::Bytes(Bytes::from(file)));
    a.close();
    let mut now = Time::ZERO;
    let (mut steps, mut delivered) = (0, 0);
    while !input.is_done() && steps < 10_000 {
        steps += 1;
        while let Some(d) = b.read() {
            delivered += d.len();
        }
        match input.byte() % 4 {
            0 => {
                now += Duration::from_millis(u64::from(input.byte()) * 4);
                for (path, p) in fire(&mut a, now) {
                    b.handle_packet(now, path, p);
                }
                for (path, p) in fire(&mut b, now) {
                    a.handle_packet(now, path, p);
                }
            }
            1 => {
                let lose = input.byte();
                for (i, (path, p)) in drain(&mut a, now).into_iter().enumerate() {
                    if lose & (1 << (i % 8)) == 0 {
                        b.handle_packet(now, path, p);
                    }
                }
                for (path, p) in drain(&mut b, now) {
                    a.handle_packet(now, path, p);
                }
            }
            op => {
                let (to_b, flags) = (op == 2, input.byte());
                let raw = with_valid_crc(input.datagram());
                let Ok(d) = decode(&raw) else { continue };
                let mut p = d.packet;
                if flags & 1 == 1 {
                    p.vtag = if to_b { tags.1 } else { tags.0 };
                }
                let path = PathId(usize::from(flags >> 1) % 2);
                let target = if to_b { &mut b } else { &mut a };
                target.handle_packet(now, path, p);
            }
        }
        check(&a, written);
        check(&b, 0);
    }
    let _ = (drain(&mut a, now), drain(&mut b, now));
    delivered
}

/// A listener with and without authentication, fed datagrams from the input, INITs
/// built from it, and COOKIE ECHOs carrying the cookies it issued (as they were, or
/// with a byte changed, or after time passed). Invariants: no panic; every reply
/// survives the codec; a reply to anything but an INIT is an ABORT or SHUTDOWN
/// COMPLETE with the T bit under the packet's own tag (RFC 9260 §8.4); an association
/// is established only on a cookie this listener issued, unchanged and still fresh —
/// and, with a key, never without an AUTH chunk the fuzzer cannot make. Returns the
/// associations established.
pub fn listener(data: &[u8]) -> usize {
    let mut input = Input::new(data);
    let keyed = input.byte() & 1 == 1;
    let cfg = SetupConfig {
        auth: keyed.then(|| AuthConfig::with_key(b"fuzz".to_vec())),
        ..SetupConfig::default()
    };
    let lifetime = cfg.cookie_lifetime;
    let mut l = Listener::new(cfg, [9; 32], u64::from(input.byte()));
    let mut issued: Vec<(Bytes, u32, Time)> = Vec::new();
    let mut now = Time::ZERO;
    let (mut steps, mut established) = (0, 0);
    while !input.is_done() && steps < 10_000 {
        steps += 1;
        let (raw, p) = match input.byte() % 4 {
            0 => {
                now += Duration::from_millis(u64::from(input.byte()) * 500);
                continue;
            }
            1 => {
                let raw = with_valid_crc(input.datagram());
                let Ok(d) = decode(&raw) else { continue };
                (raw, d.packet)
            }
            2 => {
                let tag = u32::from_le_bytes([input.byte(), input.byte(), input.byte(), 1]);
                let init = Packet {
                    vtag: 0,
                    chunks: vec![Chunk::Init(InitChunk {
                        initiate_tag: tag,
                        a_rwnd: 65_536,
                        outbound_streams: 1,
                        inbound_streams: 1,
                        initial_tsn: tag,
                        params: Vec::new(),
                    })],
                };
                (Vec::new(), init)
            }
            _ => {
                let Some((cookie, tag, _)) = pick(&issued, input.byte()) else {
                    continue;
                };
                let mut cookie = cookie.to_vec();
                let (at, bit) = (input.byte() as usize, input.byte() % 8);
                if at < cookie.len() {
                    cookie[at] ^= 1 << bit;
                }
                let echo = Packet {
                    vtag: tag,
                    chunks: vec![Chunk::CookieEcho {
                        cookie: cookie.into(),
                    }],
                };
                (Vec::new(), echo)
            }
        };
        let out = l.handle_datagram(now, &raw, &p);
        check_listener_outcome(&p, &out, &issued, now, lifetime, keyed);
        established += usize::from(matches!(out, ListenOutcome::Established(..)));
        if let ListenOutcome::Reply(r) = &out {
            if let Some(Chunk::InitAck(ack)) = r.chunks.first() {
                if let Some(cookie) = ack.params.iter().find_map(|x| match x {
                    crate::packet::InitParam::StateCookie(c) => Some(c.clone()),
                    _ => None,
                }) {
                    issued.push((cookie, ack.initiate_tag, now));
                }
            }
        }
    }
    established
}

fn pick(issued: &[(Bytes, u32, Time)], b: u8) -> Option<(Bytes, u32, Time)> {
    (!issued.is_empty()).then(|| issued[b as usize % issued.len()].clone())
}

fn check_listener_outcome(
    p: &Packet,
    out: &ListenOutcome,
    issued: &[(Bytes, u32, Time)],
    now: Time,
    lifetime: Duration,
    keyed: bool,
) {
    match out {
        ListenOutcome::Reply(r) => {
            assert_round_trip(r);
            let answers_init = matches!(p.chunks.first(), Some(Chunk::Init(_)));
            if !answers_init {
                assert_eq!(
                    r.vtag, p.vtag,
                    "an out-of-the-blue answer under another tag"
                );
                assert!(
                    matches!(
                        r.chunks.as_slice(),
                        [Chunk::Abort {
                            reflected: true,
                            ..
                        }] | [Chunk::ShutdownComplete { reflected: true }]
                    ),
                    "an out-of-the-blue answer that is neither: {r:?}"
                );
            }
        }
        ListenOutcome::Established(..) => {
            assert!(!keyed, "established without an AUTH chunk under the key");
            let echoed = p.chunks.iter().find_map(|c| match c {
                Chunk::CookieEcho { cookie } => Some(cookie),
                _ => None,
            });
            let fresh = issued.iter().any(|(c, _, at)| {
                Some(c) == echoed && now.as_nanos() - at.as_nanos() <= lifetime.as_nanos()
            });
            assert!(fresh, "established on a cookie this listener did not issue");
        }
        ListenOutcome::Drop(_) => {}
    }
}
