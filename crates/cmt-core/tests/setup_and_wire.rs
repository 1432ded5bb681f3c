//! Two endpoints that only exchange bytes: the handshake and then a transfer go through
//! the wire codec both ways, and garbage and wrong-tag packets fired at the running
//! association change nothing but the counters.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use bytes::Bytes;
use cmt_core::cc::RenoFactory;
use cmt_core::rtx::{RtxCwndFactory, RtxFactory};
use cmt_core::sched::{RoundRobinFactory, SchedulerFactory};
use cmt_core::setup::{Connector, ListenOutcome, Listener, SetupConfig};
use cmt_core::wire::{decode, encode};
use cmt_core::{Algorithms, Association, Chunk, Config, Duration, Packet, PathId, Payload, Time};
use rand::{Rng, SeedableRng};

fn bytes_of(p: &Packet) -> Vec<u8> {
    let mut out = Vec::new();
    encode(p, 9899, 9899, &mut out);
    out
}

/// An endpoint with `paths` paths: round-robin, RTX-CWND, Reno.
fn endpoint(cfg: &Config, paths: usize, init: cmt_core::AssocInit) -> Association {
    let algs = Algorithms {
        scheduler: RoundRobinFactory.build(paths),
        rtx: RtxCwndFactory::default().build(),
        cc: &RenoFactory,
    };
    Association::new(cfg.clone(), paths, algs, init, ()).unwrap()
}

fn setup_cfg(last: u8) -> SetupConfig {
    SetupConfig {
        addresses: (1..=2)
            .map(|n| IpAddr::V4(Ipv4Addr::new(10, 0, n, last)))
            .collect(),
        rbuf: 128 * 1024,
        ..SetupConfig::default()
    }
}

#[test]
fn handshake_then_transfer_over_encoded_packets_survives_garbage() {
    // Handshake, every packet through encode → decode.
    let now = Time::from_nanos(1);
    let mut client = Connector::new(setup_cfg(1), 11);
    let mut server = Listener::new(setup_cfg(2), [42; 32], 12);
    let init = decode(&bytes_of(&client.poll_transmit(now).unwrap())).unwrap();
    let ListenOutcome::Reply(ack) = server.handle(now, &init.packet) else {
        panic!("INIT ACK")
    };
    client
        .handle_packet(&decode(&bytes_of(&ack)).unwrap().packet)
        .unwrap();
    let echo = decode(&bytes_of(&client.poll_transmit(now).unwrap())).unwrap();
    let ListenOutcome::Established(s_est, cack) = server.handle(now, &echo.packet) else {
        panic!("established")
    };
    let c_est = client
        .handle_packet(&decode(&bytes_of(&cack)).unwrap().packet)
        .unwrap()
        .unwrap();
    assert_eq!(c_est.peer_addresses.len(), 2);

    let cfg = Config {
        rbuf: 128 * 1024,
        ..Config::default()
    };
    let mk = |init| endpoint(&cfg, 2, init);
    let (mut a, mut b) = (mk(c_est.init), mk(s_est.init));
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i * 31 + 7) as u8).collect();
    a.write(Payload::Bytes(Bytes::from(data.clone())));

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut wire: BTreeMap<(Time, u64), (bool, PathId, Vec<u8>)> = BTreeMap::new();
    let (mut seq, mut t, mut got, mut garbage, mut decode_errors) =
        (0u64, now, Vec::new(), 0u32, 0u32);
    let delay = |p: PathId| Duration::from_millis(5 + 20 * p.0 as u64);
    let mut kinds: Vec<&'static str> = Vec::new();
    while !(a.is_closed() && b.is_closed()) && t < Time::from_nanos(120_000_000_000) {
        if got.len() == data.len() {
            a.close(); // graceful shutdown once everything arrived
        }
        while let Some(e) = wire.first_entry() {
            if e.key().0 > t {
                break;
            }
            let (to_b, path, buf) = e.remove();
            if let Ok(d) = decode(&buf) {
                for c in &d.packet.chunks {
                    match c {
                        Chunk::Shutdown { .. } => kinds.push("SHUTDOWN"),
                        Chunk::ShutdownAck => kinds.push("SHUTDOWN ACK"),
                        Chunk::ShutdownComplete { .. } => kinds.push("SHUTDOWN COMPLETE"),
                        _ => {}
                    }
                }
            }
            match decode(&buf) {
                Ok(d) if to_b => b.handle_packet(t, path, d.packet),
                Ok(d) => a.handle_packet(t, path, d.packet),
                Err(_) => decode_errors += 1,
            }
        }
        // Garbage at the receiver: random datagrams, truncations, a valid packet under
        // a wrong tag.
        for _ in 0..10 {
            if garbage == 10_000 {
                break;
            }
            garbage += 1;
            let junk: Vec<u8> = (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect();
            if decode(&junk).is_ok() {
                panic!("random bytes parsed");
            }
            let wrong = Packet {
                vtag: rng.gen(),
                chunks: vec![Chunk::Sack(Default::default())],
            };
            let enc = bytes_of(&wrong);
            assert!(decode(&enc[..enc.len() - 1]).is_err());
            b.handle_packet(t, PathId(0), decode(&enc).unwrap().packet);
        }
        for x in [a.poll_timeout(), b.poll_timeout()].into_iter().flatten() {
            if x <= t {
                a.handle_timeout(t);
                b.handle_timeout(t);
                break;
            }
        }
        while let Some(tx) = a.poll_transmit(t) {
            seq += 1;
            wire.insert(
                (t + delay(tx.path), seq),
                (true, tx.path, bytes_of(&tx.packet)),
            );
        }
        while let Some(tx) = b.poll_transmit(t) {
            seq += 1;
            wire.insert(
                (t + delay(tx.path), seq),
                (false, tx.path, bytes_of(&tx.packet)),
            );
        }
        while let Some(Payload::Bytes(p)) = b.read() {
            got.extend_from_slice(&p);
        }
        t += Duration::from_millis(1);
    }
    assert!(
        got == data,
        "{} of {} bytes, identical prefix: {}",
        got.len(),
        data.len(),
        data.starts_with(&got)
    );
    assert_eq!(decode_errors, 0, "our own packets always parse");
    assert!(
        garbage >= 5_000,
        "{garbage} garbage packets during the transfer"
    );
    // Every wrong-tag packet was dropped and counted.
    assert_eq!(b.stats().bad_vtag, garbage as u64);
    // The graceful shutdown ran once, in order, and both ends closed.
    assert_eq!(kinds, vec!["SHUTDOWN", "SHUTDOWN ACK", "SHUTDOWN COMPLETE"]);
    assert!(a.is_closed() && b.is_closed() && !a.is_failed() && !b.is_failed());
    assert!(a.poll_transmit(t).is_none() && a.poll_timeout().is_none());
}

