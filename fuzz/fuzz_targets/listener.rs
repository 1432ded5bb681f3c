//! A listener fed datagrams, INITs and echoed (possibly changed) cookies
//! (`cmt_core::fuzzing::listener` states the invariants).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cmt_core::fuzzing::listener(data);
});
