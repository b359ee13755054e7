//! The Internet checksum (RFC 1071): the 16-bit ones' complement of the ones' complement sum of
//! the data taken as big-endian 16-bit words, an odd trailing byte padded with zero.
//!
//! Pseudo-headers: IPv4 per RFC 9293 §3.1 ("Checksum") and RFC 768; IPv6 per RFC 8200 §8.1.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Adds `data` to a running 32-bit accumulator of 16-bit big-endian words (not yet folded).
///
/// `data` must start on an even offset of the checksummed area; an odd trailing byte is taken
/// as the high byte of a word whose low byte is zero (RFC 1071 §4.1).
pub fn accumulate(mut acc: u64, data: &[u8]) -> u64 {
    // Eight bytes at a time into a 64-bit accumulator: carries are kept in the upper bits and
    // folded at the end (RFC 1071 §2 (B), "deferred carries").
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        acc += (w >> 48) + ((w >> 32) & 0xffff) + ((w >> 16) & 0xffff) + (w & 0xffff);
    }
    let rest = chunks.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        acc += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds a running accumulator to 16 bits (end-around carry), not complemented.
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The Internet checksum of `data` (complemented), as stored in an IPv4 header.
pub fn checksum(data: &[u8]) -> u16 {
    !fold(accumulate(0, data))
}

/// Accumulator value of the IPv4 pseudo-header: source, destination, zero, protocol, length.
pub fn pseudo_header_v4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, length: u32) -> u64 {
    let mut acc = accumulate(0, &src.octets());
    acc = accumulate(acc, &dst.octets());
    acc + u64::from(protocol) + u64::from(length)
}

/// Accumulator value of the IPv6 pseudo-header (RFC 8200 §8.1): addresses, upper-layer packet
/// length (32 bits), three zero bytes and the next-header value.
pub fn pseudo_header_v6(src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, length: u32) -> u64 {
    let mut acc = accumulate(0, &src.octets());
    acc = accumulate(acc, &dst.octets());
    acc + u64::from(length >> 16) + u64::from(length & 0xffff) + u64::from(next_header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_checksum_rfc1071_example() {
        // RFC 1071 §3 example: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 (before complement).
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(accumulate(0, &data)), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn test_checksum_odd_length_pads_with_zero() {
        assert_eq!(fold(accumulate(0, &[0x12, 0x34, 0x56])), 0x1234 + 0x5600);
    }

    #[test]
    fn test_checksum_wide_path_matches_narrow_path() {
        let data: Vec<u8> = (0..1001u32).map(|i| (i * 37 + 11) as u8).collect();
        let mut narrow = 0u64;
        for p in data.chunks(2) {
            narrow += u64::from(p[0]) << 8 | u64::from(*p.get(1).unwrap_or(&0));
        }
        assert_eq!(fold(accumulate(0, &data)), fold(narrow));
    }

    #[test]
    fn test_checksum_verifies_to_zero_when_included() {
        let mut hdr = [
            0x45u8, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let c = checksum(&hdr);
        // Well-known example header (Wikipedia "IPv4 header checksum"): 0xb861.
        assert_eq!(c, 0xb861);
        hdr[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&hdr), 0);
    }
}
