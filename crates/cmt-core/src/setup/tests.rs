//! The handshake, cookies, back-off and RFC 4895 negotiation, on packets passed by hand.
use super::*;
use std::net::Ipv4Addr;

fn cfg(last: u8) -> SetupConfig {
    SetupConfig {
        addresses: vec![
            IpAddr::V4(Ipv4Addr::new(10, 0, 1, last)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 2, last)),
        ],
        ..SetupConfig::default()
    }
}

/// Runs INIT → INIT ACK → COOKIE ECHO → COOKIE ACK.
fn handshake() -> (Established, Established) {
    handshake_with(cfg(1), cfg(2))
}

fn handshake_with(client: SetupConfig, server: SetupConfig) -> (Established, Established) {
    match try_handshake(client, server) {
        (Some(c), ListenOutcome::Established(s, _)) => (c, *s),
        (_, other) => panic!("established expected, got {other:?}"),
    }
}

/// The bytes of `p`, signed with `session` when given (as the runtime does).
fn on_the_wire(p: &Packet, session: Option<&Session>) -> (Vec<u8>, Packet) {
    let mut raw = Vec::new();
    crate::wire::encode(p, 1, 2, &mut raw);
    if let Some(s) = session {
        s.sign(&mut raw);
    }
    let decoded = crate::wire::decode(&raw).unwrap().packet;
    (raw, decoded)
}

/// The handshake as far as it goes: the client's outcome (when the server established)
/// and the server's answer to the COOKIE ECHO, signed as the connector's session says.
fn try_handshake(client: SetupConfig, server: SetupConfig) -> (Option<Established>, ListenOutcome) {
    let mut c = Connector::new(client, 1);
    let mut l = Listener::new(server, [7; 32], 2);
    let now = Time::from_nanos(1_000_000);
    let init = c.poll_transmit(now).unwrap();
    let ListenOutcome::Reply(ack) = l.handle(now, &init) else {
        panic!("INIT ACK expected")
    };
    assert!(c.handle_packet(&ack).unwrap().is_none());
    let echo = c.poll_transmit(now).unwrap();
    let (raw, echo) = on_the_wire(&echo, c.session());
    let out = l.handle_datagram(now, &raw, &echo);
    let client = match &out {
        ListenOutcome::Established(_, cack) => Some(c.handle_packet(cack).unwrap().unwrap()),
        _ => None,
    };
    (client, out)
}

#[test]
fn the_four_way_handshake_agrees_on_tags_tsns_and_addresses() {
    let (c, s) = handshake();
    assert_eq!(c.init.local_vtag, s.init.peer_vtag);
    assert_eq!(c.init.peer_vtag, s.init.local_vtag);
    assert_eq!(c.init.initial_tsn, s.init.peer_initial_tsn);
    assert_eq!(c.init.peer_initial_tsn, s.init.initial_tsn);
    assert_eq!((c.init.peer_rwnd, s.init.peer_rwnd), (65536, 65536));
    assert_eq!(c.peer_addresses, cfg(2).addresses);
    assert_eq!(s.peer_addresses, cfg(1).addresses);
    assert_eq!(s.peer_extensions, vec![0xB0, 0xB1]);
}

fn with_key(last: u8, key: &[u8]) -> SetupConfig {
    SetupConfig {
        auth: Some(AuthConfig::with_key(key.to_vec())),
        ..cfg(last)
    }
}

/// A DATA packet signed by `from` and checked by `to`: the chunks left.
fn signed_data_survives(from: &Session, to: &Session) -> bool {
    use crate::packet::{DataChunk, DataFlags, Payload};
    let mut p = Packet {
        vtag: 1,
        chunks: vec![Chunk::Data(DataChunk {
            tsn: 1,
            sid: 0,
            ssn: 0,
            ppid: 0,
            flags: DataFlags::from_bits(3),
            payload: Payload::Bytes(Bytes::from_static(b"payload")),
        })],
    };
    let mut raw = Vec::new();
    crate::wire::encode(&p, 1, 2, &mut raw);
    assert!(from.sign(&mut raw));
    p = crate::wire::decode(&raw).unwrap().packet;
    let _ = to.check(&raw, &mut p);
    p.chunks.len() == 1
}

