//! Authenticated chunks (RFC 4895, "Authenticated Chunks for the Stream Control
//! Transmission Protocol", Tuexen, Stewart, Lei, Rescorla 2007), sans-IO.
//!
//! Each side announces in its INIT / INIT ACK a 32-byte RANDOM, the chunk types it
//! requires the peer to authenticate (CHUNKS) and the HMAC algorithms it accepts
//! (HMAC-ALGO, SHA-1 always among them). Both sides then derive the same association
//! key from a pre-shared endpoint-pair key and the two announcements
//! ([`Session::new`]). A sender puts an AUTH chunk in front of the first chunk the peer
//! requires authenticated, its HMAC covering the AUTH chunk (HMAC field zeroed) and
//! everything after it ([`Session::sign`]); a receiver discards any chunk it requires
//! authenticated that no valid AUTH chunk covers ([`Session::check`]).
//!
//! Without the endpoint-pair key an on-path party that saw both RANDOMs could compute
//! the association key, so the protection is only as strong as the key's secrecy. Only
//! shared key identifier 0 is used (one key per endpoint pair; no key rollover).
//!
//! The layer works on encoded packets, so the association never sees AUTH chunks and the
//! simulator is unaffected.

use hmac::{Hmac, Mac};
use sha1::Sha1;
use sha2::Sha256;

use crate::packet::{InitParam, Packet, COMMON_HEADER_LEN};
use crate::wire::chunk_type;

/// The AUTH chunk type.
pub const AUTH_CHUNK: u8 = 0x0F;
/// RANDOM parameter type.
pub const RANDOM: u16 = 0x8002;
/// CHUNKS parameter type.
pub const CHUNKS: u16 = 0x8003;
/// HMAC-ALGO parameter type.
pub const HMAC_ALGO: u16 = 0x8004;
/// Length of the RANDOM value this implementation sends and requires (RFC 4895 §3.1
/// recommends 32 bytes; usrsctp accepts no other length).
pub const RANDOM_LEN: usize = 32;
/// The only shared key identifier used.
pub const KEY_ID: u16 = 0;

/// Chunk types that may never be listed in CHUNKS (RFC 4895 §3.2).
const NEVER_AUTHENTICATED: [u8; 4] = [
    chunk_type::INIT,
    chunk_type::INIT_ACK,
    chunk_type::SHUTDOWN_COMPLETE,
    AUTH_CHUNK,
];

/// An HMAC algorithm of RFC 4895 §3.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HmacAlgo {
    /// HMAC-SHA-1 (identifier 1; every endpoint must support it).
    Sha1,
    /// HMAC-SHA-256 (identifier 3).
    Sha256,
}

impl HmacAlgo {
    /// Ours, in order of preference.
    pub const SUPPORTED: [HmacAlgo; 2] = [HmacAlgo::Sha256, HmacAlgo::Sha1];

    /// The identifier on the wire.
    pub fn id(self) -> u16 {
        match self {
            HmacAlgo::Sha1 => 1,
            HmacAlgo::Sha256 => 3,
        }
    }

    /// The algorithm with identifier `id`, if supported.
    pub fn from_id(id: u16) -> Option<HmacAlgo> {
        Self::SUPPORTED.into_iter().find(|a| a.id() == id)
    }

    /// Length of the HMAC in bytes.
    pub fn mac_len(self) -> usize {
        match self {
            HmacAlgo::Sha1 => 20,
            HmacAlgo::Sha256 => 32,
        }
    }

    /// The HMAC of `data` under `key`.
    fn mac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        // HMAC takes keys of any length (RFC 2104 hashes long ones first).
        match self {
            HmacAlgo::Sha1 => {
                let mut m = Hmac::<Sha1>::new_from_slice(key).expect("any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            HmacAlgo::Sha256 => {
                let mut m = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }
}

/// What an endpoint configures: the endpoint-pair shared key and the chunk types it
/// requires the peer to authenticate.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// The endpoint-pair shared key (identifier 0), pre-shared out of band.
    pub key: Vec<u8>,
    /// Chunk types the peer must authenticate (INIT, INIT ACK, SHUTDOWN COMPLETE and
    /// AUTH are left out whatever is asked, as RFC 4895 §3.2 requires).
    pub chunks: Vec<u8>,
    /// Whether a peer that does not announce RFC 4895 is refused (with a key), or the
    /// association goes on without authentication (offered only so that address
    /// reconfiguration may be used, [`AuthConfig::for_reconfiguration`]).
    pub required: bool,
}

/// Every chunk type an association may change state with, and that RFC 4895 §3.2
/// allows to be listed: what [`AuthConfig::with_key`] requires authenticated.
pub const CHANGES_STATE: [u8; 16] = [
    chunk_type::DATA,
    chunk_type::SACK,
    chunk_type::HEARTBEAT,
    chunk_type::HEARTBEAT_ACK,
    chunk_type::ABORT,
    chunk_type::SHUTDOWN,
    chunk_type::SHUTDOWN_ACK,
    chunk_type::ERROR,
    chunk_type::COOKIE_ECHO,
    chunk_type::COOKIE_ACK,
    chunk_type::ROUND_INFO,
    chunk_type::RATE_ADVERT,
    chunk_type::FILE_DIGEST,
    chunk_type::ARRIVALS,
    chunk_type::ASCONF,
    chunk_type::ASCONF_ACK,
];

impl AuthConfig {
    /// Key `key`, requiring every chunk that can change an association's state
    /// authenticated ([`CHANGES_STATE`]). What is left cannot be: INIT and INIT ACK
    /// (the key is not agreed yet), SHUTDOWN COMPLETE and AUTH (RFC 4895 §3.2) — so
    /// nothing that matters may depend on a SHUTDOWN COMPLETE.
    pub fn with_key(key: Vec<u8>) -> Self {
        AuthConfig {
            key,
            chunks: CHANGES_STATE.to_vec(),
            required: true,
        }
    }