#[test]
fn a_sack_for_data_never_sent_is_a_protocol_violation_answered_with_abort() {
    let cfg = Config::default();
    let (ia, ib) = cmt_core::AssocInit::pair(3, cfg.rbuf, cfg.rbuf);
    let mk = |init| endpoint(&cfg, 1, init);
    let (mut a, mut b) = (mk(ia.clone()), mk(ib));
    a.write(Payload::Bytes(Bytes::from_static(b"hello")));
    let t = Time::from_nanos(1);
    while a.poll_transmit(t).is_some() {}
    // b claims to have received 1000 TSNs more than a ever sent.
    let lie = Packet {
        vtag: ia.local_vtag,
        chunks: vec![Chunk::Sack(cmt_core::packet::SackChunk {
            cum_tsn: ia.initial_tsn.wrapping_add(1000),
            a_rwnd: 65536,
            ..Default::default()
        })],
    };
    a.handle_packet(t, PathId(0), lie);
    assert!(a.is_failed());
    let abort = a.poll_transmit(t).expect("an ABORT goes out");
    assert_eq!(
        abort.packet.chunks,
        vec![Chunk::Abort {
            cause: Some(13),
            reflected: false
        }]
    );
    assert!(a.poll_transmit(t).is_none());
    b.handle_packet(
        t,
        PathId(0),
        decode(&bytes_of(&abort.packet)).unwrap().packet,
    );
    assert!(b.is_failed(), "the peer fails on ABORT");
}

#[test]
fn a_sack_for_data_waiting_in_a_write_queue_is_a_protocol_violation_too() {
    // With Linux's write queues a chunk has its TSN while it waits unsent; a SACK
    // that acknowledges it cumulatively acknowledges data never sent.
    let cfg = Config {
        send_buffer: cmt_core::SendBuffer::Linux,
        ..Config::default()
    };
    let (ia, _) = cmt_core::AssocInit::pair(3, cfg.rbuf, cfg.rbuf);
    let mut a = endpoint(&cfg, 1, ia.clone());
    a.write(Payload::Bytes(Bytes::from(vec![7u8; 100_000])));
    let t = Time::from_nanos(1);
    let sent = std::iter::from_fn(|| a.poll_transmit(t))
        .filter(|x| x.packet.has_data())
        .count() as u32;
    assert!(sent > 0 && a.unsent_bytes() < 100_000 - 1452 * sent as u64);
    // One TSN past the last sent: given to a queued chunk, never sent.
    let lie = Packet {
        vtag: ia.local_vtag,
        chunks: vec![Chunk::Sack(cmt_core::packet::SackChunk {
            cum_tsn: ia.initial_tsn.wrapping_add(sent),
            a_rwnd: 65536,
            ..Default::default()
        })],
    };
    a.handle_packet(t, PathId(0), lie);
    assert!(a.is_failed(), "{sent} chunks sent, the SACK acked one more");
}

