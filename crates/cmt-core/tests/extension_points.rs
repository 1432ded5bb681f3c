//! Programs add algorithms to the process-wide tables: a registered name is listed,
//! builds through `by_name` like a built-in one, and cannot be taken twice; the
//! parameterless `FnFactory` of each extension point builds what its closure makes.

use cmt_core::cc::{self, CcInit, CongestionControl, Reno};
use cmt_core::rtx::{self, RetransmissionPolicy, RtxContext};
use cmt_core::sched::{self, SchedContext, Scheduler};
use cmt_core::{Params, PathId, PathView, Time};
use rand::RngCore;

/// Always the last candidate.
struct Last;
impl RetransmissionPolicy for Last {
    fn select(&mut self, ctx: &RtxContext<'_>, _rng: &mut dyn RngCore) -> PathId {
        *ctx.candidates.last().expect("candidates are never empty")
    }
}

/// Always path 0.
struct First;
impl Scheduler for First {
    fn select(&mut self, _ctx: &SchedContext<'_>) -> Option<PathId> {
        Some(PathId(0))
    }
}

#[test]
fn registered_algorithms_are_listed_built_and_their_names_kept() {
    rtx::register("rtx-last", "the last candidate", |_| {
        Ok(rtx::FnFactory::new("rtx-last", || Box::new(Last)))
    })
    .unwrap();
    sched::register("first-path", "always path 0", |_| {
        Ok(sched::FnFactory::new("first-path", |_| Box::new(First)))
    })
    .unwrap();
    cc::register("reno-again", "Reno under another name", |_| {
        Ok(cc::FnFactory::new("reno-again", |_, init: &CcInit| {
            Box::new(Reno::new(init)) as Box<dyn CongestionControl>
        }))
    })
    .unwrap();

    assert!(rtx::names().contains(&"rtx-last".to_string()));
    assert!(sched::names().contains(&"first-path".to_string()));
    assert!(cc::names().contains(&"reno-again".to_string()));

    let paths: Vec<PathView> = (0..3).map(PathView::idle).collect();
    let candidates = [PathId(0), PathId(2)];
    let ctx = RtxContext {
        now: Time::ZERO,
        paths: &paths,
        candidates: &candidates,
        original: PathId(0),
        tsn: 1,
    };
    let mut policy = rtx::by_name("rtx-last", &Params::default())
        .unwrap()
        .build();
    assert_eq!(
        policy.select(&ctx, &mut rand::rngs::mock::StepRng::new(0, 1)),
        PathId(2)
    );

    let init = CcInit {
        mtu: 1500,
        initial_cwnd: 4380,
        initial_ssthresh: 65536,
    };
    let reno = cc::by_name("reno-again", &Params::default())
        .unwrap()
        .build(PathId(1), &init);
    assert_eq!(reno.cwnd(), 4380);

    let e = rtx::register("rtx-cwnd", "", |_| {
        Ok(rtx::FnFactory::new("x", || Box::new(Last)))
    })
    .unwrap_err();
    assert_eq!(
        e.0,
        "retransmission policy `rtx-cwnd` is already registered"
    );
    let e = sched::by_name("nope", &Params::default()).err().unwrap();
    assert!(
        e.0.starts_with("unknown scheduler `nope` (known: round-robin,"),
        "{}",
        e.0
    );
    assert!(e.0.ends_with("first-path)"), "{}", e.0);
}