#[test]
fn with_a_shared_key_both_ends_derive_one_session_through_the_cookie() {
    let (c, s) = handshake_with(with_key(1, b"k1"), with_key(2, b"k1"));
    let (ca, sa) = (c.auth.unwrap(), s.auth.unwrap());
    assert!(c.peer_extensions.contains(&chunk_type::AUTH));
    assert!(signed_data_survives(&ca, &sa));
    assert!(signed_data_survives(&sa, &ca));
}

#[test]
fn with_a_key_only_a_cookie_echo_signed_under_it_establishes() {
    // Different endpoint keys: the COOKIE ECHO's HMAC does not verify.
    let (c, out) = try_handshake(with_key(1, b"k1"), with_key(2, b"k2"));
    assert!(c.is_none());
    assert_eq!(
        out,
        ListenOutcome::Drop("COOKIE ECHO's AUTH chunk does not verify")
    );
    // The right cookie without an AUTH chunk in front (a party that saw the INIT ACK).
    let mut conn = Connector::new(with_key(1, b"k1"), 1);
    let mut l = Listener::new(with_key(2, b"k1"), [7; 32], 2);
    let now = Time::from_nanos(1);
    let ListenOutcome::Reply(ack) = l.handle(now, &conn.poll_transmit(now).unwrap()) else {
        panic!("INIT ACK expected")
    };
    conn.handle_packet(&ack).unwrap();
    let (raw, echo) = on_the_wire(&conn.poll_transmit(now).unwrap(), None);
    assert_eq!(
        l.handle_datagram(now, &raw, &echo),
        ListenOutcome::Drop("COOKIE ECHO without the AUTH chunk it requires")
    );
    // … nor by a driver that cannot show the bytes.
    let (_, signed) = on_the_wire(&echo, conn.session());
    assert!(matches!(l.handle(now, &signed), ListenOutcome::Drop(_)));
    assert!(matches!(
        l.handle_datagram(now, &raw, &signed),
        ListenOutcome::Drop(_)
    ));
}

#[test]
fn packets_of_no_association_are_answered_as_rfc_9260_section_8_4_says() {
    let mut l = Listener::new(cfg(2), [7; 32], 2);
    let now = Time::from_nanos(1);
    let ootb = |chunks: Vec<Chunk>| Packet {
        vtag: 0xfeed,
        chunks,
    };
    let data = Chunk::Data(crate::packet::DataChunk {
        tsn: 9,
        sid: 0,
        ssn: 0,
        ppid: 0,
        flags: crate::packet::DataFlags::from_bits(3),
        payload: crate::packet::Payload::Bytes(Bytes::from_static(b"x")),
    });
    let reflected_abort = ListenOutcome::Reply(Packet {
        vtag: 0xfeed,
        chunks: vec![Chunk::Abort {
            cause: None,
            reflected: true,
        }],
    });
    // DATA of an association we do not know (a peer that outlived our restart).
    assert_eq!(l.handle(now, &ootb(vec![data.clone()])), reflected_abort);
    assert_eq!(
        l.handle(now, &ootb(vec![Chunk::Shutdown { cum_tsn: 3 }])),
        reflected_abort
    );
    assert_eq!(
        l.handle(now, &ootb(vec![Chunk::ShutdownAck])),
        ListenOutcome::Reply(Packet {
            vtag: 0xfeed,
            chunks: vec![Chunk::ShutdownComplete { reflected: true }],
        })
    );
    // Never an answer to an ABORT (wherever it sits), SHUTDOWN COMPLETE or COOKIE ACK.
    let abort = Chunk::Abort {
        cause: None,
        reflected: false,
    };
    for quiet in [
        vec![abort.clone()],
        vec![data, abort],
        vec![Chunk::ShutdownComplete { reflected: false }],
        vec![Chunk::CookieAck],
    ] {
        assert!(matches!(
            l.handle(now, &ootb(quiet)),
            ListenOutcome::Drop(_)
        ));
    }
}

