//! Application-limited flows in the event loop (`crate::app`): the next object (web)
//! or segment (video) handed to the sender when the flow starts or its wait ends, and
//! its completion seen after each packet the flow's ends handle.

use cmt_core::Payload;

use super::{Ev, Simulation};
use crate::app::App;
use crate::ids::{EndpointId, FlowId};

impl Simulation {
    /// Flow `f`'s sender `e` gets its next object or segment (an application-limited
    /// flow) or an endless backlog (any other closed-loop flow).
    pub(super) fn next_object(&mut self, f: FlowId, e: EndpointId) {
        let Some(app) = self.apps[f.0].as_mut() else {
            self.ends[e].assoc.write_backlog();
            return;
        };
        let size = match &app.model {
            App::Web(m) => m.object(&mut app.rng),
            App::Video(m) => app.player.segment_bytes(m),
        };
        app.size = size;
        app.target += u64::from(size);
        app.started = Some(self.now);
        self.ends[e].assoc.write(Payload::Synthetic(size));
    }

    /// After a packet of flow `f`: when its receiver has delivered the whole current
    /// object, its completion time is recorded and the next follows a think time (web)
    /// or when the player's buffer has room (video).
    pub(super) fn check_object(&mut self, f: FlowId) {
        let Some(app) = self.apps[f.0].as_mut() else {
            return;
        };
        let Some(started) = app.started else {
            return;
        };
        let mut rec = self.rec.borrow_mut();
        let counters = &mut rec.flows[f.0];
        if counters.delivered_bytes < app.target {
            return;
        }
        let took = self.now.saturating_since(started);
        counters.fct_ns.push(took.as_nanos());
        app.started = None;
        let wait = match &app.model {
            App::Web(m) => m.think(&mut app.rng),
            App::Video(m) => app.player.segment_done(m, self.now, app.size, took),
        };
        self.q.push(self.now + wait, Ev::Traffic(f));
    }
}
