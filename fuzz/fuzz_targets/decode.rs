//! Any input: `decode` returns, never panics; what it accepts re-encodes to bytes that
//! parse to the same packet.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = cmt_core::wire::decode(data) {
        let mut out = Vec::new();
        cmt_core::wire::encode(&d.packet, d.src_port, d.dst_port, &mut out);
        let again = cmt_core::wire::decode(&out).expect("our own encoding parses");
        assert_eq!(again.packet, d.packet);
    }
});