#[test]
fn a_peer_without_authentication_is_refused_by_an_end_that_requires_it() {
    // Our listener requires it: the INIT is answered with an ABORT.
    let mut l = Listener::new(with_key(2, b"k"), [7; 32], 2);
    let mut c = Connector::new(cfg(1), 1);
    let init = c.poll_transmit(Time::ZERO).unwrap();
    let ListenOutcome::Reply(r) = l.handle(Time::ZERO, &init) else {
        panic!("an answer expected")
    };
    assert_eq!(
        r.chunks,
        vec![Chunk::Abort {
            cause: Some(CAUSE_PROTOCOL_VIOLATION),
            reflected: false,
        }]
    );
    // Our connector requires it: the INIT ACK ends the attempt.
    let mut l = Listener::new(cfg(2), [7; 32], 2);
    let mut c = Connector::new(with_key(1, b"k"), 1);
    let init = c.poll_transmit(Time::ZERO).unwrap();
    let ListenOutcome::Reply(ack) = l.handle(Time::ZERO, &init) else {
        panic!("INIT ACK expected")
    };
    assert_eq!(c.handle_packet(&ack), Err(SetupError::AuthUnsupported));
    // Neither requires it: no session, and no AUTH parameters on the wire.
    let (c, s) = handshake();
    assert!(c.auth.is_none() && s.auth.is_none());
    assert!(!c.peer_extensions.contains(&chunk_type::AUTH));
}

#[test]
fn the_listener_refuses_forged_altered_misaddressed_and_stale_cookies() {
    let mut c = Connector::new(cfg(1), 1);
    let mut l = Listener::new(cfg(2), [7; 32], 2);
    let t0 = Time::from_nanos(5);
    let ListenOutcome::Reply(ack) = l.handle(t0, &c.poll_transmit(t0).unwrap()) else {
        panic!()
    };
    c.handle_packet(&ack).unwrap();
    let echo = c.poll_transmit(t0).unwrap();
    let Chunk::CookieEcho { cookie } = &echo.chunks[0] else {
        panic!()
    };
    let with = |cookie: Vec<u8>, vtag: u32| Packet {
        vtag,
        chunks: vec![Chunk::CookieEcho {
            cookie: Bytes::from(cookie),
        }],
    };
    // One flipped bit in the body.
    let mut altered = cookie.to_vec();
    altered[3] ^= 1;
    assert_eq!(
        l.handle(t0, &with(altered, echo.vtag)),
        ListenOutcome::Drop("cookie authentication failed")
    );
    // Another listener's key.
    let mut other = Listener::new(cfg(2), [8; 32], 2);
    assert_eq!(
        other.handle(t0, &echo),
        ListenOutcome::Drop("cookie authentication failed")
    );
    // The right cookie under the wrong tag.
    assert_eq!(
        l.handle(t0, &with(cookie.to_vec(), echo.vtag ^ 1)),
        ListenOutcome::Drop("COOKIE ECHO with a wrong verification tag")
    );
    // Too late.
    let late = t0 + Duration::from_secs(61);
    assert_eq!(l.handle(late, &echo), ListenOutcome::Drop("stale cookie"));
    // In time: accepted.
    assert!(matches!(
        l.handle(t0 + Duration::from_secs(59), &echo),
        ListenOutcome::Established(..)
    ));
}

#[test]
fn an_invalid_init_is_aborted_and_a_lost_init_is_resent_with_backoff() {
    let mut l = Listener::new(cfg(2), [7; 32], 2);
    let bad = Packet {
        vtag: 0,
        chunks: vec![Chunk::Init(InitChunk {
            initiate_tag: 9,
            a_rwnd: 100, // below 1500
            outbound_streams: 1,
            inbound_streams: 1,
            initial_tsn: 0,
            params: vec![],
        })],
    };
    assert_eq!(
        l.handle(Time::ZERO, &bad),
        ListenOutcome::Reply(abort(9, CAUSE_INVALID_MANDATORY_PARAMETER))
    );
    let mut c = Connector::new(
        SetupConfig {
            max_init_retrans: 2,
            ..cfg(1)
        },
        1,
    );
    assert!(c.poll_transmit(Time::ZERO).is_some());
    assert!(c.poll_transmit(Time::ZERO).is_none(), "once per T1");
    // T1 = 3 s, then 6 s, then give up.
    assert_eq!(c.poll_timeout(), Some(Time::ZERO + Duration::from_secs(3)));
    c.handle_timeout(Time::ZERO + Duration::from_secs(3))
        .unwrap();
    let t = Time::ZERO + Duration::from_secs(3);
    assert!(c.poll_transmit(t).is_some());
    assert_eq!(c.poll_timeout(), Some(t + Duration::from_secs(6)));
    c.handle_timeout(t + Duration::from_secs(6)).unwrap();
    let t = t + Duration::from_secs(6);
    c.poll_transmit(t);
    assert_eq!(
        c.handle_timeout(t + Duration::from_secs(12)),
        Err(SetupError::TimedOut)
    );
    // The doubling stops at RTO.Max: 3, 6, 10, 10 s with RTO.Max 10 s.
    let mut c = Connector::new(
        SetupConfig {
            rto_max: Duration::from_secs(10),
            ..cfg(1)
        },
        1,
    );
    let mut t = Time::ZERO;
    for want in [3, 6, 10, 10] {
        c.poll_transmit(t);
        let next = c.poll_timeout().unwrap();
        assert_eq!(next, t + Duration::from_secs(want));
        t = next;
        c.handle_timeout(t).unwrap();
    }
    // A packet under another tag is counted and ignored.
    let mut c = Connector::new(cfg(1), 1);
    c.poll_transmit(Time::ZERO);
    assert_eq!(
        c.handle_packet(&Packet {
            vtag: 12345,
            chunks: vec![Chunk::CookieAck]
        }),
        Ok(None)
    );
    assert_eq!(c.bad_vtag, 1);
}

