//! RFC 4895 authentication against usrsctp: a shared key both ways, and a wrong key.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cmt_core::auth::{AuthConfig, AUTH_CHUNK};
use cmt_core::packet::Chunk;
use cmt_interop::usrsctp;
use cmt_net::transfer::{send, Options};

use super::{check, data, sha, they_receive, tshark_verdict, we_receive, we_send, Env, OUR_PORT};

/// Gives usrsctp socket `s` the endpoint key `key` and makes it require DATA and SACK
/// authenticated (both are kept for the socket's life).
pub(super) fn require_auth(s: &usrsctp::Socket, key: &[u8]) -> std::io::Result<()> {
    s.set_auth_key(key)?;
    s.require_auth(0)?; // DATA
    s.require_auth(3) // SACK
}

/// The key both stacks are given in the authentication tests.
const KEY: &[u8] = b"a key both ends were given out of band";

/// Per direction of a capture, the packets with DATA or SACK, those whose first DATA or
/// SACK comes after an AUTH chunk, and the HMAC identifiers the AUTH chunks used.
#[derive(Debug, Default)]
struct Signed {
    carrying: usize,
    signed: usize,
    hmac_ids: Vec<u16>,
}

fn signed_by_direction(cap: &std::path::Path) -> Result<(Signed, Signed), String> {
    let records = cmt_core::pcap::read(&std::fs::read(cap).map_err(|e| e.to_string())?)?;
    let (mut ours, mut theirs) = (Signed::default(), Signed::default());
    for rec in &records {
        let chunks = cmt_core::wire::decode(&rec.sctp)
            .map_err(|e| e.to_string())?
            .packet
            .chunks;
        let Some(first) = chunks
            .iter()
            .position(|c| matches!(c, Chunk::Data(_) | Chunk::Sack(_)))
        else {
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
        }
    }
    Ok((ours, theirs))
}

/// RFC 4895 with a shared key, both ways: usrsctp requires DATA and SACK
/// authenticated and so do we. usrsctp delivering our data proves it verified our
/// HMACs; our receiver storing its data proves we verified its HMACs; the capture shows
/// that every packet with DATA or SACK carried an AUTH chunk in front of them.
pub(super) fn authenticated_both_ways_with_a_shared_key(env: &Env) -> Result<String, String> {
    require_auth(&env.listener, KEY).map_err(|e| e.to_string())?;
    // Us → usrsctp.
    let d = data(4_242, 4_000_000);
    let cap = env.dir.join("auth.pcap");
    let o = Options {
        auth: Some(AuthConfig::with_key(KEY.to_vec())),
        pcap: Some(cap.clone()),
        ..env.options()
    };
    let (r, got) = we_send(env, &d, &o)?;
    check(got.data == d, || "data differs (us → usrsctp)".into())?;
    let (ours, theirs) = signed_by_direction(&cap)?;
    check(ours.carrying > 1000 && ours.signed == ours.carrying, || {
        format!("our packets: {ours:?}")
    })?;
    check(
        theirs.carrying > 100 && theirs.signed == theirs.carrying,
        || format!("usrsctp's packets: {theirs:?}"),
    )?;
    let wireshark = tshark_verdict(
        &cap,
        cmt_core::pcap::read(&std::fs::read(&cap).map_err(|e| e.to_string())?)?.len(),
    )?;
    // usrsctp → us.
    let d = data(2_424, 4_000_000);
    let rr = we_receive(
        env,
        1,
        &env.dir.join("auth.bin"),
        &d,
        false,
        false,
        Some(KEY),
    )?
    .ours?;
    check(rr.sha256 == sha(&d), || {
        "data differs (usrsctp → us)".into()
    })?;
    Ok(format!(
        "us → usrsctp {:.0} Mbit/s, {}/{} of our DATA packets signed (HMAC ids {:?}), {}/{} of usrsctp's SACKs (ids {:?}); usrsctp → us {:.0} Mbit/s; {wireshark}",
        r.goodput_mbps(),
        ours.signed,
        ours.carrying,
        ours.hmac_ids,
        theirs.signed,
        theirs.carrying,
        theirs.hmac_ids,
        rr.goodput_mbps()
    ))
}

/// With another key than usrsctp's, none of our DATA is accepted: usrsctp reads no
/// byte, our sender gives up at its time limit and its ABORT ends usrsctp's read.
pub(super) fn a_wrong_key_gets_no_byte_into_usrsctp(env: &Env) -> Result<String, String> {
    require_auth(&env.listener, KEY).map_err(|e| e.to_string())?;
    let seen = Arc::new(AtomicU64::new(0));
    let seen2 = seen.clone();
    let them = they_receive(env, move |total| {
        seen2.store(total as u64, Ordering::Relaxed)
    });
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
    check(e.contains("timed out"), || format!("our sender: {e}"))?;
    let theirs = them.join().map_err(|_| "usrsctp: thread panicked")?;
    let bytes = seen.load(Ordering::Relaxed);
    check(bytes == 0, || format!("usrsctp read {bytes} bytes"))?;
    check(theirs.is_err(), || "usrsctp's read ended normally".into())?;
    Ok(format!(
        "our sender: \"{e}\"; usrsctp read 0 bytes, then \"{}\"",
        theirs.err().map(|e| e.to_string()).unwrap_or_default()
    ))
}
