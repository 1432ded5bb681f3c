//! The connecting side of association setup: INIT, COOKIE ECHO, retransmissions.

use super::*;

/// Where the connector is.
#[derive(Clone, Debug, PartialEq)]
enum State {
    CookieWait,
    CookieEchoed {
        cookie: Bytes,
        peer: InitChunk,
        auth: Option<Session>,
    },
    Done,
    Failed,
}

/// Why a connection attempt ended without an association.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// No answer after Max.Init.Retransmits.
    TimedOut,
    /// The peer aborted (with its error cause, if any).
    Aborted(Option<u16>),
    /// The INIT ACK was unusable (no cookie, zero tag).
    BadInitAck,
    /// Authentication is configured and the peer does not announce RFC 4895 support.
    AuthUnsupported,
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::TimedOut => write!(f, "no answer to INIT"),
            SetupError::Aborted(Some(c)) => {
                write!(f, "the peer refused the association (cause {c})")
            }
            SetupError::Aborted(None) => write!(f, "the peer refused the association"),
            SetupError::BadInitAck => write!(f, "unusable INIT ACK (no cookie or a zero tag)"),
            SetupError::AuthUnsupported => write!(
                f,
                "the peer does not support SCTP authentication (RFC 4895) of its DATA (it holds no \
                 key), which the key requires"
            ),
        }
    }
}

/// The active side.
pub struct Connector {
    cfg: SetupConfig,
    state: State,
    tag: u32,
    initial_tsn: u32,
    seed: u64,
    send_now: bool,
    t1: Option<Time>,
    rto: Duration,
    retries: u32,
    /// Our RFC 4895 announcement, when authentication is configured.
    offer: Option<Offer>,
    /// Packets with a wrong verification tag that were dropped.
    pub bad_vtag: u64,
}

impl Connector {
    /// Starts a connection attempt (the INIT goes out at the first poll).
    pub fn new(cfg: SetupConfig, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Connector {
            tag: rng.gen_range(1..=u32::MAX),
            initial_tsn: rng.gen(),
            seed: rng.gen(),
            offer: local_offer(&cfg, &mut rng),
            rto: cfg.rto_initial,
            cfg,
            state: State::CookieWait,
            send_now: true,
            t1: None,
            retries: 0,
            bad_vtag: 0,
        }
    }

    fn init_packet(&self) -> Packet {
        let mut init = InitChunk {
            initiate_tag: self.tag,
            a_rwnd: self.cfg.rbuf,
            outbound_streams: self.cfg.streams,
            inbound_streams: self.cfg.streams,
            initial_tsn: self.initial_tsn,
            params: params(&self.cfg, self.offer.as_ref()),
        };
        let mut p = Packet {
            vtag: 0,
            chunks: vec![Chunk::Init(init.clone())],
        };
        // A PAD parameter (4 bytes of header, then zeros, 4-byte aligned) brings the
        // packet to at least `pad_init_to` bytes.
        let short = self.cfg.pad_init_to.saturating_sub(p.wire_len());
        if short > 0 {
            let value = short.saturating_sub(4).next_multiple_of(4);
            init.params.push(InitParam::Unknown {
                ptype: PARAM_PAD,
                value: vec![0u8; value].into(),
            });
            p.chunks = vec![Chunk::Init(init)];
        }
        p
    }