/// A padded INIT (RFC 4820 PAD) is at least the size asked for, no larger than needed,
/// and at least as large as the INIT ACK that answers it — with authentication and a
/// resume offer too — while the listener ignores the padding and the handshake ends as
/// without it.
#[test]
fn a_padded_init_is_no_smaller_than_its_init_ack_and_changes_nothing_else() {
    let keyed = |last| SetupConfig {
        auth: Some(crate::auth::AuthConfig::with_key(b"k".to_vec())),
        extra_params: vec![InitParam::Unknown {
            ptype: 0x8123,
            value: vec![1u8; 40].into(),
        }],
        ..cfg(last)
    };
    for (client, server) in [(cfg(1), cfg(2)), (keyed(1), keyed(2))] {
        let padded = SetupConfig {
            pad_init_to: INIT_PADDED_LEN,
            ..client.clone()
        };
        let now = Time::from_nanos(1);
        let mut c = Connector::new(padded.clone(), 1);
        let init = c.poll_transmit(now).unwrap();
        let (raw, init) = on_the_wire(&init, None);
        assert!(
            (INIT_PADDED_LEN..INIT_PADDED_LEN + 4).contains(&raw.len()),
            "INIT of {} bytes",
            raw.len()
        );
        let mut l = Listener::new(server.clone(), [7; 32], 2);
        let ListenOutcome::Reply(ack) = l.handle(now, &init) else {
            panic!("INIT ACK expected")
        };
        assert!(
            ack.wire_len() <= raw.len(),
            "INIT ACK {} bytes",
            ack.wire_len()
        );
        let (plain, _) = handshake_with(client, server.clone());
        let (with_pad, _) = handshake_with(padded, server);
        assert_eq!(plain.peer_addresses, with_pad.peer_addresses);
        assert_eq!(plain.peer_extensions, with_pad.peer_extensions);
        assert_eq!(plain.peer_unknown_params, with_pad.peer_unknown_params);
    }
}

/// ECN (RFC 9260 Appendix A) is used only when both INIT and INIT ACK carry the ECN
/// Capable parameter: each side learns whether the other offered it, and an
/// association runs ECN when its own configuration offers it too. The parameter
/// survives the wire (an empty TLV of type 0x8000).
#[test]
fn ecn_is_agreed_only_when_both_ends_offer_it() {
    for (client_ecn, server_ecn) in [(false, false), (true, false), (false, true), (true, true)] {
        let client = SetupConfig {
            ecn: client_ecn,
            ..cfg(1)
        };
        let server = SetupConfig {
            ecn: server_ecn,
            ..cfg(2)
        };
        let mut c = Connector::new(client.clone(), 1);
        let init = c.poll_transmit(Time::ZERO).unwrap();
        let (_, init) = on_the_wire(&init, None);
        let Some(Chunk::Init(i)) = init.chunks.first() else {
            panic!("INIT expected")
        };
        assert_eq!(offers_ecn(i), client_ecn);
        let (c, s) = handshake_with(client, server);
        assert_eq!(
            (c.init.peer_ecn, s.init.peer_ecn),
            (server_ecn, client_ecn),
            "client {client_ecn}, server {server_ecn}"
        );
    }
}