    /// No pre-shared key (an empty one, RFC 4895 §6.1), requiring only ASCONF and
    /// ASCONF-ACK authenticated, as RFC 5061 §4.1.1 asks of address reconfiguration;
    /// not required of the peer. The association key then comes from the two RANDOMs
    /// alone: it proves that an ASCONF comes from whoever took part in the handshake,
    /// not from a party that saw no INIT or INIT ACK — an on-path observer of the
    /// handshake can still compute it (only `--key` protects against that).
    pub fn for_reconfiguration() -> Self {
        AuthConfig {
            key: Vec::new(),
            chunks: vec![chunk_type::ASCONF, chunk_type::ASCONF_ACK],
            required: false,
        }
    }

    /// Whether chunks of type `t` must arrive authenticated.
    pub fn requires(&self, t: u8) -> bool {
        self.chunks.contains(&t)
    }
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("key", &format_args!("<{} bytes>", self.key.len()))
            .field("chunks", &self.chunks)
            .field("required", &self.required)
            .finish()
    }
}

/// One side's announcement: RANDOM, CHUNKS and HMAC-ALGO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offer {
    /// The random value.
    pub random: Vec<u8>,
    /// Chunk types this side requires authenticated.
    pub chunks: Vec<u8>,
    /// HMAC identifiers this side accepts, in its order of preference.
    pub hmacs: Vec<u16>,
}

impl Offer {
    /// Our announcement with `random` and the chunk types of `cfg`.
    pub fn local(random: [u8; RANDOM_LEN], cfg: &AuthConfig) -> Offer {
        let mut chunks: Vec<u8> = Vec::new();
        for &c in &cfg.chunks {
            if !NEVER_AUTHENTICATED.contains(&c) && !chunks.contains(&c) {
                chunks.push(c);
            }
        }
        Offer {
            random: random.to_vec(),
            chunks,
            hmacs: HmacAlgo::SUPPORTED.iter().map(|a| a.id()).collect(),
        }
    }

    fn hmac_bytes(&self) -> Vec<u8> {
        self.hmacs.iter().flat_map(|h| h.to_be_bytes()).collect()
    }

    /// The INIT / INIT ACK parameters (CHUNKS left out when empty, as RFC 4895 allows).
    pub fn params(&self) -> Vec<InitParam> {
        let mut p = vec![InitParam::Unknown {
            ptype: RANDOM,
            value: self.random.clone().into(),
        }];
        if !self.chunks.is_empty() {
            p.push(InitParam::Unknown {
                ptype: CHUNKS,
                value: self.chunks.clone().into(),
            });
        }
        p.push(InitParam::Unknown {
            ptype: HMAC_ALGO,
            value: self.hmac_bytes().into(),
        });
        p
    }

    /// The key vector (RFC 4895 §6.1): RANDOM, CHUNKS and HMAC-ALGO as sent, headers
    /// included, padding left out, in that order (the order usrsctp and the Linux
    /// kernel use).
    pub fn key_vector(&self) -> Vec<u8> {
        let mut v = Vec::new();
        let mut put = |ptype: u16, value: &[u8]| {
            v.extend_from_slice(&ptype.to_be_bytes());
            v.extend_from_slice(&(4 + value.len() as u16).to_be_bytes());
            v.extend_from_slice(value);
        };
        put(RANDOM, &self.random);
        if !self.chunks.is_empty() {
            put(CHUNKS, &self.chunks);
        }
        put(HMAC_ALGO, &self.hmac_bytes());
        v
    }

