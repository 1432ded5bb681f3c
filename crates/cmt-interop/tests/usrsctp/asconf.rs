//! RFC 5061 dynamic address reconfiguration against usrsctp, both ways: usrsctp adds
//! an address and removes its first one mid-association (`usrsctp_bindx`) and we
//! follow; our sender's interface is readdressed mid-transfer and usrsctp follows our
//! ADD-IP / DEL-IP. ASCONF and ASCONF-ACK are authenticated (RFC 4895 under an empty
//! key: neither end was given one).

use std::net::{IpAddr, Ipv4Addr};

use bytes::Bytes;
use cmt_core::addr_conf::{AddrOp, AsconfAckChunk, AsconfChunk};
use cmt_core::packet::Chunk;
use cmt_core::wire::chunk_type;
use cmt_interop::netns;
use cmt_net::transfer::{send, Options, Outputs};

use super::{check, data, join, sha, they_receive, we_receive, Env, TheirSend, OUR_PORT};

/// What a capture shows of reconfiguration: each side's ASCONFs and ASCONF-ACKs (with
/// the AUTH chunk in front of them, or not), and the destinations each side sent to.
#[derive(Debug, Default)]
struct Seen {
    ours: Side,
    theirs: Side,
}

#[derive(Debug, Default)]
struct Side {
    asconfs: Vec<AsconfChunk>,
    acks: Vec<AsconfAckChunk>,
    /// ASCONF or ASCONF-ACK chunks with no AUTH chunk before them in their packet.
    unsigned: usize,
    /// (destination address, DATA packets, all packets)
    to: Vec<(IpAddr, usize, usize)>,
}

fn read(cap: &std::path::Path) -> Result<Seen, String> {
    let records = cmt_sim::pcap::read(&std::fs::read(cap).map_err(|e| e.to_string())?)?;
    let mut seen = Seen::default();
    for rec in &records {
        let chunks = cmt_core::wire::decode(&rec.sctp)
            .map_err(|e| e.to_string())?
            .packet
            .chunks;
        let side = if rec.src.1 == OUR_PORT {
            &mut seen.ours
        } else {
            &mut seen.theirs
        };
        let data = chunks.iter().any(|c| matches!(c, Chunk::Data(_)));
        match side.to.iter_mut().find(|t| t.0 == rec.dst.0) {
            Some(t) => (t.1, t.2) = (t.1 + usize::from(data), t.2 + 1),
            None => side.to.push((rec.dst.0, usize::from(data), 1)),
        }
        let mut signed = false;
        for c in chunks {
            signed |= c.chunk_type() == chunk_type::AUTH;
            match c {
                Chunk::Asconf(a) => side.asconfs.push(a),
                Chunk::AsconfAck(a) => side.acks.push(a),
                _ => continue,
            }
            side.unsigned += usize::from(!signed);
        }
    }
    Ok(seen)
}

/// Every ASCONF of `from` answered by `to` with an ASCONF-ACK of its serial carrying no
/// refusal; returns the operations asked for.
fn answered(from: &Side, to: &Side, who: &str) -> Result<Vec<AddrOp>, String> {
    let mut ops = Vec::new();
    for a in &from.asconfs {
        let ack = to.acks.iter().find(|k| k.serial == a.serial);
        let refused = ack.map(|k| k.outcomes(&a.params).iter().any(Result::is_err));
        check(refused == Some(false), || {
            format!("{who}'s ASCONF {a:?} answered {ack:?}")
        })?;
        ops.extend(a.params.iter().map(|p| p.op.clone()));
    }
    check(from.unsigned + to.unsigned == 0, || {
        "an ASCONF or ASCONF-ACK without an AUTH chunk".into()
    })?;
    Ok(ops)
}

pub(super) fn usrsctp_moves_to_another_address_and_we_follow(env: &Env) -> Result<String, String> {
    if !env.multihomed() {
        return Err("skipped: needs network namespaces (root or user namespaces)".into());
    }
    let d = data(5_003, 12_000_000);
    let cap = env.dir.join("their-handover.pcap");
    let attempt = || {
        let how = TheirSend {
            handover: true,
            capture: Some(cap.clone()),
            ..TheirSend::default()
        };
        we_receive(env, 2, &env.dir.join("handover.bin"), &d, how).and_then(|x| x.ours)
    };
    // Open defect, not understood: in about one full CI run of three (never in 30 runs
    // by hand) usrsctp aborts the association during its own handover. It is retried
    // once, and the retry is reported in the test's line, so that it stays visible; a
    // second abort fails the test.
    let (r, retried) = match attempt() {
        Err(e) if e.contains("the peer aborted") => {
            // What led to the ABORT, read from the first attempt's capture before the
            // retry overwrites it: the evidence the next look at this defect needs.
            let context = abort_context(&cap).unwrap_or_else(|e| format!("capture: {e}"));
            (attempt()?, Some(format!("{e} [{context}]")))
        }
        r => (r?, None),
    };
    check(r.sha256 == sha(&d), || "data differs".into())?;
    let seen = read(&cap)?;
    let ops = answered(&seen.theirs, &seen.ours, "usrsctp")?;
    let (first, second) = (IpAddr::V4(env.paths[0].1), IpAddr::V4(env.paths[1].1));
    check(
        ops.contains(&AddrOp::Add(second)) && ops.contains(&AddrOp::Delete(first)),
        || format!("usrsctp asked for {ops:?}"),
    )?;
    check(r.routes.iter().any(|(_, to)| to.ip() == second), || {
        format!("we made no path to usrsctp's added address: {:?}", r.routes)
    })?;
    let to_second = seen.ours.to.iter().find(|t| t.0 == second);
    check(to_second.is_some_and(|t| t.2 > 0), || {
        format!("we sent nothing to {second}: {:?}", seen.ours.to)
    })?;
    let retry = retried.map_or(String::new(), |e| {
        format!("; RETRIED once, usrsctp aborted the first attempt: {e}")
    });
    Ok(format!(
        "usrsctp asked {ops:?}, all accepted (authenticated both ways); our packets per \
         destination {:?}; file intact{retry}",
        seen.ours.to
    ))
}

