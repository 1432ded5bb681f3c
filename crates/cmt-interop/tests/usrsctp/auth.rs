//! RFC 4895 authentication against usrsctp: a shared key both ways, and a wrong key.

use bytes::Bytes;
use cmt_core::auth::{AuthConfig, AUTH_CHUNK, CHANGES_STATE};
use cmt_core::packet::Chunk;
use cmt_interop::usrsctp;
use cmt_net::transfer::{send, Options, Outputs};

use super::{
    check, data, sha, they_receive, tshark_verdict, we_receive, we_send, Env, TheirSend, OUR_PORT,
};

/// Gives usrsctp socket `s` the endpoint key `key` and makes it require authenticated
/// every chunk type our ends require (`cmt_core::auth::CHANGES_STATE`: both are kept
/// for the socket's life), so each direction is signed for everything that changes
/// state.
pub(super) fn require_auth(s: &usrsctp::Socket, key: &[u8]) -> std::io::Result<()> {
    s.set_auth_key(key)?;
    for t in cmt_core::auth::CHANGES_STATE {
        s.require_auth(t)?;
    }
    Ok(())
}

/// The key both stacks are given in the authentication tests.
const KEY: &[u8] = b"a key both ends were given out of band";

/// Per direction of a capture, the packets with a chunk that must be authenticated
/// (`CHANGES_STATE`), those whose first such chunk comes after an AUTH chunk, the chunk
/// types seen signed and the HMAC identifiers the AUTH chunks used.
#[derive(Debug, Default)]
struct Signed {
    carrying: usize,
    signed: usize,
    types: Vec<u8>,
    hmac_ids: Vec<u16>,
}

fn signed_by_direction(cap: &std::path::Path) -> Result<(Signed, Signed), String> {
    let records = cmt_sim::pcap::read(&std::fs::read(cap).map_err(|e| e.to_string())?)?;
    let (mut ours, mut theirs) = (Signed::default(), Signed::default());
    for rec in &records {
        let chunks = cmt_core::wire::decode(&rec.sctp)
            .map_err(|e| e.to_string())?
            .packet
            .chunks;
        let required = |c: &Chunk| CHANGES_STATE.contains(&c.chunk_type());
        let Some(first) = chunks.iter().position(required) else {
            continue;
        };
        let side = if rec.src.1 == OUR_PORT {
            &mut ours
        } else {
            &mut theirs
        };
        side.carrying += 1;
        let auth = chunks.iter().take(first).find_map(|c| match c {
            Chunk::Unknown {
                chunk_type: AUTH_CHUNK,
                value,
                ..
            } if value.len() >= 4 => Some(u16::from_be_bytes([value[2], value[3]])),
            _ => None,
        });
        if let Some(id) = auth {
            side.signed += 1;
            if !side.hmac_ids.contains(&id) {
                side.hmac_ids.push(id);
            }
            for t in chunks.iter().filter(|c| required(c)).map(Chunk::chunk_type) {
                if !side.types.contains(&t) {
                    side.types.push(t);
                }
            }
        }
    }
    Ok((ours, theirs))
}

