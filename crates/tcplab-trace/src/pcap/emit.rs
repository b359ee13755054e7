//! Frame builders: link header + IP + TCP/UDP with correct lengths and checksums, written into a
//! caller-owned `Vec<u8>` that is cleared and reused, so a warm buffer means no allocation per
//! packet. Payload bytes the caller does not supply are zero (the simulator carries no data).

use super::linktype;
use crate::wire::checksum;
use crate::wire::ethernet::{EtherType, EthernetAddress, EthernetFrame, EthernetRepr};
use crate::wire::ipv4::{Ipv4Packet, Ipv4Repr};
use crate::wire::ipv6::{Ipv6Packet, Ipv6Repr};
use crate::wire::sll::{Sll2Header, SllHeader, SLL2_HEADER_LEN, SLL_HEADER_LEN};
use crate::wire::tcp::TcpRepr;
use crate::wire::udp::{UdpPacket, UdpRepr};
use crate::wire::{ip_proto, put16, Error};
use std::net::{IpAddr, Ipv4Addr};

/// The link layer to put in front of IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    Ethernet,
    LinuxSll,
    LinuxSll2,
    RawIp,
    /// BSD loopback, address family in little-endian host order.
    Null,
}

impl LinkKind {
    /// The LINKTYPE_* value a capture of these frames must declare.
    pub fn linktype(self) -> u32 {
        match self {
            LinkKind::Ethernet => linktype::ETHERNET,
            LinkKind::LinuxSll => linktype::LINUX_SLL,
            LinkKind::LinuxSll2 => linktype::LINUX_SLL2,
            LinkKind::RawIp => linktype::RAW,
            LinkKind::Null => linktype::NULL,
        }
    }

    fn header_len(self) -> usize {
        match self {
            LinkKind::Ethernet => 14,
            LinkKind::LinuxSll => SLL_HEADER_LEN,
            LinkKind::LinuxSll2 => SLL2_HEADER_LEN,
            LinkKind::RawIp => 0,
            LinkKind::Null => 4,
        }
    }
}

/// An Ethernet + IPv4 + TCP packet, as the simulator describes one it puts on a link.
#[derive(Debug, Clone, Copy)]
pub struct TcpPacketRepr<'a> {
    pub src_mac: EthernetAddress,
    pub dst_mac: EthernetAddress,
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    pub ttl: u8,
    /// IPv4 identification field.
    pub ident: u16,
    /// DSCP and ECN bits of the IPv4 header.
    pub dscp_ecn: u8,
    pub tcp: TcpRepr,
    /// TCP data length (the segment's length in sequence space, without SYN/FIN).
    pub payload_len: usize,
    /// Leading payload bytes; the rest up to `payload_len` is zero. Usually empty.
    pub payload: &'a [u8],
}

/// An Ethernet + IPv4 + UDP datagram.
#[derive(Debug, Clone, Copy)]
pub struct UdpPacketRepr<'a> {
    pub src_mac: EthernetAddress,
    pub dst_mac: EthernetAddress,
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    pub ttl: u8,
    pub ident: u16,
    pub dscp_ecn: u8,
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: usize,
    pub payload: &'a [u8],
}

/// A TCP packet on any supported link layer and IP version (used for tests and hand-built
/// captures; the simulator uses [`emit_tcp_ipv4`]).
#[derive(Debug, Clone, Copy)]
pub struct TcpFrame<'a> {
    pub link: LinkKind,
    pub src_mac: EthernetAddress,
    pub dst_mac: EthernetAddress,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// TTL (IPv4) or hop limit (IPv6).
    pub ttl: u8,
    pub ident: u16,
    pub dscp_ecn: u8,
    pub tcp: TcpRepr,
    pub payload_len: usize,
    pub payload: &'a [u8],
}

