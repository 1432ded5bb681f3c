//! Dynamic address reconfiguration (RFC 5061, "Stream Control Transmission Protocol
//! (SCTP) Dynamic Address Reconfiguration", Stewart, Xie, Tuexen, Maruyama, Kozuka
//! 2007): the ASCONF and ASCONF-ACK chunks' contents, independent of the wire codec.
//!
//! An endpoint tells its peer that it has a new address (ADD-IP), that one is gone
//! (DEL-IP), or which one it would like as the peer's primary destination
//! (SET-PRIMARY), in an ASCONF chunk numbered by a serial number; the peer applies each
//! request in order and answers with an ASCONF-ACK of the same serial carrying one
//! response per request it refused (and, optionally, per request it accepted). RFC
//! 5061 §4.1.1 requires both chunks to be authenticated (RFC 4895), which the runtime's
//! authentication layer does; the association keeps the serial numbers, the single
//! outstanding request, its retransmission and the cached answer
//! ([`Association::reconfigure`](crate::Association::reconfigure)).

use std::net::IpAddr;

/// ASCONF parameter types (RFC 5061 §4.2).
pub mod asconf_param {
    /// Add IP Address.
    pub const ADD_IP: u16 = 0xC001;
    /// Delete IP Address.
    pub const DEL_IP: u16 = 0xC002;
    /// Error Cause Indication (in an ASCONF-ACK).
    pub const ERROR_CAUSE: u16 = 0xC003;
    /// Set Primary Address.
    pub const SET_PRIMARY: u16 = 0xC004;
    /// Success Indication (in an ASCONF-ACK).
    pub const SUCCESS: u16 = 0xC005;
}

/// Error causes of an ASCONF-ACK (RFC 5061 §4.3, and RFC 9260 §3.3.10's).
pub mod asconf_cause {
    /// Unrecognized Parameters (RFC 9260 §3.3.10.8).
    pub const UNRECOGNIZED_PARAMETER: u16 = 8;
    /// Request to Delete Last Remaining IP Address.
    pub const DELETE_LAST_ADDRESS: u16 = 0x00A0;
    /// Operation Refused Due to Resource Shortage.
    pub const RESOURCE_SHORTAGE: u16 = 0x00A1;
    /// Request to Delete Source IP Address.
    pub const DELETE_SOURCE_ADDRESS: u16 = 0x00A2;
    /// Request Refused — No Authorization.
    pub const NO_AUTHORIZATION: u16 = 0x00A4;
    /// Not a cause on the wire (0 is reserved): a request the ASCONF-ACK left without a
    /// response after a refused one, which RFC 5061 §5.3 counts as not applied; or one
    /// that got no ASCONF-ACK at all before the retransmissions ran out.
    pub const NOT_APPLIED: u16 = 0;
}

/// One request of an ASCONF.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AddrOp {
    /// The sender has this address (again): the receiver may use it once verified.
    Add(IpAddr),
    /// The sender no longer has this address: the receiver stops using it at once.
    Delete(IpAddr),
    /// The sender asks the receiver to prefer this address as its primary destination.
    SetPrimary(IpAddr),
    /// A request of another type, kept so it can be answered (RFC 5061 §5.2: by the two
    /// high bits of its type, skipped or refused as unrecognized).
    Other {
        /// Parameter type.
        ptype: u16,
        /// Value after the correlation id.
        value: Vec<u8>,
    },
}

/// A request and the correlation id that matches its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsconfParam {
    /// ASCONF-Request Correlation ID (chosen by the sender, echoed in the answer).
    pub correlation: u32,
    /// What is asked.
    pub op: AddrOp,
}

/// The ASCONF chunk (type 0xC1, RFC 5061 §4.1.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsconfChunk {
    /// Serial number: the sender's initial TSN for the first, one more for each next.
    pub serial: u32,
    /// One of the sender's addresses, naming the association (RFC 5061 §4.1.1).
    pub address: IpAddr,
    /// The requests, applied in order.
    pub params: Vec<AsconfParam>,
}

/// One response of an ASCONF-ACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsconfResponse {
    /// The correlation id of the request answered.
    pub correlation: u32,
    /// `None`: success; `Some(cause)`: refused with that error cause.
    pub error: Option<u16>,
    /// With a refusal: the refused request, copied into the error cause as RFC 5061
    /// §5.2 asks (peers read it to tell which request failed).
    pub refused: Option<AddrOp>,
}

impl AsconfResponse {
    /// A refusal of `request` with error cause `cause`.
    pub fn refusal(request: &AsconfParam, cause: u16) -> Self {
        AsconfResponse {
            correlation: request.correlation,
            error: Some(cause),
            refused: Some(request.op.clone()),
        }
    }
}

/// The ASCONF-ACK chunk (type 0x80, RFC 5061 §4.1.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsconfAckChunk {
    /// The serial number of the ASCONF answered.
    pub serial: u32,
    /// Responses; a request without one succeeded unless a refusal precedes it
    /// (RFC 5061 §5.3: requests after a refused one without their own response failed).
    pub responses: Vec<AsconfResponse>,
}

impl AsconfAckChunk {
    /// The outcome of each of `params` under this answer (RFC 5061 §5.3).
    pub fn outcomes(&self, params: &[AsconfParam]) -> Vec<Result<(), u16>> {
        let mut refused_before = false;
        params
            .iter()
            .map(|p| {
                match self
                    .responses
                    .iter()
                    .find(|r| r.correlation == p.correlation)
                {
                    Some(AsconfResponse { error: None, .. }) => Ok(()),
                    Some(AsconfResponse { error: Some(e), .. }) => {
                        refused_before = true;
                        Err(*e)
                    }
                    None if refused_before => Err(asconf_cause::NOT_APPLIED),
                    None => Ok(()),
                }
            })
            .collect()
    }
}
