//! ECN negotiation against usrsctp (RFC 9260 Appendix A): usrsctp offers ECN (its
//! `ecn_enable` is on by default), so a sender of ours with ECN on finds the ECN
//! Capable parameter in usrsctp's INIT ACK, uses ECN — DATA then leaves ECT(0), with
//! room kept in each packet for a CWR — and the transfer stays intact and
//! well-formed for Wireshark's dissector.

use cmt_core::packet::{Chunk, InitParam};
use cmt_core::wire::param_type::ECN_CAPABLE;
use cmt_net::transfer::{Options, Outputs};

use super::{check, data, sha, tshark_verdict, we_send, Env};

/// Whether an INIT or INIT ACK chunk carries the ECN Capable parameter.
fn offers_ecn(c: &Chunk) -> Option<bool> {
    match c {
        Chunk::Init(i) | Chunk::InitAck(i) => Some(
            i.params
                .iter()
                .any(|p| matches!(p, InitParam::Unknown { ptype, .. } if *ptype == ECN_CAPABLE)),
        ),
        _ => None,
    }
}

pub(super) fn ecn_is_agreed_with_usrsctp(env: &Env) -> Result<String, String> {
    let d = data(91, 2_000_000);
    let cap = env.dir.join("ecn.pcap");
    let o = Options {
        ecn: true,
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..env.options()
    };
    let (r, got) = we_send(env, &d, &o)?;
    check(got.data == d && sha(&got.data) == r.sha256, || {
        "data differs".into()
    })?;
    let records = cmt_sim::pcap::read(&std::fs::read(&cap).map_err(|e| e.to_string())?)?;
    let (mut ours, mut theirs) = (None, None);
    for rec in &records {
        let p = cmt_core::wire::decode(&rec.sctp)
            .map_err(|e| format!("{e:?}"))?
            .packet;
        for c in &p.chunks {
            match (c, offers_ecn(c)) {
                (Chunk::Init(_), Some(o)) => ours = Some(o),
                (Chunk::InitAck(_), Some(o)) => theirs = Some(o),
                _ => {}
            }
        }
    }
    check(ours == Some(true), || {
        format!("our INIT offered ECN: {ours:?}")
    })?;
    check(theirs == Some(true), || {
        format!("usrsctp's INIT ACK offered ECN: {theirs:?}")
    })?;
    check(r.ecn, || "ECN not in use though both offered it".into())?;
    let wireshark = tshark_verdict(&cap, records.len())?;
    Ok(format!(
        "both offered ECN, in use; {:.0} Mbit/s; {wireshark}",
        r.goodput_mbps()
    ))
}
