//! ASCONF and ASCONF-ACK values (RFC 5061 §4.1.1, §4.1.2, §4.2).
//!
//! ASCONF: serial number (4), an address parameter (IPv4 type 5 or IPv6 type 6), then
//! requests, each a parameter whose value is a correlation id (4) and, for ADD-IP,
//! DEL-IP and SET-PRIMARY, an address parameter. ASCONF-ACK: serial number (4), then
//! Success Indications (correlation id) and Error Cause Indications (correlation id,
//! then error causes: code (2), length (2), the refused request's parameter).

use std::net::IpAddr;

use super::fields::{put_param, put_u32, tlvs, Reader};
use super::{param_type, WireError};
use crate::addr_conf::{
    asconf_param as ap, AddrOp, AsconfAckChunk, AsconfChunk, AsconfParam, AsconfResponse,
};

fn address_value(a: &IpAddr) -> (u16, Vec<u8>) {
    match a {
        IpAddr::V4(v) => (param_type::IPV4, v.octets().to_vec()),
        IpAddr::V6(v) => (param_type::IPV6, v.octets().to_vec()),
    }
}

/// Appends an address parameter.
fn put_address(out: &mut Vec<u8>, a: &IpAddr) {
    let (t, v) = address_value(a);
    put_param(out, t, &v);
}

/// Encoded length of an address parameter.
fn address_len(a: &IpAddr) -> usize {
    if a.is_ipv4() {
        8
    } else {
        20
    }
}

fn parse_address(t: u16, v: &[u8], at: usize) -> Result<IpAddr, WireError> {
    let bad = |what| WireError { offset: at, what };
    match t {
        param_type::IPV4 => {
            let o: [u8; 4] = v
                .try_into()
                .map_err(|_| bad("IPv4 address is not 4 bytes"))?;
            Ok(IpAddr::from(o))
        }
        param_type::IPV6 => {
            let o: [u8; 16] = v
                .try_into()
                .map_err(|_| bad("IPv6 address is not 16 bytes"))?;
            Ok(IpAddr::from(o))
        }
        _ => Err(bad("expected an IPv4 or IPv6 address parameter")),
    }
}

/// The one address parameter that makes up all of `v`.
fn single_address(v: &[u8], at: usize) -> Result<IpAddr, WireError> {
    match tlvs(v, at, "truncated address parameter")?.as_slice() {
        [(t, value, off)] => parse_address(*t, value, *off),
        _ => Err(WireError {
            offset: at,
            what: "expected exactly one address parameter",
        }),
    }
}

fn op_parts(op: &AddrOp) -> (u16, Vec<u8>) {
    let with_address = |t: u16, a: &IpAddr| {
        let mut v = Vec::with_capacity(20);
        put_address(&mut v, a);
        (t, v)
    };
    match op {
        AddrOp::Add(a) => with_address(ap::ADD_IP, a),
        AddrOp::Delete(a) => with_address(ap::DEL_IP, a),
        AddrOp::SetPrimary(a) => with_address(ap::SET_PRIMARY, a),
        AddrOp::Other { ptype, value } => (*ptype, value.clone()),
    }
}

/// Appends a request parameter: type, length, correlation id, value.
fn put_request(out: &mut Vec<u8>, correlation: u32, op: &AddrOp) {
    let (t, v) = op_parts(op);
    let mut value = correlation.to_be_bytes().to_vec();
    value.extend_from_slice(&v);
    put_param(out, t, &value);
}

/// A request's operation from its parameter type and the value after the correlation
/// id (at `at` in the packet).
fn parse_op(t: u16, rest: &[u8], at: usize) -> Result<AddrOp, WireError> {
    Ok(match t {
        ap::ADD_IP => AddrOp::Add(single_address(rest, at)?),
        ap::DEL_IP => AddrOp::Delete(single_address(rest, at)?),
        ap::SET_PRIMARY => AddrOp::SetPrimary(single_address(rest, at)?),
        ptype => AddrOp::Other {
            ptype,
            value: rest.to_vec(),
        },
    })
}

pub(super) fn put_asconf(out: &mut Vec<u8>, c: &AsconfChunk) {
    put_u32(out, c.serial);
    put_address(out, &c.address);
    for p in &c.params {
        put_request(out, p.correlation, &p.op);
    }
}

