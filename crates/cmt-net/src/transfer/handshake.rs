//! Before the connection: what this end offers in its handshake, the outputs that
//! must open before a peer is involved, and the refusal of a peer that cannot confirm
//! files.

use std::net::SocketAddr;

use cmt_core::auth::AuthConfig;
use cmt_core::setup::{Established as SetupDone, SetupConfig, CAUSE_USER_INITIATED_ABORT};
use cmt_core::wire::chunk_type;
use cmt_core::{Chunk, Packet};
use cmt_sim::packet_trace::PacketTrace;

use super::{error::TransferError, options::Options, routes::Routes};
use crate::io::Sockets;

/// What this end offers in its INIT or INIT ACK: its receive buffer and addresses, the
/// chunk types it announces (FILE-DIGEST always; receiver-driven rates, ASCONF and a
/// sender's wish for ARRIVALS when the options ask), authentication, and the INIT's padding.
pub(super) fn setup_config(o: &Options, locals: &[SocketAddr]) -> SetupConfig {
    let mut extensions = vec![chunk_type::FILE_DIGEST];
    if o.receiver_rates {
        extensions.splice(0..0, [chunk_type::ROUND_INFO, chunk_type::RATE_ADVERT]);
    }
    if o.send.return_arrivals {
        extensions.push(chunk_type::ARRIVALS);
    }
    let mut auth = o.auth.clone();
    if o.reconfigure {
        extensions.extend([chunk_type::ASCONF, chunk_type::ASCONF_ACK]);
        // RFC 5061 §4.1.1: no reconfiguration without authentication.
        auth.get_or_insert_with(AuthConfig::for_reconfiguration);
    }
    // A sender's INIT padded so that no INIT ACK is larger (within the path MTU): a
    // serving receiver answers it whatever a spoofed flood did to its reply budget, and
    // a crowd behind one address at the speed of its handshakes (docs/runtime.md).
    let room = o.mtu.saturating_sub(super::options::overhead_of(locals)) as usize;
    SetupConfig {
        rbuf: o.rbuf,
        addresses: locals.iter().map(|a| a.ip()).collect(),
        extensions,
        auth,
        pad_init_to: cmt_core::setup::INIT_PADDED_LEN.min(room),
        ecn: o.ecn,
        ..SetupConfig::default()
    }
}

/// Whether the peer confirms files (FILE-DIGEST both ways). A peer that cannot is
/// refused with an ABORT unless [`Options::allow_unconfirmed`] says otherwise.
pub(super) async fn confirms(
    socks: &mut Sockets,
    routes: &Routes,
    est: &SetupDone,
    o: &Options,
) -> Result<bool, TransferError> {
    if est.peer_extensions.contains(&chunk_type::FILE_DIGEST) {
        return Ok(true);
    }
    if o.allow_unconfirmed {
        return Ok(false);
    }
    Err(refuse(
        socks,
        routes,
        est,
        "the peer cannot confirm the file (no FILE-DIGEST support: not a cmtlab peer); \
         --allow-unconfirmed transfers without that check",
    )
    .await)
}

/// Ends an association just set up, before any data: an ABORT ("User-Initiated Abort")
/// tells the peer, and `why` is the setup's error.
pub(super) async fn refuse(
    socks: &mut Sockets,
    routes: &Routes,
    est: &SetupDone,
    why: &str,
) -> TransferError {
    let abort = Packet {
        vtag: est.init.peer_vtag,
        chunks: vec![Chunk::Abort {
            cause: Some(CAUSE_USER_INITIATED_ABORT),
            reflected: false,
        }],
    };
    let (local, remote) = routes.paths[0];
    let _ = socks.send(local, remote, routes.peer_port, &abort).await;
    TransferError::Setup(why.to_string())
}

/// A receiver's offer: [`setup_config`] and ARRIVALS, which it returns to a sender
/// that asks.
pub(super) fn receiver_config(o: &Options, locals: &[SocketAddr]) -> SetupConfig {
    let mut cfg = setup_config(o, locals);
    cfg.extensions.push(chunk_type::ARRIVALS);
    cfg
}

/// Opens the outputs that must exist before a peer is involved (`--pcap`, `--trace`),
/// so that a path that cannot be written fails at once: the capture starts now, the
/// trace is returned for [`start_trace`] once the paths are known.
pub(super) fn open_outputs(
    socks: &mut Sockets,
    o: &Options,
) -> Result<Option<PacketTrace>, String> {
    if let Some(p) = &o.outputs.pcap {
        socks.start_capture(p)?;
    }
    o.outputs
        .trace
        .as_ref()
        .map(|file| PacketTrace::create(file, Vec::new()))
        .transpose()
}
