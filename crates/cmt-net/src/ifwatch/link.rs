//! Link state under the paths: which local interfaces are up, so a path whose link
//! comes back is probed at once ([`cmt_core::Association::link_up`]) instead of at its
//! next backed-off probe. Every socket bound to an address of a known interface is
//! watched — named by `--local IFACE` or found by its address — not only those that
//! follow their interface's address.
//!
//! A link is up when its interface is administratively up and has carrier
//! (`/sys/class/net/NAME/carrier` reads `1`; the file cannot be read while the
//! interface is down). Not the operational state (`operstate`): the kernel updates it
//! from a deferred work item, up to a second after the carrier — measured on a veth
//! pair, `operstate` still read `down` 300 ms after `ip link set up` while packets
//! already went through. Elsewhere than Linux nothing is read and nothing is reported.

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
    if !cfg!(target_os = "linux") {
        return true;
    }
    std::fs::read_to_string(format!("/sys/class/net/{name}/carrier")).is_ok_and(|s| s.trim() == "1")
}

impl LinkWatch {
    /// Watches `sockets`: `(socket, interface name)`, each as up or down now.
    pub fn new(sockets: Vec<(usize, String)>) -> LinkWatch {
        let links = sockets
            .into_iter()
            .map(|(s, name)| {
                let up = is_up(&name);
                (s, name, up)
            })
            .collect();
        LinkWatch { links }
    }

    /// Whether any link is watched.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Reads the links' states and returns the sockets whose link was down at the last
    /// reading and is up now.
    pub fn came_up(&mut self) -> Vec<usize> {
        self.came_up_by(is_up)
    }

    /// [`came_up`](Self::came_up) with the state read by `up`.
    fn came_up_by(&mut self, up: impl Fn(&str) -> bool) -> Vec<usize> {
        let mut out = Vec::new();
        for (socket, name, last) in &mut self.links {
            let now = up(name);
            if now && !*last {
                out.push(*socket);
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
    fn only_a_link_that_was_down_and_is_up_is_reported_once() {
        let mut w = LinkWatch {
            links: vec![(0, "wlan0".into(), true), (1, "wwan0".into(), false)],
        };
        // wlan0 goes down, wwan0 stays down: nothing came up.
        assert!(w.came_up_by(|_| false).is_empty());
        // Both up: both reported, then not again.
        assert_eq!(w.came_up_by(|_| true), [0, 1]);
        assert!(w.came_up_by(|_| true).is_empty());
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