pub(super) fn asconf_len(c: &AsconfChunk) -> usize {
    let params: usize = c
        .params
        .iter()
        .map(|p| super::fields::pad4(8 + op_parts(&p.op).1.len()))
        .sum();
    super::fields::pad4(4 + 4 + address_len(&c.address) + params)
}

pub(super) fn parse_asconf(v: &[u8], at: usize) -> Result<AsconfChunk, WireError> {
    let mut r = Reader::at(v, at);
    let serial = r.u32("truncated ASCONF")?;
    let items = tlvs(&v[4..], at + 4, "truncated ASCONF parameter")?;
    let Some(((t, value, off), requests)) = items.split_first() else {
        return Err(r.err("ASCONF without an address parameter"));
    };
    let address = parse_address(*t, value, *off)?;
    let mut params = Vec::with_capacity(requests.len());
    for (t, value, off) in requests {
        if value.len() < 4 {
            return Err(WireError {
                offset: *off,
                what: "ASCONF request without a correlation id",
            });
        }
        let correlation = u32::from_be_bytes([value[0], value[1], value[2], value[3]]);
        let op = parse_op(*t, &value[4..], off + 8)?;
        params.push(AsconfParam { correlation, op });
    }
    Ok(AsconfChunk {
        serial,
        address,
        params,
    })
}

/// The request parameter as it is copied into an error cause, padded.
fn request_tlv(correlation: u32, op: &AddrOp) -> Vec<u8> {
    let mut out = Vec::new();
    put_request(&mut out, correlation, op);
    out.resize(super::fields::pad4(out.len()), 0);
    out
}

fn response_value(r: &AsconfResponse) -> (u16, Vec<u8>) {
    let mut v = r.correlation.to_be_bytes().to_vec();
    match r.error {
        None => (ap::SUCCESS, v),
        Some(cause) => {
            // One error cause: code, length, the refused request's parameter.
            let copied = r
                .refused
                .as_ref()
                .map(|op| request_tlv(r.correlation, op))
                .unwrap_or_default();
            v.extend_from_slice(&cause.to_be_bytes());
            v.extend_from_slice(&(4 + copied.len() as u16).to_be_bytes());
            v.extend_from_slice(&copied);
            (ap::ERROR_CAUSE, v)
        }
    }
}

/// The request copied into an error cause (`v`: the cause's content), if it parses.
fn copied_request(v: &[u8], at: usize) -> Option<AddrOp> {
    let [(t, value, off)] = tlvs(v, at, "").ok()?.try_into().ok()?;
    parse_op(t, value.get(4..)?, off + 8).ok()
}

pub(super) fn put_asconf_ack(out: &mut Vec<u8>, c: &AsconfAckChunk) {
    put_u32(out, c.serial);
    for r in &c.responses {
        let (t, v) = response_value(r);
        put_param(out, t, &v);
    }
}

pub(super) fn asconf_ack_len(c: &AsconfAckChunk) -> usize {
    let params: usize = c
        .responses
        .iter()
        .map(|r| super::fields::pad4(4 + response_value(r).1.len()))
        .sum();
    super::fields::pad4(4 + 4 + params)
}

pub(super) fn parse_asconf_ack(v: &[u8], at: usize) -> Result<AsconfAckChunk, WireError> {
    let mut r = Reader::at(v, at);
    let serial = r.u32("truncated ASCONF-ACK")?;
    let mut responses = Vec::new();
    for (t, value, off) in tlvs(&v[4..], at + 4, "truncated ASCONF-ACK parameter")? {
        if value.len() < 4 {
            return Err(WireError {
                offset: off,
                what: "ASCONF-ACK response without a correlation id",
            });
        }
        let correlation = u32::from_be_bytes([value[0], value[1], value[2], value[3]]);
        let (error, refused) = match t {
            ap::SUCCESS => (None, None),
            ap::ERROR_CAUSE => {
                // The first error cause; a response without one is malformed.
                let head = value.get(4..8).ok_or(WireError {
                    offset: off + 8,
                    what: "error cause indication without a cause",
                })?;
                let code = u16::from_be_bytes([head[0], head[1]]);
                let len = usize::from(u16::from_be_bytes([head[2], head[3]]));
                let content = value.get(8..len.max(4) + 4).unwrap_or(&[]);
                (Some(code), copied_request(content, off + 12))
            }
            _ => continue, // an answer type we never ask for
        };
        responses.push(AsconfResponse {
            correlation,
            error,
            refused,
        });
    }
    Ok(AsconfAckChunk { serial, responses })
}
