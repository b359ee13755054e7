//! Every link type's decoder and every header parser on arbitrary bytes: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcplab_trace::decode::decode;
use tcplab_trace::wire::{Ipv4Packet, Ipv6Packet, TcpOptions, TcpPacket, TcpRepr, UdpPacket};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    const LT: [u32; 10] = [0, 1, 12, 14, 101, 108, 113, 228, 229, 276];
    let _ = decode(LT[usize::from(sel) % LT.len()], rest);
    let _ = TcpOptions::parse(rest);
    if let Ok(p) = TcpPacket::new_checked(rest) {
        let r = TcpRepr::parse(&p);
        let _ = p.payload();
        // Re-emitting what we parsed must not panic either.
        let mut buf = vec![0u8; r.header_len()];
        r.emit(&mut TcpPacket::new_unchecked(&mut buf[..]));
    }
    if let Ok(p) = Ipv4Packet::new_checked(rest) {
        let _ = p.payload();
        let _ = p.verify_checksum();
    }
    if let Ok(p) = Ipv6Packet::new_checked(rest) {
        let _ = p.upper_layer();
    }
    if let Ok(p) = UdpPacket::new_checked(rest) {
        let _ = p.payload();
    }
});
