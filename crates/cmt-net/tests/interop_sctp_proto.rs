//! Interoperability with `sctp-proto` (webrtc-rs), an SCTP implementation not written
//! here, sans-IO like ours: packets cross in memory as bytes, each side encoding and
//! parsing them with its own codec. In each direction one side connects and the other
//! accepts, 10 MB cross on stream 0 and arrive identical; the first test also shuts the
//! association down gracefully (our SHUTDOWN, their SHUTDOWN ACK, our SHUTDOWN
//! COMPLETE).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use cmt_core::cc::RenoFactory;
use cmt_core::rtx::{RtxCwndFactory, RtxFactory};
use cmt_core::sched::{RoundRobinFactory, SchedulerFactory};
use cmt_core::setup::{Connector, SetupConfig};
use cmt_core::wire::{decode, encode};
use cmt_core::{Algorithms, Association, Config, PathId, Payload, Time};
use sctp_proto::{DatagramEvent, Endpoint, EndpointConfig, Event, ServerConfig, StreamEvent};

fn their_packets(t: sctp_proto::Transmit) -> Vec<Bytes> {
    match t.payload {
        sctp_proto::Payload::RawEncode(v) => v,
        _ => Vec::new(),
    }
}

#[test]
fn sctp_proto_receives_ten_megabytes_from_us_intact() {
    let start = Instant::now();
    let ours = |i: Instant| Time::from_nanos(i.duration_since(start).as_nanos() as u64);
    let client_addr: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let mut server = Endpoint::new(
        Arc::new(EndpointConfig::new()),
        Some(Arc::new(ServerConfig::new())),
    );
    let mut theirs: Option<(sctp_proto::AssociationHandle, sctp_proto::Association)> = None;

    let mut conn = Connector::new(
        SetupConfig {
            extensions: vec![],
            ..SetupConfig::default()
        },
        3,
    );
    let mut us: Option<Association> = None;
    let data: Vec<u8> = (0..10_000_000u32)
        .map(|i| (i.wrapping_mul(747796405) >> 9) as u8)
        .collect();
    let mut got: Vec<u8> = Vec::new();
    let mut buf = Vec::new();
    let mut rbuf = vec![0u8; 1 << 16];
    let mut now = start;
    let mut to_them: Vec<Bytes> = Vec::new();
    let mut to_us: Vec<Bytes> = Vec::new();
    for _ in 0..2_000_000 {
        now += std::time::Duration::from_micros(200);
        // Our side.
        if let Some(p) = conn.poll_transmit(ours(now)) {
            encode(&p, 5000, 5000, &mut buf);
            to_them.push(Bytes::copy_from_slice(&buf));
        }
        if let Some(a) = us.as_mut() {
            if a.poll_timeout().is_some_and(|t| t <= ours(now)) {
                a.handle_timeout(ours(now));
            }
            while let Some(t) = a.poll_transmit(ours(now)) {
                encode(&t.packet, 5000, 5000, &mut buf);
                to_them.push(Bytes::copy_from_slice(&buf));
            }
        }
        // Their side.
        for b in to_them.drain(..) {
            if let Some((ch, ev)) = server.handle(now, client_addr, None, None, b) {
                match ev {
                    DatagramEvent::NewAssociation(a) => theirs = Some((ch, a)),
                    DatagramEvent::AssociationEvent(e) => {
                        if let Some((_, a)) = theirs.as_mut() {
                            a.handle_event(e);
                        }
                    }
                }
            }
        }
        while let Some(t) = server.poll_transmit() {
            to_us.extend(their_packets(t));
        }
        if let Some((ch, a)) = theirs.as_mut() {
            if a.poll_timeout().is_some_and(|t| t <= now) {
                a.handle_timeout(now);
            }
            while let Some(e) = a.poll_endpoint_event() {
                if let Some(back) = server.handle_event(*ch, e) {
                    a.handle_event(back);
                }
            }
            while let Some(ev) = a.poll() {
                if let Event::Stream(StreamEvent::Readable { id }) = ev {
                    if let Ok(mut s) = a.stream(id) {
                        while let Ok(Some(chunks)) = s.read() {
                            let n = chunks.read(&mut rbuf).unwrap();
                            got.extend_from_slice(&rbuf[..n]);
                        }
                    }
                }
            }
            while let Some(t) = a.poll_transmit(now) {
                to_us.extend(their_packets(t));
            }
        }
        // Back to us.
        for b in to_us.drain(..) {
            let Ok(d) = decode(&b) else {
                panic!("their packet does not parse: {:?}", decode(&b).unwrap_err())
            };
            match us.as_mut() {
                None => {
                    if let Ok(Some(est)) = conn.handle_packet(&d.packet) {
                        let cfg = Config::default();
                        let algs = Algorithms {
                            scheduler: RoundRobinFactory.build(1),
                            rtx: RtxCwndFactory::default().build(),
                            cc: &RenoFactory,
                        };
                        let mut a = Association::new(cfg, 1, algs, est.init, ()).unwrap();
                        a.write(Payload::Bytes(Bytes::from(data.clone())));
                        us = Some(a);
                    }
                }
                Some(a) => a.handle_packet(ours(now), PathId(0), d.packet),
            }
        }
        // Everything arrived: shut down gracefully, from our side.
        if got.len() >= data.len() {
            let a = us.as_mut().expect("established");
            a.close();
            let their_closed = theirs.as_ref().is_some_and(|(_, t)| t.is_closed());
            if a.is_closed() && their_closed {
                break;
            }
        }
    }
    assert!(us.is_some(), "handshake with sctp-proto completed");
    assert!(us.as_ref().unwrap().is_closed(), "our side closed");
    assert!(theirs.as_ref().unwrap().1.is_closed(), "sctp-proto closed");
    assert_eq!(got.len(), data.len(), "bytes delivered to sctp-proto");
    assert!(got == data, "identical bytes");
}

