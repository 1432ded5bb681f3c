//! `[[events]]`: scheduled changes of links — failures and recoveries, fades,
//! handovers — and flapping, a failure that repeats; and of paths — an address added
//! or removed, as when an interface comes up or goes away.

use cmt_core::Duration;

use super::limits::at_most_max_time;
use super::links::{link_index, BuiltLink};
use super::{field, BuildError, EventSpec, FlapSpec, Scenario};
use crate::link::LinkChange;
use crate::units::{parse_duration, parse_probability, parse_rate};

/// A validated link event.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltEvent {
    /// When.
    pub at: Duration,
    /// Directional link indexes (2·link for forward, 2·link + 1 for reverse).
    pub links: Vec<usize>,
    /// What changes.
    pub change: LinkChange,
    /// A path event instead: the path's index and whether its address is added
    /// (`true`) or removed.
    pub path: Option<(usize, bool)>,
}

/// Most link changes one flapping event may expand into.
pub const MAX_FLAPS: u64 = 100_000;

/// `[[events]]`, in time order (a flapping event as its downs and ups). An event after
/// `end`, the end of the run, is refused: it would silently never happen.
pub(super) fn build_events(
    s: &Scenario,
    links: &[BuiltLink],
    end: Duration,
) -> Result<Vec<BuiltEvent>, BuildError> {
    let mut events = Vec::with_capacity(s.events.len());
    for (i, e) in s.events.iter().enumerate() {
        let first = match &e.path {
            Some(name) => path_event(i, e, name, s)?,
            None => build_event(i, e, links)?,
        };
        if first.at > end {
            return Err(BuildError::new(
                format!("events[{i}].at"),
                format!(
                    "{} s is after the end of the run ({} s): the event would never happen",
                    first.at.as_secs_f64(),
                    end.as_secs_f64()
                ),
            ));
        }
        match &e.flap {
            None => events.push(first),
            Some(flap) => events.extend(flaps(i, flap, first)?),
        }
    }
    events.sort_by_key(|e| e.at);
    Ok(events)
}

/// Event `i`: a link (and direction) and what changes at a time.
fn build_event(i: usize, e: &EventSpec, links: &[BuiltLink]) -> Result<BuiltEvent, BuildError> {
    let f = |k: &str| format!("events[{i}].{k}");
    let Some(name) = &e.link else {
        return Err(BuildError::new(
            format!("events[{i}]"),
            "names neither a link (`link = …`) nor a path (`path = …`)".into(),
        ));
    };
    let link = link_index(links, name, || f("link"))?;
    let dirs = match e.direction.as_deref() {
        None | Some("both") => vec![2 * link, 2 * link + 1],
        Some("forward") => vec![2 * link],
        Some("reverse") => vec![2 * link + 1],
        Some(o) => {
            return Err(BuildError::new(
                f("direction"),
                format!("unknown direction `{o}` (both, forward, reverse)"),
            ))
        }
    };
    if e.flap.is_some()
        && (e.state.is_some() || e.rate.is_some() || e.delay.is_some() || e.loss.is_some())
    {
        return Err(BuildError::new(
            f("flap"),
            "a flapping event changes the state only: no state, rate, delay or loss beside it"
                .into(),
        ));
    }
    let change = LinkChange {
        down: match (e.state.as_deref(), &e.flap) {
            (_, Some(_)) => Some(true),
            (None, None) => None,
            (Some("down"), None) => Some(true),
            (Some("up"), None) => Some(false),
            (Some(o), None) => {
                return Err(BuildError::new(
                    f("state"),
                    format!("unknown state `{o}` (down, up)"),
                ))
            }
        },
        rate_bps: e
            .rate
            .as_ref()
            .map(|r| field(&f("rate"), parse_rate(r)))
            .transpose()?,
        delay: e
            .delay
            .as_ref()
            .map(|r| field(&f("delay"), parse_duration(r)))
            .transpose()?,
        loss: e
            .loss
            .as_ref()
            .map(|r| field(&f("loss"), parse_probability(r)))
            .transpose()?,
    };
    if change == LinkChange::default() {
        return Err(BuildError::new(
            format!("events[{i}]"),
            "changes nothing: give state, rate, delay, loss or flap".into(),
        ));
    }
    Ok(BuiltEvent {
        at: field(&f("at"), parse_duration(&e.at))?,
        links: dirs,
        change,
        path: None,
    })
}

/// A flapping link from `first.at`: down for `down`, up for `up`, again and again until
/// `until`, and up from then on.
fn flaps(i: usize, flap: &FlapSpec, first: BuiltEvent) -> Result<Vec<BuiltEvent>, BuildError> {
    let f = |k: &str| format!("events[{i}].flap.{k}");
    let down = field(&f("down"), parse_duration(&flap.down))?;
    let up = field(&f("up"), parse_duration(&flap.up))?;
    let until = at_most_max_time(
        &f("until"),
        field(&f("until"), parse_duration(&flap.until))?,
    )?;
    if down == Duration::ZERO || up == Duration::ZERO || until <= first.at {
        return Err(BuildError::new(
            format!("events[{i}].flap"),
            "needs down > 0, up > 0 and until after `at`".into(),
        ));
    }
    let period = (down + up).as_nanos();
    let cycles = (until.as_nanos() - first.at.as_nanos()).div_ceil(period);
    if cycles > MAX_FLAPS {
        return Err(BuildError::new(
            format!("events[{i}].flap"),
            format!("{cycles} cycles: at most {MAX_FLAPS}"),
        ));
    }
    let at = |k: u64, then: Duration| Duration::from_nanos(first.at.as_nanos() + k * period) + then;
    let state = |t: Duration, down: bool| BuiltEvent {
        at: t.min(until),
        links: first.links.clone(),
        change: LinkChange {
            down: Some(down),
            ..LinkChange::default()
        },
        path: None,
    };
    let mut out = Vec::with_capacity(2 * cycles as usize);
    for k in 0..cycles {
        out.push(state(at(k, Duration::ZERO), true));
        out.push(state(at(k, down), false));
    }
    Ok(out)
}

/// Event `i` on path `name`: its address added or removed, and nothing else.
fn path_event(i: usize, e: &EventSpec, name: &str, s: &Scenario) -> Result<BuiltEvent, BuildError> {
    let f = |k: &str| format!("events[{i}].{k}");
    let path = s.paths.iter().position(|p| p.name == name).ok_or_else(|| {
        let known: Vec<&str> = s.paths.iter().map(|p| p.name.as_str()).collect();
        BuildError::new(
            f("path"),
            format!("unknown path `{name}` (paths: {})", known.join(", ")),
        )
    })?;
    if e.link.is_some()
        || e.direction.is_some()
        || e.rate.is_some()
        || e.delay.is_some()
        || e.loss.is_some()
        || e.flap.is_some()
    {
        return Err(BuildError::new(
            format!("events[{i}]"),
            "a path event gives `state = \"added\"` or `\"removed\"` only (a link's changes \
             are separate events)"
                .into(),
        ));
    }
    let added = match e.state.as_deref() {
        Some("added") => true,
        Some("removed") => false,
        other => {
            return Err(BuildError::new(
                f("state"),
                format!(
                    "{} (a path event needs `added` or `removed`)",
                    other.map_or("missing".to_string(), |o| format!("`{o}`"))
                ),
            ))
        }
    };
    Ok(BuiltEvent {
        at: field(&f("at"), parse_duration(&e.at))?,
        links: Vec::new(),
        change: LinkChange::default(),
        path: Some((path, added)),
    })
}