#[test]
fn with_path_confirmation_a_second_path_carries_data_only_after_its_heartbeat_is_answered() {
    let cfg = Config {
        confirm_paths: true,
        ..Config::default()
    };
    let (ia, ib) = cmt_core::AssocInit::pair(4, cfg.rbuf, cfg.rbuf);
    let mk = |init| endpoint(&cfg, 2, init);
    let (mut a, mut b) = (mk(ia), mk(ib));
    a.write(Payload::Bytes(Bytes::from(vec![1u8; 100_000])));
    let t = Time::from_nanos(1);
    a.handle_timeout(t); // the confirmation heartbeat is due at once
    let first: Vec<_> = std::iter::from_fn(|| a.poll_transmit(t)).collect();
    let data_on = |p: usize, v: &[cmt_core::Transmit]| {
        v.iter()
            .filter(|x| x.path.0 == p && x.packet.has_data())
            .count()
    };
    assert!(
        data_on(0, &first) > 0 && data_on(1, &first) == 0,
        "no data on an unconfirmed path"
    );
    let hb: Vec<_> = first
        .iter()
        .filter(|x| matches!(x.packet.chunks[0], Chunk::Heartbeat(_)))
        .collect();
    assert_eq!(hb.len(), 1);
    assert_eq!(hb[0].path, PathId(1));
    // The peer answers; the next SACK-driven opportunity uses path 1 too.
    b.handle_packet(t, PathId(1), hb[0].packet.clone());
    let answer = std::iter::from_fn(|| b.poll_transmit(t))
        .find(|x| matches!(x.packet.chunks[0], Chunk::HeartbeatAck(_)))
        .expect("HEARTBEAT ACK");
    let t2 = Time::from_nanos(2_000_000);
    a.handle_packet(t2, PathId(1), answer.packet);
    for x in &first {
        if x.path.0 == 0 {
            b.handle_packet(t2, PathId(0), x.packet.clone());
        }
    }
    for x in std::iter::from_fn(|| b.poll_transmit(t2)).collect::<Vec<_>>() {
        a.handle_packet(t2, x.path, x.packet);
    }
    let next: Vec<_> = std::iter::from_fn(|| a.poll_transmit(t2)).collect();
    assert!(data_on(1, &next) > 0, "confirmed path used");
}

#[test]
fn a_peers_own_heartbeat_is_echoed_verbatim_and_abort_ends_the_association() {
    let cfg = Config::default();
    let (ia, _) = cmt_core::AssocInit::pair(6, cfg.rbuf, cfg.rbuf);
    let mut a = endpoint(&cfg, 1, ia.clone());
    let info = Bytes::from_static(&[0, 1, 0, 12, 9, 9, 9, 9, 9, 9, 9, 9]);
    let hb = Packet {
        vtag: ia.local_vtag,
        chunks: vec![Chunk::Unknown {
            chunk_type: 4,
            flags: 0,
            value: info.clone(),
        }],
    };
    // Through the codec, as a foreign heartbeat arrives.
    let hb = decode(&bytes_of(&hb)).unwrap().packet;
    let t = Time::from_nanos(1);
    a.handle_packet(t, PathId(0), hb);
    let ack = a.poll_transmit(t).expect("HEARTBEAT ACK");
    assert_eq!(ack.packet.vtag, ia.peer_vtag);
    assert_eq!(
        ack.packet.chunks,
        vec![Chunk::Unknown {
            chunk_type: 5,
            flags: 0,
            value: info
        }]
    );
    a.abort(t, Some(12));
    assert!(a.is_failed());
    assert!(!a.peer_aborted(), "our own abort is not the peer's");
    let abort = a.poll_transmit(t).expect("ABORT");
    assert_eq!(
        abort.packet.chunks,
        vec![Chunk::Abort {
            cause: Some(12),
            reflected: false
        }]
    );
    assert!(a.poll_transmit(t).is_none());
}