#[test]
fn we_accept_sctp_protos_handshake_and_receive_ten_megabytes_intact() {
    use cmt_core::setup::{ListenOutcome, Listener};
    use sctp_proto::{ClientConfig, PayloadProtocolIdentifier};

    let start = Instant::now();
    let ours = |i: Instant| Time::from_nanos(i.duration_since(start).as_nanos() as u64);
    let server_addr: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let mut client = Endpoint::new(Arc::new(EndpointConfig::new()), None);
    let (ch, mut theirs) = client.connect(ClientConfig::new(), server_addr).unwrap();
    let mut listener = Listener::new(
        SetupConfig {
            rbuf: 1 << 20,
            extensions: vec![],
            ..SetupConfig::default()
        },
        [5; 32],
        4,
    );
    let mut us: Option<Association> = None;
    let data: Vec<u8> = (0..10_000_000u32)
        .map(|i| (i.wrapping_mul(2891336453) >> 7) as u8)
        .collect();
    let (mut written, mut connected, mut got) = (0usize, false, Vec::new());
    let mut buf = Vec::new();
    let mut now = start;
    let mut to_us: Vec<Bytes> = Vec::new();
    let mut to_them: Vec<Bytes> = Vec::new();
    for _ in 0..2_000_000 {
        now += std::time::Duration::from_micros(200);
        // Their side.
        if theirs.poll_timeout().is_some_and(|t| t <= now) {
            theirs.handle_timeout(now);
        }
        while let Some(ev) = theirs.poll() {
            if let Event::Connected = ev {
                connected = true;
                theirs
                    .open_stream(0, PayloadProtocolIdentifier::Binary)
                    .unwrap();
            }
        }
        if connected && written < data.len() {
            let mut s = theirs.stream(0).unwrap();
            while written < data.len() && s.buffered_amount().unwrap() < 1 << 20 {
                let end = (written + 16_384).min(data.len());
                s.write(&data[written..end]).unwrap();
                written = end;
            }
        }
        while let Some(e) = theirs.poll_endpoint_event() {
            if let Some(back) = client.handle_event(ch, e) {
                theirs.handle_event(back);
            }
        }
        while let Some(t) = theirs.poll_transmit(now) {
            to_us.extend(their_packets(t));
        }
        while let Some(t) = client.poll_transmit() {
            to_us.extend(their_packets(t));
        }
        // Our side.
        for b in to_us.drain(..) {
            let d = decode(&b).expect("their packet parses");
            match us.as_mut() {
                Some(a) => a.handle_packet(ours(now), PathId(0), d.packet),
                None => match listener.handle(ours(now), &d.packet) {
                    ListenOutcome::Reply(p) => {
                        encode(&p, 5000, 5000, &mut buf);
                        to_them.push(Bytes::copy_from_slice(&buf));
                    }
                    ListenOutcome::Established(est, ack) => {
                        let cfg = Config {
                            rbuf: 1 << 20,
                            ..Config::default()
                        };
                        let algs = Algorithms {
                            scheduler: RoundRobinFactory.build(1),
                            rtx: RtxCwndFactory::default().build(),
                            cc: &RenoFactory,
                        };
                        us = Some(Association::new(cfg, 1, algs, est.init, ()).unwrap());
                        encode(&ack, 5000, 5000, &mut buf);
                        to_them.push(Bytes::copy_from_slice(&buf));
                    }
                    ListenOutcome::Drop(why) => panic!("dropped: {why}"),
                },
            }
        }
        if let Some(a) = us.as_mut() {
            if a.poll_timeout().is_some_and(|t| t <= ours(now)) {
                a.handle_timeout(ours(now));
            }
            while let Some(t) = a.poll_transmit(ours(now)) {
                encode(&t.packet, 5000, 5000, &mut buf);
                to_them.push(Bytes::copy_from_slice(&buf));
            }
            while let Some(p) = a.read() {
                if let Payload::Bytes(b) = p {
                    got.extend_from_slice(&b);
                }
            }
        }
        for b in to_them.drain(..) {
            if let Some((_, DatagramEvent::AssociationEvent(e))) =
                client.handle(now, server_addr, None, None, b)
            {
                theirs.handle_event(e);
            }
        }
        if got.len() >= data.len() {
            break;
        }
    }
    assert!(
        connected,
        "sctp-proto completed the handshake with our listener"
    );
    assert_eq!(got.len(), data.len(), "bytes delivered to us");
    assert!(got == data, "identical bytes");
}