/// Builds Ethernet II + IPv4 (DF set, checksum) + TCP (options, checksum over the pseudo-header
/// and the zero-filled payload) into `buf`, replacing its contents. Returns the frame length.
///
/// Panics if the IPv4 total length would exceed 65535 bytes.
pub fn emit_tcp_ipv4(buf: &mut Vec<u8>, p: &TcpPacketRepr<'_>) -> usize {
    let f = TcpFrame {
        link: LinkKind::Ethernet,
        src_mac: p.src_mac,
        dst_mac: p.dst_mac,
        src: IpAddr::V4(p.src_addr),
        dst: IpAddr::V4(p.dst_addr),
        ttl: p.ttl,
        ident: p.ident,
        dscp_ecn: p.dscp_ecn,
        tcp: p.tcp,
        payload_len: p.payload_len,
        payload: p.payload,
    };
    match emit_tcp_frame(buf, &f) {
        Ok(n) => n,
        Err(e) => panic!("emit_tcp_ipv4: {e} (payload_len {})", p.payload_len),
    }
}

/// Builds any [`TcpFrame`] into `buf`. Errors if the addresses mix IPv4 and IPv6 or the packet
/// is too long for the IP length field.
pub fn emit_tcp_frame(buf: &mut Vec<u8>, f: &TcpFrame<'_>) -> Result<usize, Error> {
    let tcp_len = f.tcp.header_len() + f.payload_len;
    let given = f.payload.len().min(f.payload_len);
    let l2 = f.link.header_len();
    let (ip_len, ethertype) = match (f.src, f.dst) {
        (IpAddr::V4(_), IpAddr::V4(_)) => (20, EtherType::IPV4),
        (IpAddr::V6(_), IpAddr::V6(_)) => (40, EtherType::IPV6),
        _ => {
            return Err(Error::Malformed(
                "source and destination of different IP versions",
            ))
        }
    };
    if (ip_len == 20 && 20 + tcp_len > 65535) || (ip_len == 40 && tcp_len > 65535) {
        return Err(Error::Malformed("packet too long for the IP length field"));
    }
    let total = l2 + ip_len + tcp_len;
    buf.clear();
    buf.resize(total, 0);
    emit_link(&mut buf[..l2], f.link, f.src_mac, f.dst_mac, ethertype);
    let (ipb, tcpb) = buf[l2..].split_at_mut(ip_len);
    let th = f.tcp.header_len();
    f.tcp
        .emit(&mut crate::wire::TcpPacket::new_unchecked(&mut tcpb[..]));
    tcpb[th..th + given].copy_from_slice(&f.payload[..given]);
    // Checksum over pseudo-header, header and the supplied payload bytes: the zero fill adds
    // nothing to a ones' complement sum. The payload starts at a multiple of 4, so word
    // alignment is kept.
    let pseudo = match (f.src, f.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            Ipv4Repr {
                src_addr: s,
                dst_addr: d,
                protocol: ip_proto::TCP,
                payload_len: tcp_len,
                ttl: f.ttl,
                ident: f.ident,
                dscp_ecn: f.dscp_ecn,
                dont_frag: true,
            }
            .emit(&mut Ipv4Packet::new_unchecked(&mut ipb[..]));
            checksum::pseudo_header_v4(s, d, ip_proto::TCP, tcp_len as u32)
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            Ipv6Repr {
                src_addr: s,
                dst_addr: d,
                next_header: ip_proto::TCP,
                payload_len: tcp_len,
                hop_limit: f.ttl,
                traffic_class: f.dscp_ecn,
            }
            .emit(&mut Ipv6Packet::new_unchecked(&mut ipb[..]));
            checksum::pseudo_header_v6(s, d, ip_proto::TCP, tcp_len as u32)
        }
        _ => unreachable!("checked above"),
    };
    let acc = checksum::accumulate(pseudo, &tcpb[..th + given]);
    put16(tcpb, 16, !checksum::fold(acc));
    Ok(total)
}