    /// The peer's announcement among `params`, if it is complete and usable: a 32-byte
    /// RANDOM and an HMAC-ALGO that lists SHA-1 (RFC 4895 §6.1). The first of each
    /// parameter counts.
    pub fn from_params(params: &[InitParam]) -> Option<Offer> {
        let find = |t: u16| {
            params.iter().find_map(|p| match p {
                InitParam::Unknown { ptype, value } if *ptype == t => Some(value.to_vec()),
                _ => None,
            })
        };
        Offer::from_parts(
            find(RANDOM)?,
            find(CHUNKS).unwrap_or_default(),
            find(HMAC_ALGO)?,
        )
    }

    fn from_parts(random: Vec<u8>, chunks: Vec<u8>, hmac_bytes: Vec<u8>) -> Option<Offer> {
        if random.len() != RANDOM_LEN || !hmac_bytes.len().is_multiple_of(2) {
            return None;
        }
        let hmacs: Vec<u16> = hmac_bytes
            .chunks_exact(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .collect();
        if !hmacs.contains(&HmacAlgo::Sha1.id()) {
            return None;
        }
        Some(Offer {
            random,
            chunks,
            hmacs,
        })
    }

    /// Reads back a [`key_vector`](Offer::key_vector) (as carried in a state cookie).
    pub fn from_key_vector(v: &[u8]) -> Option<Offer> {
        let (mut random, mut chunks, mut hmacs) = (None, Vec::new(), None);
        let mut pos = 0;
        while pos < v.len() {
            let head = v.get(pos..pos + 4)?;
            let ptype = u16::from_be_bytes([head[0], head[1]]);
            let len = u16::from_be_bytes([head[2], head[3]]) as usize;
            let value = v.get(pos + 4..pos.checked_add(len)?)?.to_vec();
            match ptype {
                RANDOM => random = Some(value),
                CHUNKS => chunks = value,
                HMAC_ALGO => hmacs = Some(value),
                _ => return None,
            }
            pos += len.max(4);
        }
        Offer::from_parts(random?, chunks, hmacs?)
    }
}

/// Compares two key vectors as big-endian numbers (shorter ones padded with leading
/// zeros); equal numbers order the shorter vector first (RFC 4895 §6.1).
fn key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let n = a.len().max(b.len());
    let digit = |v: &[u8], i: usize| {
        let pad = n - v.len();
        if i < pad {
            0
        } else {
            v[i - pad]
        }
    };
    (0..n)
        .map(|i| digit(a, i).cmp(&digit(b, i)))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// Why a packet's chunks were discarded by [`Session::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// A chunk we require authenticated was not covered by an AUTH chunk.
    NotAuthenticated,
    /// The AUTH chunk named a key or algorithm we do not have, or was malformed.
    UnknownKeyOrAlgorithm,
    /// The HMAC did not match.
    BadHmac,
}

/// The authentication state of one association.
#[derive(Clone, PartialEq, Eq)]
pub struct Session {
    key: Vec<u8>,
    send_algo: HmacAlgo,
    accepted: Vec<u16>,
    peer_requires: Vec<u8>,
    we_require: Vec<u8>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("send_algo", &self.send_algo)
            .field("peer_requires", &self.peer_requires)
            .field("we_require", &self.we_require)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The session of an association in which we announced `ours` and the peer
    /// `theirs`, under the endpoint-pair key `shared`. `None` when no HMAC algorithm is
    /// common (cannot happen with peers that list SHA-1, as they must).
    pub fn new(shared: &[u8], ours: &Offer, theirs: &Offer) -> Option<Session> {
        let (a, b) = (ours.key_vector(), theirs.key_vector());
        let (first, second) = if key_order(&a, &b).is_le() {
            (a, b)
        } else {
            (b, a)
        };
        let mut key = shared.to_vec();
        key.extend_from_slice(&first);
        key.extend_from_slice(&second);
        // The first algorithm of the peer's list that we support (RFC 4895 §6.1).
        let send_algo = theirs.hmacs.iter().find_map(|&id| HmacAlgo::from_id(id))?;
        Some(Session {
            key,
            send_algo,
            accepted: ours.hmacs.clone(),
            peer_requires: theirs.chunks.clone(),
            we_require: ours.chunks.clone(),
        })
    }

    /// Whether the peer requires chunks of type `t` authenticated.
    pub fn peer_requires(&self, t: u8) -> bool {
        self.peer_requires.contains(&t)
    }

    /// Whether we require chunks of type `t` authenticated.
    pub fn we_require(&self, t: u8) -> bool {
        self.we_require.contains(&t)
    }

    /// The algorithm we sign with.
    pub fn send_algorithm(&self) -> HmacAlgo {
        self.send_algo
    }

    /// Bytes an AUTH chunk adds to a packet (reserve them below the MTU).
    pub fn overhead(&self) -> usize {
        8 + self.send_algo.mac_len()
    }