#[test]
fn sctp_proto_closes_on_our_abort() {
    let start = Instant::now();
    let ours = |i: Instant| Time::from_nanos(i.duration_since(start).as_nanos() as u64);
    let client_addr: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let mut server = Endpoint::new(
        Arc::new(EndpointConfig::new()),
        Some(Arc::new(ServerConfig::new())),
    );
    let mut theirs: Option<(sctp_proto::AssociationHandle, sctp_proto::Association)> = None;
    let mut conn = Connector::new(
        SetupConfig {
            extensions: vec![],
            ..SetupConfig::default()
        },
        5,
    );
    let mut us: Option<Association> = None;
    let (mut buf, mut now, mut aborted) = (Vec::new(), start, false);
    let mut lost = false;
    for step in 0..20_000 {
        now += std::time::Duration::from_micros(200);
        let mut to_them = Vec::new();
        if let Some(p) = conn.poll_transmit(ours(now)) {
            encode(&p, 5000, 5000, &mut buf);
            to_them.push(Bytes::copy_from_slice(&buf));
        }
        if let Some(a) = us.as_mut() {
            if step > 200 && !aborted {
                a.abort(ours(now), Some(12)); // "user-initiated abort"
                aborted = true;
            }
            while let Some(t) = a.poll_transmit(ours(now)) {
                encode(&t.packet, 5000, 5000, &mut buf);
                to_them.push(Bytes::copy_from_slice(&buf));
            }
        }
        for b in to_them {
            if let Some((ch, ev)) = server.handle(now, client_addr, None, None, b) {
                match ev {
                    DatagramEvent::NewAssociation(a) => theirs = Some((ch, a)),
                    DatagramEvent::AssociationEvent(e) => {
                        if let Some((_, a)) = theirs.as_mut() {
                            a.handle_event(e);
                        }
                    }
                }
            }
        }
        let mut to_us: Vec<Bytes> = Vec::new();
        while let Some(t) = server.poll_transmit() {
            to_us.extend(their_packets(t));
        }
        if let Some((ch, a)) = theirs.as_mut() {
            while let Some(e) = a.poll_endpoint_event() {
                if let Some(back) = server.handle_event(*ch, e) {
                    a.handle_event(back);
                }
            }
            while let Some(ev) = a.poll() {
                if matches!(ev, Event::AssociationLost { .. }) {
                    lost = true;
                }
            }
            while let Some(t) = a.poll_transmit(now) {
                to_us.extend(their_packets(t));
            }
            if aborted && a.is_closed() {
                break;
            }
        }
        for b in to_us {
            let d = decode(&b).expect("their packet parses");
            match us.as_mut() {
                None => {
                    if let Ok(Some(est)) = conn.handle_packet(&d.packet) {
                        let algs = Algorithms {
                            scheduler: RoundRobinFactory.build(1),
                            rtx: RtxCwndFactory::default().build(),
                            cc: &RenoFactory,
                        };
                        let mut a =
                            Association::new(Config::default(), 1, algs, est.init, ()).unwrap();
                        a.write(Payload::Bytes(Bytes::from(vec![3u8; 1_000_000])));
                        us = Some(a);
                    }
                }
                Some(a) => a.handle_packet(ours(now), PathId(0), d.packet),
            }
        }
    }
    assert!(aborted, "the association was established and then aborted");
    let (_, t) = theirs.expect("sctp-proto accepted");
    assert!(t.is_closed() || lost, "sctp-proto closed on our ABORT");
}
