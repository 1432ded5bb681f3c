//! How the closed-loop flows of a run shared the network: Jain's fairness index over
//! their goodputs (Jain, Chiu and Hawe, DEC-TR-301, 1984) and, for each multipath one,
//! RFC 6356's first two goals as numbers (Raiciu, Handley and Wischik, "Coupled
//! Congestion Control for Multipath Transport Protocols", RFC 6356, 2011, §2):
//! goal 1, "improve throughput" — its goodput against the best single-path TCP-like
//! flow that crosses one of its links; goal 2, "do no harm" — on each link it shares
//! with TCP-like flows, what all its paths send through the link against what one of
//! them sends.

use serde::{Deserialize, Serialize};

use super::Summary;
use crate::scenario::Built;

/// The participants: the association under study and every backlogged closed-loop
/// background flow (TCP-like or multipath), each with its goodput and share.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fairness {
    /// Jain's index `(Σx)² / (n·Σx²)` over the participants' goodputs: 1 when all are
    /// equal, `1/n` when one takes everything.
    pub jain: f64,
    /// The association first, then the closed-loop flows in scenario order.
    pub shares: Vec<Share>,
}

/// One participant's part.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Share {
    /// "association" or the flow's name.
    pub name: String,
    /// Paths it sends on.
    pub paths: usize,
    /// Goodput, Mbit/s (over its active time).
    pub goodput_mbps: f64,
    /// Its part of the participants' summed goodput.
    pub share: f64,
    /// RFC 6356 goal 1 (multipath participants): goodput over the largest goodput of a
    /// TCP-like flow that crosses one of its paths' links; at least 1 meets the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_best_tcp: Option<f64>,
    /// RFC 6356 goal 2 (multipath participants): the largest, over the links it shares
    /// with TCP-like flows, of what its paths send through the link over the mean that
    /// one of those flows sends; at most 1 meets the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_tcp_on_shared: Option<f64>,
}

/// A participant as the metrics see it: its forward link directions per path and the
/// rate it sends on each path, Mbit/s.
struct Party {
    name: String,
    goodput: f64,
    routes: Vec<Vec<usize>>,
    path_sent: Vec<f64>,
    tcp_like: bool,
}

/// The names [`Fairness::shares`] will have in a run of `b`: "association" and each
/// closed-loop background flow's, or none when it has no such flow.
pub fn names(b: &Built) -> Vec<String> {
    if !b.traffic.iter().any(backlogged) {
        return Vec::new();
    }
    let flows = b
        .traffic
        .iter()
        .filter(|t| backlogged(t))
        .map(|t| t.name.clone());
    std::iter::once("association".to_string())
        .chain(flows)
        .collect()
}

/// A backlogged closed-loop flow (TCP-like or multipath): a participant. Web and
/// video flows are left out — they take what their objects need, not a share.
fn backlogged(t: &crate::scenario::BuiltTraffic) -> bool {
    t.tcp && t.app.is_none()
}

/// The run's fairness, when it has at least one backlogged closed-loop background flow.
pub(super) fn of(b: &Built, s: &Summary) -> Option<Fairness> {
    if !b.traffic.iter().any(backlogged) {
        return None;
    }
    let secs = s.sim_time_s;
    let mut parties = vec![Party {
        name: "association".into(),
        goodput: s.goodput_mbps,
        routes: b
            .paths
            .iter()
            .map(|p| p.links.iter().map(|&l| 2 * l).collect())
            .collect(),
        path_sent: s
            .paths
            .iter()
            .map(|p| super::mbps(p.sent_bytes, secs))
            .collect(),
        tcp_like: b.paths.len() == 1,
    }];
    for (t, f) in b
        .traffic
        .iter()
        .zip(&s.background)
        .filter(|(t, _)| backlogged(t))
    {
        parties.push(Party {
            name: t.name.clone(),
            goodput: f.delivered_mbps,
            routes: t.paths.clone(),
            path_sent: if f.path_mbps.is_empty() {
                vec![f.offered_mbps]
            } else {
                f.path_mbps.clone()
            },
            tcp_like: t.paths.len() == 1,
        });
    }
    let total: f64 = parties.iter().map(|p| p.goodput).sum();
    let squares: f64 = parties.iter().map(|p| p.goodput * p.goodput).sum();
    let jain = if squares > 0.0 {
        total * total / (parties.len() as f64 * squares)
    } else {
        0.0
    };
    let shares = parties
        .iter()
        .map(|p| Share {
            name: p.name.clone(),
            paths: p.routes.len(),
            goodput_mbps: p.goodput,
            share: if total > 0.0 { p.goodput / total } else { 0.0 },
            vs_best_tcp: (p.routes.len() > 1)
                .then(|| goal_one(p, &parties))
                .flatten(),
            vs_tcp_on_shared: (p.routes.len() > 1)
                .then(|| goal_two(p, &parties))
                .flatten(),
        })
        .collect();
    Some(Fairness { jain, shares })
}