/// The ABORT in a capture (when, from where to where, its T bit and cause) and the six
/// packets before it, each as time before the ABORT, addresses and chunk types.
fn abort_context(cap: &std::path::Path) -> Result<String, String> {
    let records = cmt_sim::pcap::read(&std::fs::read(cap).map_err(|e| e.to_string())?)?;
    let chunks = |sctp: &[u8]| {
        cmt_core::wire::decode(sctp).map_or_else(|_| Vec::new(), |d| d.packet.chunks.to_vec())
    };
    let at = records
        .iter()
        .position(|r| {
            chunks(&r.sctp)
                .iter()
                .any(|c| matches!(c, Chunk::Abort { .. }))
        })
        .ok_or("no ABORT in the capture")?;
    let abort = &records[at];
    let what = chunks(&abort.sctp)
        .into_iter()
        .find_map(|c| match c {
            Chunk::Abort { cause, reflected } => Some(format!("T {reflected}, cause {cause:?}")),
            _ => None,
        })
        .unwrap_or_default();
    let mut out = format!(
        "ABORT {:?} -> {:?}, {what}; before it:",
        abort.src, abort.dst
    );
    for r in &records[at.saturating_sub(6)..at] {
        let types: Vec<String> = chunks(&r.sctp)
            .iter()
            .map(|c| format!("{:#04x}", c.chunk_type()))
            .collect();
        let ms = (abort.ts_ns.saturating_sub(r.ts_ns)) as f64 / 1e6;
        out += &format!(" -{ms:.1} ms {:?}->{:?} {types:?};", r.src, r.dst);
    }
    Ok(out)
}

pub(super) fn we_move_to_another_address_and_usrsctp_follows(env: &Env) -> Result<String, String> {
    if !env.multihomed() {
        return Err("skipped: needs network namespaces (root or user namespaces)".into());
    }
    let (old, new) = (env.paths[1].0, Ipv4Addr::new(10, 77, 1, 11));
    let d = data(6_007, 16_000_000);
    let cap = env.dir.join("our-handover.pcap");
    let o = Options {
        interfaces: vec![None, Some("cmt1".into())],
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..env.options()
    };
    let mut moved = None;
    let them = they_receive(env, move |n| {
        if n >= 4_000_000 && moved.is_none() {
            let r = netns::ip(&["addr", "del", &format!("{old}/24"), "dev", "cmt1"])
                .and_then(|()| netns::ip(&["addr", "add", &format!("{new}/24"), "dev", "cmt1"]));
            moved = Some(r);
        }
    });
    let r = env.rt.block_on(send(
        &[env.ours(0), env.ours(1)],
        &[env.theirs(0), env.theirs(1)],
        Bytes::from(d.clone()),
        &o,
    ));
    let got = join(them, "usrsctp");
    // Put the namespace back for the tests after this one, whatever happened.
    let _ = netns::ip(&["addr", "del", &format!("{new}/24"), "dev", "cmt1"]);
    let _ = netns::ip(&["addr", "add", &format!("{old}/24"), "dev", "cmt1"]);
    let (r, got) = (r?, got?);
    check(got.data == d, || "data differs".into())?;
    let seen = read(&cap)?;
    let ops = answered(&seen.ours, &seen.theirs, "our")?;
    let (old, new) = (IpAddr::V4(old), IpAddr::V4(new));
    // One ASCONF with both, or a DEL-IP when the address went and an ADD-IP when the
    // new one came (netlink reports them one by one).
    let both =
        ops.len() == 2 && ops.contains(&AddrOp::Add(new)) && ops.contains(&AddrOp::Delete(old));
    check(both, || format!("we asked for {ops:?}"))?;
    let to_new = seen.theirs.to.iter().find(|t| t.0 == new);
    check(to_new.is_some_and(|t| t.2 > 0), || {
        format!("usrsctp sent nothing to {new}: {:?}", seen.theirs.to)
    })?;
    check(r.routes[1].0.ip() == new, || {
        format!("our path 1 is {:?}", r.routes[1])
    })?;
    Ok(format!(
        "we asked {ops:?}, usrsctp accepted (authenticated both ways); usrsctp's packets per \
         destination {:?}; file intact",
        seen.theirs.to
    ))
}
