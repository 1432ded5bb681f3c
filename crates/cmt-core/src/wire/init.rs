//! INIT / INIT ACK and HEARTBEAT / HEARTBEAT ACK values: fixed fields followed by
//! parameters (RFC 9260 §3.3.2–3.3.6).

use super::fields::pad4;
use super::fields::{put_param, put_u16, put_u32, tlvs, Reader};
use super::{param_type, WireError};
use crate::packet::{HeartbeatInfo, InitChunk, InitParam};

pub(super) fn put_init(out: &mut Vec<u8>, i: &InitChunk) {
    put_u32(out, i.initiate_tag);
    put_u32(out, i.a_rwnd);
    put_u16(out, i.outbound_streams);
    put_u16(out, i.inbound_streams);
    put_u32(out, i.initial_tsn);
    for p in &i.params {
        match p {
            InitParam::Ipv4(a) => put_param(out, param_type::IPV4, &a.octets()),
            InitParam::Ipv6(a) => put_param(out, param_type::IPV6, &a.octets()),
            InitParam::StateCookie(c) => put_param(out, param_type::STATE_COOKIE, c),
            InitParam::SupportedExtensions(t) => {
                put_param(out, param_type::SUPPORTED_EXTENSIONS, t)
            }
            InitParam::Unknown { ptype, value } => put_param(out, *ptype, value),
        }
    }
}

pub(super) fn put_heartbeat(out: &mut Vec<u8>, h: &HeartbeatInfo) {
    let mut v = Vec::with_capacity(18);
    v.extend_from_slice(&h.path.to_be_bytes());
    v.extend_from_slice(&h.sent_ns.to_be_bytes());
    v.extend_from_slice(&h.nonce.to_be_bytes());
    put_param(out, param_type::HEARTBEAT_INFO, &v);
}

pub(super) fn parse_heartbeat(v: &[u8], at: usize) -> Result<HeartbeatInfo, WireError> {
    let params = tlvs(v, at, "truncated heartbeat parameter")?;
    let [(t, value, off)] = params.as_slice() else {
        return Err(WireError {
            offset: at,
            what: "heartbeat needs exactly one parameter",
        });
    };
    if *t != param_type::HEARTBEAT_INFO || value.len() != 18 {
        return Err(WireError {
            offset: *off,
            what: "heartbeat info is not ours",
        });
    }
    let mut r = Reader {
        buf: value,
        pos: 0,
        base: off + 4,
    };
    Ok(HeartbeatInfo {
        path: r.u16("heartbeat path")?,
        sent_ns: r.u64("heartbeat time")?,
        nonce: r.u64("heartbeat nonce")?,
    })
}

pub(super) fn parse_init(v: &[u8], at: usize) -> Result<InitChunk, WireError> {
    let mut r = Reader {
        buf: v,
        pos: 0,
        base: at,
    };
    let initiate_tag = r.u32("truncated INIT")?;
    let a_rwnd = r.u32("truncated INIT")?;
    let outbound_streams = r.u16("truncated INIT")?;
    let inbound_streams = r.u16("truncated INIT")?;
    let initial_tsn = r.u32("truncated INIT")?;
    let mut params = Vec::new();
    for (t, value, off) in tlvs(&v[16..], at + 16, "truncated INIT parameter")? {
        params.push(match t {
            param_type::IPV4 => {
                let o: [u8; 4] = value[..].try_into().map_err(|_| WireError {
                    offset: off,
                    what: "IPv4 address is not 4 bytes",
                })?;
                InitParam::Ipv4(o.into())
            }
            param_type::IPV6 => {
                let o: [u8; 16] = value[..].try_into().map_err(|_| WireError {
                    offset: off,
                    what: "IPv6 address is not 16 bytes",
                })?;
                InitParam::Ipv6(o.into())
            }
            param_type::STATE_COOKIE => InitParam::StateCookie(value),
            param_type::SUPPORTED_EXTENSIONS => InitParam::SupportedExtensions(value.to_vec()),
            ptype => InitParam::Unknown { ptype, value },
        });
    }
    Ok(InitChunk {
        initiate_tag,
        a_rwnd,
        outbound_streams,
        inbound_streams,
        initial_tsn,
        params,
    })
}

impl InitParam {
    /// Length on the wire including padding.
    pub fn wire_len(&self) -> usize {
        pad4(
            4 + match self {
                InitParam::Ipv4(_) => 4,
                InitParam::Ipv6(_) => 16,
                InitParam::StateCookie(c) => c.len(),
                InitParam::SupportedExtensions(t) => t.len(),
                InitParam::Unknown { value, .. } => value.len(),
            },
        )
    }
}

/// Length of an INIT / INIT ACK chunk: header, fixed fields, parameters.
pub(super) fn init_len(i: &InitChunk) -> usize {
    20 + i.params.iter().map(InitParam::wire_len).sum::<usize>()
}