/// The TCP-like flows that cross link direction `l`.
fn tcp_through(l: usize, parties: &[Party]) -> impl Iterator<Item = &Party> {
    parties
        .iter()
        .filter(move |q| q.tcp_like && q.routes[0].contains(&l))
}

/// Goal 1: goodput over the best TCP-like flow on one of `p`'s links.
fn goal_one(p: &Party, parties: &[Party]) -> Option<f64> {
    let best = p
        .routes
        .iter()
        .flatten()
        .flat_map(|&l| tcp_through(l, parties))
        .map(|q| q.goodput)
        .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))))?;
    (best > 0.0).then(|| p.goodput / best)
}

/// Goal 2: on each link `p` shares with TCP-like flows, what its paths send through it
/// over the mean of theirs; the largest.
fn goal_two(p: &Party, parties: &[Party]) -> Option<f64> {
    let mut links: Vec<usize> = p.routes.iter().flatten().copied().collect();
    links.sort_unstable();
    links.dedup();
    links
        .into_iter()
        .filter_map(|l| {
            let tcp: Vec<f64> = tcp_through(l, parties).map(|q| q.path_sent[0]).collect();
            let mean = tcp.iter().sum::<f64>() / tcp.len().max(1) as f64;
            let mine: f64 = p
                .routes
                .iter()
                .zip(&p.path_sent)
                .filter(|(r, _)| r.contains(&l))
                .map(|(_, x)| x)
                .sum();
            (mean > 0.0).then(|| mine / mean)
        })
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn party(name: &str, goodput: f64, routes: Vec<Vec<usize>>, sent: Vec<f64>) -> Party {
        Party {
            name: name.into(),
            goodput,
            tcp_like: routes.len() == 1,
            routes,
            path_sent: sent,
        }
    }

    /// RFC 6356's example of goal 2: a two-path flow with both paths through one
    /// bottleneck beside one TCP. Uncoupled, each subflow takes what a TCP does (the
    /// flow sends 2× a TCP through the link and gets 2/3 of it); coupled, the flow
    /// sends what one TCP does.
    #[test]
    fn both_paths_through_a_shared_link() {
        let tcp = party("tcp", 5.0, vec![vec![0]], vec![5.0]);
        let uncoupled = party("mp", 10.0, vec![vec![0, 2], vec![0, 4]], vec![5.0, 5.0]);
        let parties = [uncoupled, tcp];
        assert_eq!(goal_two(&parties[0], &parties), Some(2.0));
        assert_eq!(goal_one(&parties[0], &parties), Some(2.0));
        let coupled = party("mp", 5.0, vec![vec![0, 2], vec![0, 4]], vec![2.5, 2.5]);
        let tcp = party("tcp", 5.0, vec![vec![0]], vec![5.0]);
        let parties = [coupled, tcp];
        assert_eq!(goal_two(&parties[0], &parties), Some(1.0));
        assert_eq!(goal_one(&parties[0], &parties), Some(1.0));
    }

    /// A path with no TCP beside it gives no number.
    #[test]
    fn no_tcp_on_the_links_no_goal() {
        let mp = party("mp", 5.0, vec![vec![0], vec![2]], vec![2.5, 2.5]);
        let tcp = party("tcp", 5.0, vec![vec![6]], vec![5.0]);
        let parties = [mp, tcp];
        assert_eq!(goal_one(&parties[0], &parties), None);
        assert_eq!(goal_two(&parties[0], &parties), None);
    }
}