fn emit_link(
    b: &mut [u8],
    link: LinkKind,
    src: EthernetAddress,
    dst: EthernetAddress,
    et: EtherType,
) {
    match link {
        LinkKind::Ethernet => EthernetRepr {
            src_addr: src,
            dst_addr: dst,
            ethertype: et,
        }
        .emit(&mut EthernetFrame::new_unchecked(b)),
        LinkKind::LinuxSll => {
            SllHeader::new_unchecked(b).emit(crate::wire::sll::packet_type::OUTGOING, src.0, et)
        }
        LinkKind::LinuxSll2 => Sll2Header::new_unchecked(b).emit(et, 1, 4, src.0),
        LinkKind::RawIp => {}
        LinkKind::Null => {
            // AF_INET = 2 everywhere; AF_INET6 = 24 on NetBSD/OpenBSD, 28 FreeBSD, 30 macOS.
            let af: u32 = if et == EtherType::IPV4 { 2 } else { 30 };
            b.copy_from_slice(&af.to_le_bytes());
        }
    }
}

/// Builds Ethernet II + IPv4 + UDP (checksum) into `buf`, replacing its contents. Returns the
/// frame length. Panics if the datagram is longer than 65507 bytes of payload.
pub fn emit_udp_ipv4(buf: &mut Vec<u8>, p: &UdpPacketRepr<'_>) -> usize {
    let udp_len = 8 + p.payload_len;
    assert!(
        20 + udp_len <= 65535,
        "emit_udp_ipv4: payload_len {} too long",
        p.payload_len
    );
    let total = 14 + 20 + udp_len;
    let given = p.payload.len().min(p.payload_len);
    buf.clear();
    buf.resize(total, 0);
    EthernetRepr {
        src_addr: p.src_mac,
        dst_addr: p.dst_mac,
        ethertype: EtherType::IPV4,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..14]));
    Ipv4Repr {
        src_addr: p.src_addr,
        dst_addr: p.dst_addr,
        protocol: ip_proto::UDP,
        payload_len: udp_len,
        ttl: p.ttl,
        ident: p.ident,
        dscp_ecn: p.dscp_ecn,
        dont_frag: true,
    }
    .emit(&mut Ipv4Packet::new_unchecked(&mut buf[14..34]));
    let udpb = &mut buf[34..];
    UdpRepr {
        src_port: p.src_port,
        dst_port: p.dst_port,
        payload_len: p.payload_len,
    }
    .emit(&mut UdpPacket::new_unchecked(&mut udpb[..]));
    udpb[8..8 + given].copy_from_slice(&p.payload[..given]);
    let pseudo = checksum::pseudo_header_v4(p.src_addr, p.dst_addr, ip_proto::UDP, udp_len as u32);
    let mut c = !checksum::fold(checksum::accumulate(pseudo, &udpb[..8 + given]));
    if c == 0 {
        c = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    put16(udpb, 6, c);
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tcp::{TcpFlags, TcpOptions};
    use crate::wire::TcpPacket;

    fn repr(payload_len: usize) -> TcpPacketRepr<'static> {
        let mut options = TcpOptions {
            timestamp: Some((7, 9)),
            ..Default::default()
        };
        options.set_sack_blocks(&[(100, 200)]);
        TcpPacketRepr {
            src_mac: EthernetAddress([2, 0, 10, 0, 0, 1]),
            dst_mac: EthernetAddress([2, 0, 10, 0, 0, 2]),
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 0, 2),
            ttl: 64,
            ident: 1,
            dscp_ecn: 0,
            tcp: TcpRepr {
                src_port: 1,
                dst_port: 2,
                seq: 3,
                ack: 4,
                flags: TcpFlags(TcpFlags::ACK),
                window: 5,
                urgent: 0,
                options,
            },
            payload_len,
            payload: &[],
        }
    }

    #[test]
    fn test_emit_tcp_ipv4_checksums_verify() {
        let mut buf = Vec::new();
        let n = emit_tcp_ipv4(&mut buf, &repr(1448));
        assert_eq!(n, 14 + 20 + 20 + 12 + 12 + 1448);
        let ip = Ipv4Packet::new_checked(&buf[14..]).unwrap();
        assert!(ip.verify_checksum());
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(tcp.verify_checksum(ip.src_addr().into(), ip.dst_addr().into()));
        assert_eq!(tcp.payload().len(), 1448);
    }

    #[test]
    fn test_emit_tcp_ipv4_with_supplied_payload_checksum() {
        let mut r = repr(7);
        r.payload = b"abc";
        let mut buf = Vec::new();
        emit_tcp_ipv4(&mut buf, &r);
        let ip = Ipv4Packet::new_checked(&buf[14..]).unwrap();
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert_eq!(tcp.payload(), b"abc\0\0\0\0");
        assert!(tcp.verify_checksum(ip.src_addr().into(), ip.dst_addr().into()));
    }

    #[test]
    fn test_emit_tcp_ipv4_reuses_buffer_without_growing() {
        let mut buf = Vec::with_capacity(2048);
        emit_tcp_ipv4(&mut buf, &repr(1448));
        let cap = buf.capacity();
        let ptr = buf.as_ptr();
        for len in [0, 100, 1448, 10] {
            emit_tcp_ipv4(&mut buf, &repr(len));
            assert_eq!((buf.capacity(), buf.as_ptr()), (cap, ptr));
        }
    }

    #[test]
    fn test_emit_tcp_frame_all_links_and_v6_parse_back() {
        for link in [
            LinkKind::Ethernet,
            LinkKind::LinuxSll,
            LinkKind::LinuxSll2,
            LinkKind::RawIp,
            LinkKind::Null,
        ] {
            for v6 in [false, true] {
                let r = repr(10);
                let (src, dst): (IpAddr, IpAddr) = if v6 {
                    ("fd00::1".parse().unwrap(), "fd00::2".parse().unwrap())
                } else {
                    (r.src_addr.into(), r.dst_addr.into())
                };
                let f = TcpFrame {
                    link,
                    src_mac: r.src_mac,
                    dst_mac: r.dst_mac,
                    src,
                    dst,
                    ttl: 64,
                    ident: 0,
                    dscp_ecn: 0,
                    tcp: r.tcp,
                    payload_len: 10,
                    payload: &[],
                };
                let mut buf = Vec::new();
                emit_tcp_frame(&mut buf, &f).unwrap();
                let d = crate::decode::decode(link.linktype(), &buf).unwrap();
                let seg = match d {
                    crate::decode::Decoded::Tcp(s) => s,
                    other => panic!("{link:?} v6={v6}: {other:?}"),
                };
                assert_eq!((seg.src, seg.dst, seg.payload_len), (src, dst, 10));
                assert_eq!(seg.tcp, r.tcp);
            }
        }
    }

    #[test]
    fn test_emit_tcp_frame_mixed_families_rejected() {
        let r = repr(0);
        let f = TcpFrame {
            link: LinkKind::RawIp,
            src_mac: r.src_mac,
            dst_mac: r.dst_mac,
            src: r.src_addr.into(),
            dst: "fd00::2".parse().unwrap(),
            ttl: 1,
            ident: 0,
            dscp_ecn: 0,
            tcp: r.tcp,
            payload_len: 0,
            payload: &[],
        };
        assert!(emit_tcp_frame(&mut Vec::new(), &f).is_err());
    }

    #[test]
    fn test_emit_udp_ipv4_checksums_verify() {
        let p = UdpPacketRepr {
            src_mac: EthernetAddress::default(),
            dst_mac: EthernetAddress::default(),
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 0, 2),
            ttl: 64,
            ident: 9,
            dscp_ecn: 0,
            src_port: 9,
            dst_port: 10,
            payload_len: 1470,
            payload: b"xy",
        };
        let mut buf = Vec::new();
        assert_eq!(emit_udp_ipv4(&mut buf, &p), 14 + 20 + 8 + 1470);
        let ip = Ipv4Packet::new_checked(&buf[14..]).unwrap();
        assert!(ip.verify_checksum());
        let acc = checksum::pseudo_header_v4(p.src_addr, p.dst_addr, 17, 1478);
        assert_eq!(
            checksum::fold(checksum::accumulate(acc, ip.payload())),
            0xffff
        );
    }
}
