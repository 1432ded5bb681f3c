//! `--local` entries: addresses, interface names, or `auto`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use cmt_net::ifwatch::auto::{auto, AUTO_EXCLUDED};

/// `--local` entries: an address (`127.0.1.1:0`); an interface name with an optional
/// port (`wlan0`, `eth1:5000`), which stands for the interface's first IPv4 address
/// (its first IPv6 address when it has no IPv4 one), or for none yet when it exists
/// without an address (its path starts when it gets one); or `auto[:PORT]`, every
/// interface [`auto`] picks. Each comes with the interface it named, if it named one:
/// those paths follow their interface's address during the transfer. `exclude`:
/// interfaces `auto` must leave out besides [`AUTO_EXCLUDED`]; `flag`: the option the
/// entries came from (`--local`, `--listen`), for errors.
pub fn parse_locals(
    list: &[String],
    exclude: &[String],
    flag: &str,
) -> Result<Vec<(SocketAddr, Option<String>)>, String> {
    let ifaces = if_addrs::get_if_addrs().unwrap_or_default();
    let mut out = Vec::new();
    for e in list.iter().map(|e| e.trim()) {
        if let Ok(a) = e.parse::<SocketAddr>() {
            out.push((a, None));
            continue;
        }
        let (name, port) = match e.rsplit_once(':') {
            Some((n, p)) => (
                n,
                p.parse::<u16>()
                    .map_err(|_| format!("{flag}: `{e}`: `{p}` is not a port"))?,
            ),
            None => (e, 0),
        };
        if name == "auto" {
            let named: Vec<(String, IpAddr)> =
                ifaces.iter().map(|i| (i.name.clone(), i.ip())).collect();
            let picked = auto(&named, exclude);
            if picked.is_empty() {
                return Err(format!(
                    "{flag} auto: no interface with a usable IPv4 address (left out: \
                     loopback, link-local addresses, names starting with {}{})",
                    AUTO_EXCLUDED.join(", "),
                    exclude.iter().map(|x| format!(", {x}")).collect::<String>()
                ));
            }
            out.extend(
                picked
                    .into_iter()
                    .map(|(ip, n)| (SocketAddr::new(ip, port), Some(n))),
            );
            continue;
        }
        let ip = match cmt_net::ifwatch::address_of(&ifaces, name) {
            Some(ip) => ip,
            // An interface without an address yet: its path starts when it gets one.
            None if cmt_net::ifwatch::interface_exists(name) => Ipv4Addr::UNSPECIFIED.into(),
            None => {
                let mut names: Vec<&str> = ifaces.iter().map(|i| i.name.as_str()).collect();
                names.dedup();
                return Err(format!(
                    "{flag}: `{e}` is neither an address like 127.0.1.1:0, an interface nor \
                     auto (interfaces with an address: {})",
                    names.join(", ")
                ));
            }
        };
        out.push((SocketAddr::new(ip, port), Some(name.to_string())));
    }
    Ok(out)
}

/// The `--listen` entries (addresses, or interfaces with a port, each with the
/// interface that named it) and the `--peer` addresses of a receiver.
pub type Listening = (Vec<SocketAddr>, Vec<Option<String>>, Vec<std::net::IpAddr>);

/// Parses a receiver's `--listen` and `--peer` lists; an interface without an address
/// yet cannot be listened on.
pub fn listen_and_peers(listen: &[String], peers: &[String]) -> Result<Listening, String> {
    let (listen, interfaces): (Vec<SocketAddr>, Vec<Option<String>>) =
        parse_locals(listen, &[], "--listen")?.into_iter().unzip();
    if let Some(i) = listen.iter().position(|a| a.ip().is_unspecified()) {
        let name = interfaces[i].clone().unwrap_or_default();
        return Err(format!(
            "--listen: interface `{name}` has no address to listen on yet"
        ));
    }
    let peers = peers
        .iter()
        .map(|p| {
            p.trim()
                .parse::<std::net::IpAddr>()
                .map_err(|_| format!("--peer: `{p}` is not an IP address like 127.0.1.1"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((listen, interfaces, peers))
}

#[cfg(test)]
mod tests {
    use super::parse_locals;

    #[test]
    fn local_entries_may_name_an_interface_with_an_optional_port() {
        let v = |s: &[&str]| {
            parse_locals(
                &s.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
                &[],
                "--local",
            )
        };
        assert_eq!(v(&["127.0.1.1:0"]).unwrap()[0].0.to_string(), "127.0.1.1:0");
        // Loopback is "lo" on Linux and carries 127.0.0.1.
        assert_eq!(v(&["lo"]).unwrap()[0].0.to_string(), "127.0.0.1:0");
        assert_eq!(v(&["lo:5000"]).unwrap()[0].0.to_string(), "127.0.0.1:5000");
        // The interface an entry named is kept (those paths follow it); an address names none.
        let names: Vec<_> = v(&["lo", "lo:5000", "127.0.0.1:0"])
            .unwrap()
            .into_iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(names, [Some("lo".into()), Some("lo".into()), None]);
        let e = v(&["wlan9"]).unwrap_err();
        assert!(e.contains("`wlan9`") && e.contains("lo"), "{e}");
        let e = v(&["lo:port"]).unwrap_err();
        assert!(e.contains("`port` is not a port"), "{e}");
    }
}
