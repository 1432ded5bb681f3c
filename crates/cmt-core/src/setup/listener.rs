//! The listening side of association setup: answers INITs statelessly with a signed
//! cookie, establishes on a valid COOKIE ECHO (authenticated, when authentication is
//! configured and requires it: RFC 4895 §6.3), and answers every other packet as RFC
//! 9260 §8.4 says for packets that belong to no association.

use super::*;

/// What the listener does with a packet that belongs to no association.
#[derive(Clone, Debug, PartialEq)]
pub enum ListenOutcome {
    /// Send this (an INIT ACK, an ABORT for an invalid INIT, or the answer to an
    /// out-of-the-blue packet); no state kept.
    Reply(Packet),
    /// A valid COOKIE ECHO: the association exists now; send the COOKIE ACK.
    Established(Box<Established>, Packet),
    /// Ignore the packet (the reason is for counters and logs).
    Drop(&'static str),
}

/// The passive side. Holds only its secret key and random stream.
pub struct Listener {
    cfg: SetupConfig,
    key: [u8; 32],
    rng: ChaCha8Rng,
}

/// The cookie's contents.
#[derive(Clone, Debug, PartialEq)]
struct Cookie {
    created_ns: u64,
    local_vtag: u32,
    peer_vtag: u32,
    initial_tsn: u32,
    peer_initial_tsn: u32,
    peer_rwnd: u32,
    peer_addresses: Vec<IpAddr>,
    peer_extensions: Vec<u8>,
    /// The peer offered ECN.
    peer_ecn: bool,
    /// RFC 4895 key vectors, (ours, the peer's), when authentication was negotiated.
    auth: Option<(Vec<u8>, Vec<u8>)>,
}

impl Cookie {
    fn body(&self) -> Vec<u8> {
        let mut b = vec![COOKIE_VERSION];
        b.extend_from_slice(&self.created_ns.to_be_bytes());
        for v in [
            self.local_vtag,
            self.peer_vtag,
            self.initial_tsn,
            self.peer_initial_tsn,
            self.peer_rwnd,
        ] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.push(self.peer_addresses.len().min(255) as u8);
        for a in self.peer_addresses.iter().take(255) {
            match a {
                IpAddr::V4(v) => {
                    b.push(4);
                    b.extend_from_slice(&v.octets());
                }
                IpAddr::V6(v) => {
                    b.push(6);
                    b.extend_from_slice(&v.octets());
                }
            }
        }
        b.push(self.peer_extensions.len().min(255) as u8);
        b.extend(self.peer_extensions.iter().take(255));
        b.push(u8::from(self.peer_ecn));
        if let Some((ours, theirs)) = &self.auth {
            for v in [ours, theirs] {
                b.extend_from_slice(&(v.len().min(u16::MAX as usize) as u16).to_be_bytes());
                b.extend(v.iter().take(u16::MAX as usize));
            }
        }
        b
    }