/// RFC 4895 with a shared key, both ways: usrsctp requires every chunk type we do
/// authenticated and so do we. usrsctp delivering our data proves it verified our
/// HMACs; our receiver storing its data proves we verified its HMACs; the capture shows
/// that every packet with such a chunk carried an AUTH chunk in front of them — from
/// the COOKIE ECHO and COOKIE ACK to the SHUTDOWN and SHUTDOWN ACK.
pub(super) fn authenticated_both_ways_with_a_shared_key(env: &Env) -> Result<String, String> {
    require_auth(&env.listener, KEY).map_err(|e| e.to_string())?;
    // Us → usrsctp.
    let d = data(4_242, 4_000_000);
    let cap = env.dir.join("auth.pcap");
    let o = Options {
        auth: Some(AuthConfig::with_key(KEY.to_vec())),
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..env.options()
    };
    let (r, got) = we_send(env, &d, &o)?;
    check(got.data == d, || "data differs (us → usrsctp)".into())?;
    let (ours, theirs) = signed_by_direction(&cap)?;
    use cmt_core::wire::chunk_type as t;
    let has = |s: &Signed, want: &[u8]| want.iter().all(|w| s.types.contains(w));
    check(
        ours.carrying > 1000
            && ours.signed == ours.carrying
            && has(&ours, &[t::COOKIE_ECHO, t::DATA, t::SHUTDOWN]),
        || format!("our packets: {ours:?}"),
    )?;
    check(
        theirs.carrying > 100
            && theirs.signed == theirs.carrying
            && has(&theirs, &[t::COOKIE_ACK, t::SACK, t::SHUTDOWN_ACK]),
        || format!("usrsctp's packets: {theirs:?}"),
    )?;
    let wireshark = tshark_verdict(
        &cap,
        cmt_sim::pcap::read(&std::fs::read(&cap).map_err(|e| e.to_string())?)?.len(),
    )?;
    // usrsctp → us.
    let d = data(2_424, 4_000_000);
    let keyed = TheirSend {
        key: Some(KEY.to_vec()),
        ..TheirSend::default()
    };
    let rr = we_receive(env, 1, &env.dir.join("auth.bin"), &d, keyed)?.ours?;
    check(rr.sha256 == sha(&d), || {
        "data differs (usrsctp → us)".into()
    })?;
    Ok(format!(
        "us → usrsctp {:.0} Mbit/s, {}/{} of our packets to sign signed (chunk types {:?}, HMAC ids {:?}), {}/{} of usrsctp's ({:?}, ids {:?}); usrsctp → us {:.0} Mbit/s; {wireshark}",
        r.goodput_mbps(),
        ours.signed,
        ours.carrying,
        ours.types,
        ours.hmac_ids,
        theirs.signed,
        theirs.carrying,
        theirs.types,
        theirs.hmac_ids,
        rr.goodput_mbps()
    ))
}

/// With another key than usrsctp's, not even the association comes up: usrsctp
/// requires the COOKIE ECHO authenticated and drops ours, so our sender gives up at
/// its time limit and usrsctp accepts nothing. A sender with the right key that comes
/// next is the first association usrsctp accepts, and its bytes are all it reads.
pub(super) fn a_wrong_key_gets_no_byte_into_usrsctp(env: &Env) -> Result<String, String> {
    require_auth(&env.listener, KEY).map_err(|e| e.to_string())?;
    let them = they_receive(env, |_| {});
    let o = Options {
        auth: Some(AuthConfig::with_key(b"not the key".to_vec())),
        timeout_s: 4.0,
        ..env.options()
    };
    let ours = env.rt.block_on(send(
        &[env.ours(0)],
        &[env.theirs(0)],
        Bytes::from(data(5, 500_000)),
        &o,
    ));
    let e = ours
        .err()
        .ok_or("our sender succeeded with the wrong key")?
        .to_string();
    check(e.contains("no answer to COOKIE ECHO"), || {
        format!("our sender: {e}")
    })?;
    check(!them.is_finished(), || {
        "usrsctp accepted an association".into()
    })?;
    let right = data(6, 100_000);
    let o = Options {
        auth: Some(AuthConfig::with_key(KEY.to_vec())),
        ..env.options()
    };
    env.rt
        .block_on(send(
            &[env.ours(0)],
            &[env.theirs(0)],
            Bytes::from(right.clone()),
            &o,
        ))
        .map_err(|e| format!("the sender with the right key: {e}"))?;
    let got = them
        .join()
        .map_err(|_| "usrsctp: thread panicked")?
        .map_err(|e| format!("usrsctp: {e}"))?;
    check(got.data == right, || {
        format!(
            "usrsctp read {} bytes, not the right sender's",
            got.data.len()
        )
    })?;
    Ok(format!(
        "our sender with the wrong key: \"{e}\"; usrsctp's first association was the right key's ({} bytes)",
        got.data.len()
    ))
}
