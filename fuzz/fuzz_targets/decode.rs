//! Any datagram, as it came and with its checksum repaired: `decode` returns, never
//! panics; what it accepts re-encodes to bytes that parse to the same packet
//! (`cmt_core::fuzzing::decode_one`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cmt_core::fuzzing::decode_one(data);
});