    fn parse(b: &[u8]) -> Option<Cookie> {
        let mut pos = 0;
        let mut take = |n: usize| {
            let s = b.get(pos..pos + n)?;
            pos += n;
            Some(s)
        };
        if take(1)? != [COOKIE_VERSION] {
            return None;
        }
        let created_ns = u64::from_be_bytes(take(8)?.try_into().ok()?);
        let mut u = [0u32; 5];
        for x in &mut u {
            *x = u32::from_be_bytes(take(4)?.try_into().ok()?);
        }
        let n = take(1)?[0];
        let mut peer_addresses = Vec::with_capacity(n as usize);
        for _ in 0..n {
            peer_addresses.push(match take(1)?[0] {
                4 => IpAddr::from(<[u8; 4]>::try_from(take(4)?).ok()?),
                6 => IpAddr::from(<[u8; 16]>::try_from(take(16)?).ok()?),
                _ => return None,
            });
        }
        let e = take(1)?[0] as usize;
        let peer_extensions = take(e)?.to_vec();
        let peer_ecn = match take(1)?[0] {
            0 => false,
            1 => true,
            _ => return None,
        };
        let mut vector = || {
            let n = u16::from_be_bytes(take(2)?.try_into().ok()?) as usize;
            Some(take(n)?.to_vec())
        };
        let auth = match vector() {
            Some(ours) => Some((ours, vector()?)),
            None => None,
        };
        Some(Cookie {
            created_ns,
            local_vtag: u[0],
            peer_vtag: u[1],
            initial_tsn: u[2],
            peer_initial_tsn: u[3],
            peer_rwnd: u[4],
            peer_addresses,
            peer_extensions,
            peer_ecn,
            auth,
        })
    }
}

impl Listener {
    /// A listener with secret `key` (keep it secret: it authenticates cookies).
    pub fn new(cfg: SetupConfig, key: [u8; 32], seed: u64) -> Self {
        Listener {
            cfg,
            key,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// Replaces the parameters the embedder adds to its INIT ACKs from now on (a
    /// receiver's resume offer that changed as data arrived).
    pub fn set_extra_params(&mut self, params: Vec<InitParam>) {
        self.cfg.extra_params = params;
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length")
    }

    /// Handles a packet for which no association exists. Without the packet's bytes an
    /// AUTH chunk cannot be checked: when authentication requires COOKIE ECHO
    /// authenticated, use [`handle_datagram`](Self::handle_datagram).
    pub fn handle(&mut self, now: Time, packet: &Packet) -> ListenOutcome {
        self.dispatch(now, packet, None)
    }

    /// As [`handle`](Self::handle), for a packet that arrived as the bytes `raw`: a
    /// COOKIE ECHO behind an AUTH chunk establishes only when the HMAC checks under the
    /// session the cookie describes (RFC 4895 §6.3).
    pub fn handle_datagram(&mut self, now: Time, raw: &[u8], packet: &Packet) -> ListenOutcome {
        self.dispatch(now, packet, Some(raw))
    }

    fn dispatch(&mut self, now: Time, packet: &Packet, raw: Option<&[u8]>) -> ListenOutcome {
        let echo_needs_auth = self
            .cfg
            .auth
            .as_ref()
            .is_some_and(|a| a.requires(chunk_type::COOKIE_ECHO));
        match (packet.chunks.first(), packet.chunks.get(1)) {
            (Some(Chunk::Init(init)), _) => self.on_init(now, packet, init),
            (Some(Chunk::CookieEcho { .. }), _) if echo_needs_auth => {
                ListenOutcome::Drop("COOKIE ECHO without the AUTH chunk it requires")
            }
            (Some(Chunk::CookieEcho { cookie }), _) => self.on_cookie_echo(now, packet, cookie),
            (Some(c), Some(Chunk::CookieEcho { cookie }))
                if c.chunk_type() == chunk_type::AUTH && self.cfg.auth.is_some() =>
            {
                let Some(raw) = raw else {
                    return ListenOutcome::Drop("an AUTH chunk cannot be checked without bytes");
                };
                self.on_signed_cookie_echo(now, packet, cookie, raw)
            }
            (Some(_), _) => out_of_the_blue(packet),
            (None, _) => ListenOutcome::Drop("empty packet"),
        }
    }

    /// A COOKIE ECHO behind an AUTH chunk: the cookie first (it carries both
    /// announcements), then the HMAC under the session they give.
    fn on_signed_cookie_echo(
        &mut self,
        now: Time,
        packet: &Packet,
        cookie: &[u8],
        raw: &[u8],
    ) -> ListenOutcome {
        match self.on_cookie_echo(now, packet, cookie) {
            ListenOutcome::Established(est, ack) => {
                let mut checked = packet.clone();
                match est.auth.as_ref().map(|s| s.check(raw, &mut checked)) {
                    Some(Ok(true)) => ListenOutcome::Established(est, ack),
                    _ => ListenOutcome::Drop("COOKIE ECHO's AUTH chunk does not verify"),
                }
            }
            other => other,
        }
    }

    fn on_init(&mut self, now: Time, packet: &Packet, init: &InitChunk) -> ListenOutcome {
        if packet.vtag != 0 || packet.chunks.len() != 1 {
            return ListenOutcome::Drop("INIT must be alone with verification tag 0");
        }
        if init.initiate_tag == 0
            || init.outbound_streams == 0
            || init.inbound_streams == 0
            || init.a_rwnd < 1500
        {
            return ListenOutcome::Reply(abort(
                init.initiate_tag,
                CAUSE_INVALID_MANDATORY_PARAMETER,
            ));
        }
        let (peer_addresses, peer_extensions) = peer_info(init);
        let ours = local_offer(&self.cfg, &mut self.rng);
        let theirs = peer_offer(&self.cfg, init, &peer_extensions);
        let required = self.cfg.auth.as_ref().is_some_and(|a| a.required);
        if required && theirs.is_none() {
            // Authentication is required and the peer cannot do it.
            return ListenOutcome::Reply(abort(init.initiate_tag, CAUSE_PROTOCOL_VIOLATION));
        }
        let auth = ours
            .as_ref()
            .zip(theirs.as_ref())
            .map(|(o, t)| (o.key_vector(), t.key_vector()));
        let cookie = Cookie {
            created_ns: now.as_nanos(),
            local_vtag: self.rng.gen_range(1..=u32::MAX),
            peer_vtag: init.initiate_tag,
            initial_tsn: self.rng.gen(),
            peer_initial_tsn: init.initial_tsn,
            peer_rwnd: init.a_rwnd,
            peer_addresses,
            peer_extensions,
            peer_ecn: offers_ecn(init),
            auth,
        };
        let mut body = cookie.body();
        let mut mac = self.mac();
        mac.update(&body);
        body.extend_from_slice(&mac.finalize().into_bytes());
        let mut p = params(&self.cfg, ours.as_ref());
        p.push(InitParam::StateCookie(Bytes::from(body)));
        ListenOutcome::Reply(Packet {
            vtag: init.initiate_tag,
            chunks: vec![Chunk::InitAck(InitChunk {
                initiate_tag: cookie.local_vtag,
                a_rwnd: self.cfg.rbuf,
                outbound_streams: self.cfg.streams.min(init.inbound_streams),
                inbound_streams: self.cfg.streams.min(init.outbound_streams),
                initial_tsn: cookie.initial_tsn,
                params: p,
            })],
        })
    }

    fn on_cookie_echo(&mut self, now: Time, packet: &Packet, cookie: &[u8]) -> ListenOutcome {
        if cookie.len() < MAC_LEN {
            return ListenOutcome::Drop("cookie too short");
        }
        let (body, tag) = cookie.split_at(cookie.len() - MAC_LEN);
        let mut mac = self.mac();
        mac.update(body);
        if mac.verify_slice(tag).is_err() {
            return ListenOutcome::Drop("cookie authentication failed");
        }
        let Some(c) = Cookie::parse(body) else {
            return ListenOutcome::Drop("cookie unreadable");
        };
        if packet.vtag != c.local_vtag {
            return ListenOutcome::Drop("COOKIE ECHO with a wrong verification tag");
        }
        let age = now.as_nanos().saturating_sub(c.created_ns);
        if age > self.cfg.cookie_lifetime.as_nanos() {
            return ListenOutcome::Drop("stale cookie");
        }
        let auth = match (&self.cfg.auth, &c.auth) {
            (None, _) => None,
            (Some(cfg), Some((ours, theirs))) => {
                let session = Offer::from_key_vector(ours)
                    .zip(Offer::from_key_vector(theirs))
                    .and_then(|(o, t)| Session::new(&cfg.key, &o, &t));
                match session {
                    Some(s) => Some(s),
                    None => return ListenOutcome::Drop("cookie's authentication state unusable"),
                }
            }
            (Some(cfg), None) if cfg.required => {
                return ListenOutcome::Drop("cookie without authentication")
            }
            (Some(_), None) => None,
        };
        let est = Established {
            init: AssocInit {
                local_vtag: c.local_vtag,
                peer_vtag: c.peer_vtag,
                initial_tsn: c.initial_tsn,
                peer_initial_tsn: c.peer_initial_tsn,
                peer_rwnd: c.peer_rwnd,
                seed: self.rng.gen(),
                start: now,
                peer_ecn: c.peer_ecn,
            },
            peer_addresses: c.peer_addresses,
            peer_extensions: c.peer_extensions,
            auth,
            peer_unknown_params: Vec::new(),
        };
        let ack = Packet {
            vtag: c.peer_vtag,
            chunks: vec![Chunk::CookieAck],
        };
        ListenOutcome::Established(Box::new(est), ack)
    }
}

/// The answer to a packet that belongs to no association (RFC 9260 §8.4), INIT and
/// COOKIE ECHO aside: nothing to an ABORT (2), a SHUTDOWN COMPLETE (6), a COOKIE ACK or
/// an ERROR (7); SHUTDOWN COMPLETE to a SHUTDOWN ACK (5); ABORT to anything else (8) —
/// both with the T bit, under the packet's own tag, so the sender of what we no longer
/// know (e.g. the peer of an association this endpoint had before it restarted) learns
/// at once. Whether a reply may go out at all (non-unicast sources, rate limits) is the
/// driver's decision.
fn out_of_the_blue(packet: &Packet) -> ListenOutcome {
    use chunk_type as t;
    let types = || packet.chunks.iter().map(Chunk::chunk_type);
    if types().any(|c| c == t::ABORT) {
        return ListenOutcome::Drop("out of the blue: ABORT");
    }
    let reply = |chunk| {
        ListenOutcome::Reply(Packet {
            vtag: packet.vtag,
            chunks: vec![chunk],
        })
    };
    match packet.chunks.first().map(Chunk::chunk_type) {
        Some(t::SHUTDOWN_ACK) => reply(Chunk::ShutdownComplete { reflected: true }),
        Some(t::SHUTDOWN_COMPLETE | t::COOKIE_ACK | t::ERROR) => {
            ListenOutcome::Drop("out of the blue: nothing to answer")
        }
        _ => reply(Chunk::Abort {
            cause: None,
            reflected: true,
        }),
    }
}