#[test]
fn an_abort_from_the_peer_fails_the_association_and_says_so() {
    let cfg = Config::default();
    let (ia, ib) = cmt_core::AssocInit::pair(7, cfg.rbuf, cfg.rbuf);
    let mut a = endpoint(&cfg, 1, ia);
    let mut b = endpoint(&cfg, 1, ib);
    let t = Time::from_nanos(1);
    b.abort(t, None);
    let abort = b.poll_transmit(t).expect("ABORT");
    a.handle_packet(t, PathId(0), abort.packet);
    assert!(a.is_failed() && a.peer_aborted());
    assert!(b.is_failed() && !b.peer_aborted());
}

/// RFC 9260 §8.5.1 B: an ABORT with the T bit carries the tag we put on our packets
/// (sent by an endpoint that has no association for them, e.g. a restarted peer, §8.4);
/// one with our own tag must not have the T bit, and a T bit under our tag is ignored.
#[test]
fn a_reflected_abort_counts_only_under_the_peers_tag() {
    let cfg = Config::default();
    let (ia, ib) = cmt_core::AssocInit::pair(8, cfg.rbuf, cfg.rbuf);
    let mut a = endpoint(&cfg, 1, ia.clone());
    let t = Time::from_nanos(1);
    let abort = |vtag, reflected| Packet {
        vtag,
        chunks: vec![Chunk::Abort {
            cause: None,
            reflected,
        }],
    };
    a.handle_packet(t, PathId(0), abort(ia.local_vtag, true));
    a.handle_packet(t, PathId(0), abort(ia.peer_vtag, false));
    assert!(!a.is_failed(), "wrong T bit for the tag: ignored");
    assert_eq!(a.stats().bad_vtag, 1);
    a.handle_packet(t, PathId(0), abort(ia.peer_vtag, true));
    assert!(a.is_failed() && a.peer_aborted());
    // What the other end's restarted listener would send, through the codec.
    let mut b = endpoint(&cfg, 1, ib);
    let reply = decode(&bytes_of(&abort(ia.local_vtag, true)))
        .unwrap()
        .packet;
    b.handle_packet(t, PathId(0), reply);
    assert!(b.is_failed() && b.peer_aborted());
}

/// The sender's SHUTDOWN COMPLETE is lost and the sender is gone: the receiver, which
/// has everything, retries its SHUTDOWN ACK under T2 and then closes — a close, not a
/// failure (RFC 9260 §9.2). A sender whose SHUTDOWN is never answered does fail.
#[test]
fn a_lost_final_shutdown_complete_still_ends_the_receiver_closed() {
    let cfg = Config::default();
    let (ia, ib) = cmt_core::AssocInit::pair(9, cfg.rbuf, cfg.rbuf);
    let mk = |init| endpoint(&cfg, 1, init);
    let (mut a, mut b) = (mk(ia), mk(ib));
    a.write(Payload::Bytes(Bytes::from(vec![5u8; 20_000])));
    a.close();
    let mut t = Time::ZERO;
    let mut got = 0;
    // Exchange everything except a's SHUTDOWN COMPLETE, until a has closed.
    while !a.is_closed() {
        t += Duration::from_millis(1);
        for x in [&mut a, &mut b] {
            if x.poll_timeout().is_some_and(|d| d <= t) {
                x.handle_timeout(t);
            }
        }
        while let Some(tx) = a.poll_transmit(t) {
            if !tx
                .packet
                .chunks
                .contains(&Chunk::ShutdownComplete { reflected: false })
            {
                b.handle_packet(t, PathId(0), tx.packet);
            }
        }
        while let Some(tx) = b.poll_transmit(t) {
            a.handle_packet(t, PathId(0), tx.packet);
        }
        while let Some(Payload::Bytes(p)) = b.read() {
            got += p.len();
        }
    }
    assert_eq!(got, 20_000);
    assert!(!b.is_closed(), "b waits for the SHUTDOWN COMPLETE");
    // a is gone; b only has its timers.
    let mut acks = 0;
    while let Some(d) = b.poll_timeout() {
        b.handle_timeout(d);
        while let Some(tx) = b.poll_transmit(d) {
            acks += tx.packet.chunks.contains(&Chunk::ShutdownAck) as u32;
        }
    }
    assert!(b.is_closed() && !b.is_failed(), "closed, not failed");
    assert!(
        (1..=cfg.assoc_max_retrans).contains(&acks),
        "SHUTDOWN ACK retried under T2 (Association.Max.Retrans bounds it): {acks}"
    );

    // The other side of the coin: a SHUTDOWN nobody answers ends in failure.
    let (ia, _) = cmt_core::AssocInit::pair(10, cfg.rbuf, cfg.rbuf);
    let mut lone = mk(ia);
    lone.close();
    while let Some(d) = lone.poll_timeout() {
        lone.handle_timeout(d);
        while lone.poll_transmit(d).is_some() {}
    }
    assert!(lone.is_failed() && !lone.is_closed());
}
