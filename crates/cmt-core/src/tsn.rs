//! Transmission sequence numbers: 32-bit on the wire, unwrapped to 64 bits inside.
//!
//! RFC 9260 §3.3.1 TSNs are 32-bit serial numbers (RFC 1982 arithmetic). The core keeps
//! every TSN as an unwrapped `u64` so that ordered maps and arithmetic stay simple, and
//! converts at the packet boundary with [`unwrap_tsn`].

/// Low 32 bits of an unwrapped TSN, as carried in a chunk.
pub fn wire_tsn(tsn: u64) -> u32 {
    tsn as u32
}

/// The unwrapped TSN closest to `reference` whose low 32 bits are `wire`.
pub fn unwrap_tsn(reference: u64, wire: u32) -> u64 {
    let diff = wire.wrapping_sub(reference as u32) as i32 as i64;
    (reference as i64).wrapping_add(diff).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_crosses_the_32_bit_boundary_both_ways() {
        let r = (1u64 << 32) - 3;
        assert_eq!(unwrap_tsn(r, 2), (1u64 << 32) + 2);
        assert_eq!(unwrap_tsn(r + 10, (r - 5) as u32), r - 5);
        assert_eq!(unwrap_tsn(100, 100), 100);
        assert_eq!(wire_tsn((1u64 << 32) + 7), 7);
    }
}