    /// The INIT or COOKIE ECHO to (re)send now.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if !std::mem::take(&mut self.send_now) {
            return None;
        }
        self.t1 = Some(now + self.rto);
        match &self.state {
            State::CookieWait => Some(self.init_packet()),
            State::CookieEchoed { cookie, peer, .. } => Some(Packet {
                vtag: peer.initiate_tag,
                chunks: vec![Chunk::CookieEcho {
                    cookie: cookie.clone(),
                }],
            }),
            State::Done | State::Failed => None,
        }
    }

    /// The association's RFC 4895 session once the INIT ACK has arrived (when
    /// authentication is configured): from then on the driver signs what it sends —
    /// the COOKIE ECHO first, if the peer requires it — and checks what arrives, the
    /// COOKIE ACK included (RFC 4895 §6.2).
    pub fn session(&self) -> Option<&Session> {
        match &self.state {
            State::CookieEchoed { auth, .. } => auth.as_ref(),
            _ => None,
        }
    }

    /// Whether the INIT ACK came and the COOKIE ECHO is out (for error messages).
    pub fn cookie_sent(&self) -> bool {
        matches!(self.state, State::CookieEchoed { .. })
    }

    /// When T1 fires.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.t1
    }

    /// T1 expiry: resend with a doubled RTO, or give up.
    pub fn handle_timeout(&mut self, now: Time) -> Result<(), SetupError> {
        if self.t1.is_none_or(|t| t > now) {
            return Ok(());
        }
        self.t1 = None;
        self.retries += 1;
        if self.retries > self.cfg.max_init_retrans {
            self.state = State::Failed;
            return Err(SetupError::TimedOut);
        }
        self.rto =
            Duration::from_nanos(self.rto.as_nanos().saturating_mul(2)).min(self.cfg.rto_max);
        self.send_now = true;
        Ok(())
    }

    /// An answer from the peer. `Ok(Some(_))` when the association is established.
    pub fn handle_packet(&mut self, packet: &Packet) -> Result<Option<Established>, SetupError> {
        if packet.vtag != self.tag {
            self.bad_vtag += 1;
            return Ok(None);
        }
        // An ABORT ends the attempt wherever it sits in the packet (a listener may put
        // a chunk explaining it in front, as cmtlab's refusal reason).
        if let Some(cause) = packet.chunks.iter().find_map(|c| match c {
            Chunk::Abort { cause, .. } => Some(*cause),
            _ => None,
        }) {
            self.state = State::Failed;
            return Err(SetupError::Aborted(cause));
        }
        match (packet.chunks.first(), &self.state) {
            (Some(Chunk::InitAck(ack)), State::CookieWait) => {
                let cookie = ack.params.iter().find_map(|p| match p {
                    InitParam::StateCookie(c) => Some(c.clone()),
                    _ => None,
                });
                let Some(cookie) = cookie.filter(|_| ack.initiate_tag != 0) else {
                    self.state = State::Failed;
                    return Err(SetupError::BadInitAck);
                };
                let auth = match (&self.cfg.auth, &self.offer) {
                    (Some(cfg), Some(ours)) => {
                        let (_, ext) = peer_info(ack);
                        let session = peer_offer(&self.cfg, ack, &ext)
                            .and_then(|theirs| Session::new(&cfg.key, ours, &theirs));
                        if session.is_none() && cfg.required {
                            self.state = State::Failed;
                            return Err(SetupError::AuthUnsupported);
                        }
                        session
                    }
                    _ => None,
                };
                self.state = State::CookieEchoed {
                    cookie,
                    peer: ack.clone(),
                    auth,
                };
                self.send_now = true;
                self.retries = 0;
                self.rto = self.cfg.rto_initial;
                Ok(None)
            }
            (Some(Chunk::CookieAck), State::CookieEchoed { peer, auth, .. }) => {
                let (peer_addresses, peer_extensions) = peer_info(peer);
                let auth = auth.clone();
                let peer_unknown_params = peer
                    .params
                    .iter()
                    .filter_map(|p| match p {
                        InitParam::Unknown { ptype, value } => Some((*ptype, value.clone())),
                        _ => None,
                    })
                    .collect();
                let est = Established {
                    init: AssocInit {
                        local_vtag: self.tag,
                        peer_vtag: peer.initiate_tag,
                        initial_tsn: self.initial_tsn,
                        peer_initial_tsn: peer.initial_tsn,
                        peer_rwnd: peer.a_rwnd,
                        seed: self.seed,
                        start: Time::ZERO,
                        peer_ecn: offers_ecn(peer),
                    },
                    peer_addresses,
                    peer_extensions,
                    auth,
                    peer_unknown_params,
                };
                self.state = State::Done;
                self.t1 = None;
                Ok(Some(est))
            }
            _ => Ok(None), // duplicates and late answers
        }
    }
}
