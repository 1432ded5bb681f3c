//! Two established endpoints and a network the input controls: losses, time, forged
//! datagrams to either end (`cmt_core::fuzzing::association` states the invariants).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cmt_core::fuzzing::association(data);
});
