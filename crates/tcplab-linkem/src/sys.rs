//! The only module with `unsafe`: thin wrappers over the Linux system calls the emulator needs
//! (AF_PACKET sockets, `ppoll`, `clock_gettime`, `prctl`). Each wrapper checks its arguments and
//! return value and exposes a safe signature; each `unsafe` block states why it is sound.
//!
//! Constants not exported by the `libc` crate for every target are the Linux UAPI ABI values
//! (include/uapi/linux/if_packet.h, include/uapi/asm-generic/socket.h); they are part of the
//! kernel's stable user-space interface.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// if_packet.h: `PACKET_STATISTICS`, `PACKET_QDISC_BYPASS`, `PACKET_IGNORE_OUTGOING`.
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// if_packet.h: `sll_pkttype` of frames this host sends.
const PACKET_OUTGOING: u8 = 4;
/// asm-generic/socket.h: `SO_SNDBUFFORCE`, `SO_RCVBUFFORCE`, `SO_TIMESTAMPNS_OLD` (=
/// `SCM_TIMESTAMPNS` on 64-bit targets, whose `struct timespec` is already 64-bit).
const SO_SNDBUFFORCE: libc::c_int = 32;
const SO_RCVBUFFORCE: libc::c_int = 33;
const SO_TIMESTAMPNS: libc::c_int = 35;
/// ETH_P_ALL: every protocol.
const ETH_P_ALL: u16 = 0x0003;

/// if_packet.h `struct tpacket_stats`.
#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: libc::c_uint,
    tp_drops: libc::c_uint,
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes it.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns (the same clock as Python's `time.monotonic_ns()`, in every network
/// namespace, so the kernel engine can relate emulator samples to its own).
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in ns (the clock of kernel receive timestamps).
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// Let timers fire as close to their deadline as the kernel can (the default slack is 50 µs).
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no user memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Put the calling thread under SCHED_FIFO with `priority`.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) }).map(|_| ())
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the option value points at a live c_int and its exact size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(rc).map(|_| ())
}

/// Interface index of `name` in the current network namespace.
pub fn if_index(name: &str) -> io::Result<u32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in interface name"))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface {name:?} in this network namespace"),
        ))
    } else {
        Ok(idx)
    }
}

/// What one `recv` returned.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecvInfo {
    /// Frame length on the wire (may exceed the buffer when `truncated`).
    pub len: usize,
    pub truncated: bool,
    /// Kernel receive time, CLOCK_REALTIME ns.
    pub ts_realtime_ns: Option<u64>,
    /// A frame this socket's interface sent (should not happen with PACKET_IGNORE_OUTGOING).
    pub outgoing: bool,
}

/// A raw AF_PACKET socket bound to one interface: receives every frame arriving there and sends
/// whole Ethernet frames out of it.
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: u32,
}

impl PacketSocket {
    pub fn open(ifname: &str, buf_bytes: u32) -> io::Result<PacketSocket> {
        let ifindex = if_index(ifname)?;
        // Protocol 0 until bound: the socket receives nothing from other interfaces meanwhile.
        // SAFETY: plain socket(2) call; the returned descriptor is checked and then owned.
        let raw = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = PacketSocket { fd, ifindex };
        let f = s.fd.as_raw_fd();
        // Our own transmissions must not come back as receptions (Linux ≥ 4.20).
        setsockopt_int(f, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
        // Frames go straight to the device, skipping the qdisc layer (the veth has none anyway).
        setsockopt_int(f, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1)?;
        let b = buf_bytes.min(i32::MAX as u32) as libc::c_int;
        if setsockopt_int(f, libc::SOL_SOCKET, SO_RCVBUFFORCE, b).is_err() {
            setsockopt_int(f, libc::SOL_SOCKET, libc::SO_RCVBUF, b)?;
        }
        if setsockopt_int(f, libc::SOL_SOCKET, SO_SNDBUFFORCE, b).is_err() {
            setsockopt_int(f, libc::SOL_SOCKET, libc::SO_SNDBUF, b)?;
        }
        setsockopt_int(f, libc::SOL_SOCKET, SO_TIMESTAMPNS, 1)?;
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as libc::c_ushort;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex as libc::c_int;
        // SAFETY: `sll` is a valid sockaddr_ll and its exact size is passed.
        cvt(unsafe {
            libc::bind(
                f,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        Ok(s)
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Receive one frame into `buf` without blocking; `Ok(None)` when nothing is pending.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<RecvInfo>> {
        // SAFETY: all-zero is a valid sockaddr_ll / msghdr.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // Room for one SCM_TIMESTAMPNS control message, 8-byte aligned.
        let mut cbuf = [0u64; 8];
        // SAFETY: as above.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cbuf);
        // SAFETY: every pointer in `msg` refers to a live local buffer with the length given;
        // MSG_TRUNC makes the kernel return the full frame length without writing past `buf`.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock => Ok(None),
                io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e),
            };
        }
        let len = n as usize;
        let mut info = RecvInfo {
            len,
            truncated: len > buf.len() || msg.msg_flags & libc::MSG_TRUNC != 0,
            ts_realtime_ns: None,
            outgoing: sll.sll_pkttype == PACKET_OUTGOING,
        };
        // SAFETY: CMSG_* walk the control buffer the kernel filled, bounded by msg_controllen.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    info.ts_realtime_ns =
                        Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        Ok(Some(info))
    }

    /// Send one whole Ethernet frame out of the bound interface. `Ok(false)` when the socket's
    /// send buffer is momentarily full.
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        // SAFETY: `frame` is a live slice; the kernel only reads `frame.len()` bytes.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            };
        }
        Ok(true)
    }

    /// Frames received and frames the kernel dropped because the receive buffer was full, since
    /// the previous call (the kernel resets the counters on read).
    pub fn take_stats(&self) -> io::Result<(u64, u64)> {
        let mut st = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: `st` is a writable tpacket_stats and `len` holds its size.
        cvt(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                (&mut st as *mut TpacketStats).cast(),
                &mut len,
            )
        })?;
        Ok((st.tp_packets as u64, st.tp_drops as u64))
    }
}

/// Wait until one of `fds` is readable or `timeout_ns` passes (`None`: forever). Returns the
/// readiness flags per descriptor (`revents`) in `ready`.
pub fn poll(fds: &[RawFd], ready: &mut [bool], timeout_ns: Option<u64>) -> io::Result<()> {
    let mut pfds: [libc::pollfd; 64] = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 64];
    assert!(
        fds.len() <= pfds.len() && ready.len() >= fds.len(),
        "too many descriptors"
    );
    for (p, &fd) in pfds.iter_mut().zip(fds) {
        *p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
    }
    let ts = timeout_ns.map(|t| libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `pfds` holds `fds.len()` initialised entries; `tsp` is null or points at a live
    // timespec; a null signal mask leaves the mask unchanged.
    let rc = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            ready.iter_mut().for_each(|r| *r = false);
            return Ok(());
        }
        return Err(e);
    }
    for (r, p) in ready.iter_mut().zip(&pfds[..fds.len()]) {
        *r = p.revents != 0;
    }
    Ok(())
}

/// Read what is available from `fd` (call only after `poll` reported it readable).
/// `Ok(Some(0))` is end of file; `Ok(None)` means try again later.
pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is a live, writable slice of the given length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted || e.kind() == io::ErrorKind::WouldBlock {
            return Ok(None);
        }
        return Err(e);
    }
    Ok(Some(n as usize))
}
