//! A small safe layer over [usrsctp](https://github.com/sctplab/usrsctp) — the userland
//! SCTP stack of the major browsers, written independently of cmtlab — through the
//! bindings of `usrsctp-sys` (which builds the bundled sources with cmake).
//!
//! Only what the interop tests need: one-to-one (`SOCK_STREAM`) IPv4 sockets with the
//! blocking calls, RFC 6951 UDP encapsulation, the CMT switch and RFC 4895 keys. usrsctp keeps global
//! state: [`init`] once per process, from the thread whose network namespace its UDP
//! socket and its address list should come from.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::ptr::null_mut;
use std::sync::OnceLock;

use usrsctp_sys as sys;

static STARTED: OnceLock<u16> = OnceLock::new();

/// Starts usrsctp with its UDP encapsulation socket on `udp_port` (all addresses).
/// Later calls do nothing and return the port of the first.
pub fn init(udp_port: u16) -> u16 {
    *STARTED.get_or_init(|| {
        // SAFETY: called once (OnceLock); no output or debug callbacks. The global CMT
        // switch only allows the per-socket one ([`Socket::set_cmt`], which refuses
        // with ENOPROTOOPT while it is off); it also makes CMT every new socket's
        // default, so `Socket::new` turns it off again.
        unsafe {
            sys::usrsctp_init(udp_port, None, None);
            sys::usrsctp_sysctl_set_sctp_cmt_on_off(1);
        }
        udp_port
    })
}

/// `SCTP_CMT_ON_OFF` (netinet/sctp.h; not exported by usrsctp.h).
const SCTP_CMT_ON_OFF: u32 = 0x1200;

fn last_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("usrsctp {what}: {e}"))
}

fn check(what: &str, rc: i32) -> io::Result<()> {
    if rc < 0 {
        Err(last_error(what))
    } else {
        Ok(())
    }
}

