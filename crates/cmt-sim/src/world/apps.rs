//! Web-like flows in the event loop (`crate::app`): the next object handed to the
//! sender when the flow starts or its think time ends, and an object's completion seen
//! after each packet the flow's ends handle.

use cmt_core::Payload;

use super::{Ev, Simulation};
use crate::ids::{EndpointId, FlowId};

impl Simulation {
    /// Flow `f`'s sender `e` gets its next object (a web-like flow) or an endless
    /// backlog (any other closed-loop flow).
    pub(super) fn next_object(&mut self, f: FlowId, e: EndpointId) {
        let Some(app) = self.apps[f.0].as_mut() else {
            self.ends[e].assoc.write_backlog();
            return;
        };
        let size = app.model.object(&mut app.rng);
        app.target += u64::from(size);
        app.started = Some(self.now);
        self.ends[e].assoc.write(Payload::Synthetic(size));
    }

    /// After a packet of flow `f`: when its receiver has delivered the whole current
    /// object, its completion time is recorded and the next object follows a think time.
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
        counters
            .fct_ns
            .push(self.now.saturating_since(started).as_nanos());
        app.started = None;
        let think = app.model.think(&mut app.rng);
        self.q.push(self.now + think, Ev::Traffic(f));
    }
}
