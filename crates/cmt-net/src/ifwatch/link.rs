//! Link state under the paths: which local interfaces are up, so a path whose link
//! goes down is taken out at once ([`cmt_core::Association::link_down`]) instead of
//! after its RTO, and one whose link comes back is probed at once
//! ([`cmt_core::Association::link_up`]) instead of at its next backed-off probe. Every socket bound to an address of a known interface is
//! watched — named by `--local IFACE` or found by its address — not only those that
//! follow their interface's address.
//!
//! A link is up when its interface is administratively up and has carrier
//! (`IFF_UP` and `IFF_LOWER_UP` in the flags `getifaddrs` reports — read through
//! netlink, so in the process's own network namespace whatever `/sys` shows). Not the
//! operational state (`operstate`, `IFF_RUNNING`): the kernel updates it from a
//! deferred work item, up to a second after the carrier — measured on a veth pair,
//! `operstate` still read `down` 300 ms after `ip link set up` while packets already
//! went through. Elsewhere than Linux nothing is read and nothing is reported.

use std::net::IpAddr;

/// Sockets' interfaces and whether each was up at the last reading.
#[derive(Debug, Default)]
pub struct LinkWatch {
    /// `(socket, interface, up at the last reading)`.
    links: Vec<(usize, String, bool)>,
}

/// The interface that holds `ip` in `ifaces` (`None` for a wildcard or unknown address).
pub fn interface_of(ifaces: &[if_addrs::Interface], ip: IpAddr) -> Option<String> {
    if ip.is_unspecified() {
        return None;
    }
    ifaces.iter().find(|i| i.ip() == ip).map(|i| i.name.clone())
}

/// Whether interface `name` is up and has carrier (see the module's documentation).
pub fn is_up(name: &str) -> bool {
    up_links().iter().any(|n| n == name)
}

/// The interfaces that are up and have carrier (on other systems than Linux: none).
pub fn up_links() -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        use nix::net::if_::InterfaceFlags;
        let want = InterfaceFlags::IFF_UP | InterfaceFlags::IFF_LOWER_UP;
        let mut out: Vec<String> = Vec::new();
        for i in nix::ifaddrs::getifaddrs().into_iter().flatten() {
            if i.flags.contains(want) && !out.contains(&i.interface_name) {
                out.push(i.interface_name);
            }
        }
        out
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

impl LinkWatch {
    /// Watches `sockets`: `(socket, interface name)`, each as up or down now.
    pub fn new(sockets: Vec<(usize, String)>) -> LinkWatch {
        let up = up_links();
        let links = sockets
            .into_iter()
            .map(|(s, name)| {
                let is = up.contains(&name);
                (s, name, is)
            })
            .collect();
        LinkWatch { links }
    }

    /// Whether any link is watched.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Reads the links' states and returns the sockets whose link changed since the
    /// last reading, each with whether it is up now.
    pub fn changed(&mut self) -> Vec<(usize, bool)> {
        if self.links.is_empty() {
            return Vec::new();
        }
        let up = up_links();
        self.changed_by(|name| up.iter().any(|n| n == name))
    }

    /// [`changed`](Self::changed) with the state read by `up`.
    fn changed_by(&mut self, up: impl Fn(&str) -> bool) -> Vec<(usize, bool)> {
        let mut out = Vec::new();
        for (socket, name, last) in &mut self.links {
            let now = up(name);
            if now != *last {
                out.push((*socket, now));
            }
            *last = now;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_reported_when_it_goes_down_and_when_it_comes_back_once_each() {
        let mut w = LinkWatch {
            links: vec![(0, "wlan0".into(), true), (1, "wwan0".into(), false)],
        };
        // wlan0 goes down, wwan0 stays down.
        assert_eq!(w.changed_by(|_| false), [(0, false)]);
        assert!(w.changed_by(|_| false).is_empty());
        // Both up: both reported, then not again.
        assert_eq!(w.changed_by(|_| true), [(0, true), (1, true)]);
        assert!(w.changed_by(|_| true).is_empty());
        // Loopback is up; a missing interface is not.
        assert!(is_up("lo"));
        assert!(!is_up("no-such-interface"));
        let ifaces = if_addrs::get_if_addrs().unwrap();
        assert_eq!(
            interface_of(&ifaces, "127.0.0.1".parse().unwrap()).as_deref(),
            Some("lo")
        );
        assert_eq!(interface_of(&ifaces, "0.0.0.0".parse().unwrap()), None);
    }
}