fn sockaddr(a: SocketAddrV4) -> sys::sockaddr_in {
    sys::sockaddr_in {
        sin_family: sys::AF_INET as sys::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: sys::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// A one-to-one SCTP socket of usrsctp (IPv4). Closed on drop.
pub struct Socket(*mut sys::socket);

// SAFETY: usrsctp is the FreeBSD kernel's SCTP and socket layer in userland: every
// socket call takes the socket's and the endpoint's own locks, so a socket may be used
// from any thread and from several at once (e.g. a listener accepting in one thread
// while another sets options), as kernel sockets may.
unsafe impl Send for Socket {}
// SAFETY: as above.
unsafe impl Sync for Socket {}

impl Socket {
    /// A new blocking socket, CMT off (call [`init`] first).
    pub fn new() -> io::Result<Socket> {
        // SAFETY: no receive callback: the blocking API; usrsctp returns NULL on error.
        let s = unsafe {
            sys::usrsctp_socket(
                sys::AF_INET as i32,
                sys::__socket_type_SOCK_STREAM as i32,
                sys::IPPROTO_SCTP as i32,
                None,
                None,
                0,
                null_mut(),
            )
        };
        if s.is_null() {
            return Err(last_error("socket"));
        }
        let s = Socket(s);
        s.set_cmt(false)?;
        Ok(s)
    }

    fn setsockopt<T>(&self, what: &str, level: u32, name: u32, v: &T) -> io::Result<()> {
        // SAFETY: `v` is a live value of the size passed.
        let rc = unsafe {
            sys::usrsctp_setsockopt(
                self.0,
                level as i32,
                name as i32,
                v as *const T as *const std::ffi::c_void,
                size_of::<T>() as sys::socklen_t,
            )
        };
        check(what, rc)
    }

    /// Binds to `a`.
    pub fn bind(&self, a: SocketAddrV4) -> io::Result<()> {
        self.with_sockaddr("bind", a, sys::usrsctp_bind)
    }

    /// Calls `f` (bind or connect) with `a` as a `sockaddr_in`.
    fn with_sockaddr(
        &self,
        what: &str,
        a: SocketAddrV4,
        f: unsafe extern "C" fn(*mut sys::socket, *mut sys::sockaddr, sys::socklen_t) -> i32,
    ) -> io::Result<()> {
        let mut sa = sockaddr(a);
        // SAFETY: a valid socket and a valid sockaddr_in of the size passed.
        let rc = unsafe {
            f(
                self.0,
                &mut sa as *mut sys::sockaddr_in as *mut sys::sockaddr,
                size_of::<sys::sockaddr_in>() as sys::socklen_t,
            )
        };
        check(what, rc)
    }

    /// Binds to every address of `addrs` (all with the first one's port): a
    /// multihomed endpoint. Binding the addresses explicitly matters: bound to the
    /// wildcard, this usrsctp picks no source address for an INIT it starts (it sends
    /// none).
    pub fn bind_all(&self, addrs: &[SocketAddrV4]) -> io::Result<()> {
        let (first, rest) = addrs
            .split_first()
            .ok_or_else(|| io::Error::other("usrsctp bind: no address"))?;
        self.bind(*first)?;
        if rest.is_empty() {
            return Ok(());
        }
        let rest: Vec<_> = rest
            .iter()
            .map(|a| SocketAddrV4::new(*a.ip(), first.port()))
            .collect();
        self.bindx(&rest, sys::SCTP_BINDX_ADD_ADDR)
    }

    /// Adds `a` to the bound addresses of a socket bound to specific addresses: with an
    /// association up and the peer supporting it, usrsctp tells the peer with an ASCONF
    /// ADD-IP (RFC 5061).
    pub fn add_address(&self, a: SocketAddrV4) -> io::Result<()> {
        self.bindx(&[a], sys::SCTP_BINDX_ADD_ADDR)
    }

    /// Removes `a` from the bound addresses (an ASCONF DEL-IP to the peer, as above).
    pub fn remove_address(&self, a: SocketAddrV4) -> io::Result<()> {
        self.bindx(&[a], sys::SCTP_BINDX_REM_ADDR)
    }

    fn bindx(&self, addrs: &[SocketAddrV4], flag: u32) -> io::Result<()> {
        let mut list: Vec<sys::sockaddr_in> = addrs.iter().map(|a| sockaddr(*a)).collect();
        // SAFETY: `list` holds `len` packed sockaddr_in.
        let rc = unsafe {
            sys::usrsctp_bindx(
                self.0,
                list.as_mut_ptr() as *mut sys::sockaddr,
                list.len() as i32,
                flag as i32,
            )
        };
        check("bindx", rc)
    }

    /// Makes the peer's address `a` the primary destination of the (one-to-one)
    /// socket's association: what usrsctp sends to by default, ASCONFs included.
    pub fn set_primary(&self, a: SocketAddrV4) -> io::Result<()> {
        // SAFETY: all-zero is a valid sctp_setprim (association id 0: the socket's own).
        let mut p: sys::sctp_setprim = unsafe { zeroed() };
        let sin = sockaddr(a);
        // SAFETY: a sockaddr_in fits in the sockaddr_storage it is written into.
        unsafe {
            std::ptr::write_unaligned(
                &mut p.ssp_addr as *mut sys::sockaddr_storage as *mut sys::sockaddr_in,
                sin,
            )
        };
        self.setsockopt(
            "set primary address",
            sys::IPPROTO_SCTP,
            sys::SCTP_PRIMARY_ADDR,
            &p,
        )
    }

    /// The UDP port the peer's encapsulation socket uses (RFC 6951), for associations
    /// this socket starts.
    pub fn set_remote_udp_port(&self, port: u16) -> io::Result<()> {
        // SAFETY: all-zero is a valid sctp_udpencaps (wildcard address, future assoc).
        let mut e: sys::sctp_udpencaps = unsafe { zeroed() };
        e.sue_address.ss_family = sys::AF_INET as sys::sa_family_t;
        e.sue_assoc_id = sys::SCTP_FUTURE_ASSOC;
        e.sue_port = port.to_be();
        self.setsockopt(
            "set remote UDP port",
            sys::IPPROTO_SCTP,
            sys::SCTP_REMOTE_UDP_ENCAPS_PORT,
            &e,
        )
    }

    /// Concurrent Multipath Transfer (Iyengar et al.; usrsctp's `SCTP_CMT_ON_OFF`, 1 =
    /// CMT) for the associations this socket starts or accepts from now on.
    pub fn set_cmt(&self, on: bool) -> io::Result<()> {
        let v = sys::sctp_assoc_value {
            assoc_id: sys::SCTP_FUTURE_ASSOC,
            assoc_value: on as u32,
        };
        self.setsockopt("set CMT", sys::IPPROTO_SCTP, SCTP_CMT_ON_OFF, &v)
    }

    /// Sets the endpoint-pair shared key number 0 (RFC 4895) for the associations this
    /// socket starts or accepts from now on (`SCTP_AUTH_KEY`).
    pub fn set_auth_key(&self, key: &[u8]) -> io::Result<()> {
        // struct sctp_authkey: assoc id (u32), key number (u16), key length (u16), key.
        let len = u16::try_from(key.len()).map_err(|_| io::Error::other("key too long"))?;
        let mut opt = Vec::with_capacity(8 + key.len());
        opt.extend_from_slice(&sys::SCTP_FUTURE_ASSOC.to_ne_bytes());
        opt.extend_from_slice(&0u16.to_ne_bytes());
        opt.extend_from_slice(&len.to_ne_bytes());
        opt.extend_from_slice(key);
        // SAFETY: `opt` is a live, packed sctp_authkey of the length passed.
        let rc = unsafe {
            sys::usrsctp_setsockopt(
                self.0,
                sys::IPPROTO_SCTP as i32,
                sys::SCTP_AUTH_KEY as i32,
                opt.as_ptr() as *const std::ffi::c_void,
                opt.len() as sys::socklen_t,
            )
        };
        check("set SCTP_AUTH_KEY", rc)
    }

    /// Requires the peer to authenticate chunks of type `chunk` (`SCTP_AUTH_CHUNK`:
    /// added to this endpoint's CHUNKS list; there is no way to remove it again).
    pub fn require_auth(&self, chunk: u8) -> io::Result<()> {
        self.setsockopt(
            "set SCTP_AUTH_CHUNK",
            sys::IPPROTO_SCTP,
            sys::SCTP_AUTH_CHUNK,
            &chunk, // struct sctp_authchunk { uint8_t sauth_chunk; }
        )
    }

    /// Makes the next close send an ABORT instead of shutting down (SO_LINGER 0).
    pub fn set_abort_on_close(&self) -> io::Result<()> {
        let l = sys::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        self.setsockopt("set SO_LINGER", sys::SOL_SOCKET, sys::SO_LINGER, &l)
    }

    /// Listens for associations.
    pub fn listen(&self) -> io::Result<()> {
        // SAFETY: a valid socket.
        check("listen", unsafe { sys::usrsctp_listen(self.0, 1) })
    }

    /// Waits for an association and returns its socket.
    pub fn accept(&self) -> io::Result<Socket> {
        // SAFETY: a valid socket; the peer's address is not asked for.
        let s = unsafe { sys::usrsctp_accept(self.0, null_mut(), null_mut()) };
        if s.is_null() {
            return Err(last_error("accept"));
        }
        Ok(Socket(s))
    }

    /// Sets up an association with `to` (blocks until established or failed).
    pub fn connect(&self, to: SocketAddrV4) -> io::Result<()> {
        self.with_sockaddr("connect", to, sys::usrsctp_connect)
    }

    /// Sends all of `data` on stream 0 as 64 KB messages (blocks while the send
    /// buffer is full).
    pub fn send_all(&self, data: &[u8]) -> io::Result<()> {
        for m in data.chunks(64 * 1024) {
            // SAFETY: `m` is live for the call; no send info.
            let n = unsafe {
                sys::usrsctp_sendv(
                    self.0,
                    m.as_ptr() as *const std::ffi::c_void,
                    m.len() as sys::size_t,
                    null_mut(),
                    0,
                    null_mut(),
                    0,
                    sys::SCTP_SENDV_NOINFO,
                    0,
                )
            };
            if n < 0 {
                return Err(last_error("sendv"));
            }
            if n as usize != m.len() {
                return Err(io::Error::other(format!(
                    "usrsctp sendv: {n} of {} bytes",
                    m.len()
                )));
            }
        }
        Ok(())
    }

    /// Receives until the peer shuts down; `on_bytes` sees the running total after each
    /// read. An ABORT from the peer is an error (connection reset).
    pub fn recv_to_end(&self, mut on_bytes: impl FnMut(usize)) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let (mut infolen, mut infotype, mut flags) = (0 as sys::socklen_t, 0u32, 0i32);
            // SAFETY: `buf` is live and as long as passed; no address or info wanted.
            let n = unsafe {
                sys::usrsctp_recvv(
                    self.0,
                    buf.as_mut_ptr() as *mut std::ffi::c_void,
                    buf.len() as sys::size_t,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    &mut infolen,
                    &mut infotype,
                    &mut flags,
                )
            };
            if n < 0 {
                return Err(last_error("recvv"));
            }
            if n == 0 {
                return Ok(out);
            }
            if flags & sys::MSG_NOTIFICATION as i32 == 0 {
                out.extend_from_slice(&buf[..n as usize]);
                on_bytes(out.len());
            }
        }
    }

    /// The peer's addresses in the association (its multihoming as usrsctp sees it).
    pub fn peer_addresses(&self) -> io::Result<Vec<SocketAddrV4>> {
        let mut list: *mut sys::sockaddr = null_mut();
        // SAFETY: usrsctp allocates the list and returns its length.
        let n = unsafe { sys::usrsctp_getpaddrs(self.0, 0, &mut list) };
        if n < 0 {
            return Err(last_error("getpaddrs"));
        }
        let mut out = Vec::new();
        let mut p = list as *const u8;
        for _ in 0..n {
            // SAFETY: the list holds `n` packed sockaddrs, each as long as its family's
            // structure; only IPv4 ones are created by these sockets.
            let family = unsafe { (*(p as *const sys::sockaddr)).sa_family } as u32;
            if family != sys::AF_INET {
                break;
            }
            // SAFETY: an AF_INET entry is a sockaddr_in (read unaligned to be safe).
            let sin = unsafe { std::ptr::read_unaligned(p as *const sys::sockaddr_in) };
            out.push(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                u16::from_be(sin.sin_port),
            ));
            // SAFETY: still inside the list (n entries).
            p = unsafe { p.add(size_of::<sys::sockaddr_in>()) };
        }
        if !list.is_null() {
            // SAFETY: the list usrsctp_getpaddrs allocated.
            unsafe { sys::usrsctp_freepaddrs(list) };
        }
        Ok(out)
    }

    /// Chunks of the socket's association sent and not yet acknowledged, and chunks
    /// not yet sent (`SCTP_STATUS`: `sstat_unackdata`, `sstat_penddata`).
    pub fn outstanding(&self) -> io::Result<(u16, u16)> {
        // SAFETY: all-zero is a valid sctp_status (association id 0: the socket's own).
        let mut st: sys::sctp_status = unsafe { zeroed() };
        let mut len = size_of::<sys::sctp_status>() as sys::socklen_t;
        // SAFETY: `st` is a live sctp_status of the length passed.
        let rc = unsafe {
            sys::usrsctp_getsockopt(
                self.0,
                sys::IPPROTO_SCTP as i32,
                sys::SCTP_STATUS as i32,
                &mut st as *mut sys::sctp_status as *mut std::ffi::c_void,
                &mut len,
            )
        };
        check("status", rc)?;
        Ok((st.sstat_unackdata, st.sstat_penddata))
    }

    /// Graceful end of sending (SHUTDOWN once everything is acknowledged).
    pub fn shutdown_write(&self) -> io::Result<()> {
        // SAFETY: a valid socket.
        check("shutdown", unsafe {
            sys::usrsctp_shutdown(self.0, libc::SHUT_WR)
        })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: the socket is valid and closed once.
        unsafe { sys::usrsctp_close(self.0) };
    }
}