    /// Puts an AUTH chunk into the encoded packet `pkt` in front of its first chunk of
    /// a type the peer requires authenticated, and recomputes the CRC32c. Packets
    /// without such a chunk are left alone. Returns whether it signed.
    pub fn sign(&self, pkt: &mut Vec<u8>) -> bool {
        let Some(at) = chunk_offsets(pkt)
            .find(|&(_, t)| self.peer_requires.contains(&t))
            .map(|(off, _)| off)
        else {
            return false;
        };
        let len = self.overhead();
        let mut auth = Vec::with_capacity(len);
        auth.extend_from_slice(&[AUTH_CHUNK, 0]);
        auth.extend_from_slice(&(len as u16).to_be_bytes());
        auth.extend_from_slice(&KEY_ID.to_be_bytes());
        auth.extend_from_slice(&self.send_algo.id().to_be_bytes());
        auth.resize(len, 0);
        pkt.splice(at..at, auth);
        let mac = self.send_algo.mac(&self.key, &pkt[at..]);
        pkt[at + 8..at + len].copy_from_slice(&mac);
        let crc = crate::wire::checksum(pkt);
        pkt[8..12].copy_from_slice(&crc.to_le_bytes());
        true
    }

    /// Checks the received packet `raw`, decoded as `packet`: removes its AUTH chunk and
    /// every chunk we require authenticated that a valid AUTH chunk does not cover (all
    /// chunks after an AUTH chunk that fails). Returns whether a valid AUTH chunk
    /// covered at least one chunk (the packet comes from a holder of the key) when
    /// nothing was discarded, else how many chunks were and why (the first reason).
    pub fn check(&self, raw: &[u8], packet: &mut Packet) -> Result<bool, (usize, Rejection)> {
        let auth = chunk_offsets(raw)
            .enumerate()
            .find(|(_, (_, t))| *t == AUTH_CHUNK)
            .map(|(i, (off, _))| (i, self.verify(&raw[off..])));
        let before = packet.chunks.len();
        let mut reason = None;
        let mut i = 0;
        packet.chunks.retain(|c| {
            let k = i;
            i += 1;
            let keep = match auth {
                Some((a, _)) if k == a => false,
                Some((a, Err(why))) if k > a => {
                    reason.get_or_insert(why);
                    false
                }
                Some((a, Ok(()))) if k > a => true,
                _ if self.we_require.contains(&c.chunk_type()) => {
                    reason.get_or_insert(Rejection::NotAuthenticated);
                    false
                }
                _ => true,
            };
            keep
        });
        // The AUTH chunk itself is not a discarded chunk.
        let dropped = before - packet.chunks.len() - usize::from(auth.is_some());
        match reason.filter(|_| dropped > 0) {
            Some(r) => Err((dropped, r)),
            None => Ok(matches!(auth, Some((a, Ok(()))) if a + 1 < before)),
        }
    }

    /// Verifies the AUTH chunk at the start of `from` over the rest of the packet.
    fn verify(&self, from: &[u8]) -> Result<(), Rejection> {
        let head = from.get(..8).ok_or(Rejection::UnknownKeyOrAlgorithm)?;
        let len = u16::from_be_bytes([head[2], head[3]]) as usize;
        let key_id = u16::from_be_bytes([head[4], head[5]]);
        let algo_id = u16::from_be_bytes([head[6], head[7]]);
        let algo = HmacAlgo::from_id(algo_id)
            .filter(|a| self.accepted.contains(&a.id()) && len == 8 + a.mac_len())
            .filter(|_| key_id == KEY_ID && from.len() >= len)
            .ok_or(Rejection::UnknownKeyOrAlgorithm)?;
        let mut zeroed = from.to_vec();
        zeroed[8..len].fill(0);
        let mac = algo.mac(&self.key, &zeroed);
        // Constant-time comparison: an attacker learns nothing from the timing.
        let diff = mac
            .iter()
            .zip(&from[8..len])
            .fold(0u8, |d, (a, b)| d | (a ^ b));
        if diff == 0 {
            Ok(())
        } else {
            Err(Rejection::BadHmac)
        }
    }
}

/// (offset, type) of each chunk of an encoded packet, stopping at the first chunk
/// whose length does not fit (the decoder has rejected such packets already).
fn chunk_offsets(pkt: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut pos = COMMON_HEADER_LEN;
    std::iter::from_fn(move || {
        let head = pkt.get(pos..pos + 4)?;
        let len = u16::from_be_bytes([head[2], head[3]]) as usize;
        if len < 4 || pos + len > pkt.len() {
            return None;
        }
        let item = (pos, head[0]);
        pos += len.div_ceil(4) * 4;
        Some(item)
    })
}

#[cfg(test)]
mod tests;
