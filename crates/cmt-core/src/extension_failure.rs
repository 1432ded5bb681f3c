//! Failures of registered algorithms that cannot go on.
//!
//! A scheduler, retransmission policy or controller registered at run time may call
//! code that fails — a Python scheduler that raises, a callback that returns an
//! invalid path. The core's traits have no error path (built-in algorithms cannot
//! fail), so such an algorithm records the failure here with [`fail`] and then
//! declines to act (a scheduler answers "no path"). The driver that runs the
//! association checks [`failed`] now and then and, at the end, [`take`]s the message:
//! the run fails with it instead of producing a result.
//!
//! The record is per thread: a run is driven on one thread from start to end, so
//! parallel runs of a sweep never see each other's failures.

use std::cell::RefCell;

thread_local! {
    static FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records that a registered algorithm failed; the first message of a run is kept.
pub fn fail(message: impl Into<String>) {
    FAILURE.with(|f| {
        let mut f = f.borrow_mut();
        if f.is_none() {
            *f = Some(message.into());
        }
    });
}

/// Whether a failure was recorded on this thread and not yet taken.
pub fn failed() -> bool {
    FAILURE.with(|f| f.borrow().is_some())
}

/// The recorded failure, clearing the record.
pub fn take() -> Option<String> {
    FAILURE.with(|f| f.borrow_mut().take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_failure_until_taken_and_is_per_thread() {
        assert!(!failed());
        fail("first");
        fail("second");
        assert!(failed());
        std::thread::spawn(|| assert!(!failed())).join().unwrap();
        assert_eq!(take().as_deref(), Some("first"));
        assert!(!failed());
        assert_eq!(take(), None);
    }
}
