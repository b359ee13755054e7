"""Behaviour scripts on the real kernel (issue 14, ``tcplab script --engine kernel``).

Packet building/parsing and argument checks run everywhere; the rest needs root, /dev/net/tun
and ``ip netns`` and is skipped with the reason otherwise (CI runs it as root). Every shipped
linux-6 script must pass on the kernel: it is the ground truth (about a minute).
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
from pathlib import Path

import pytest

from tcplab.errors import EngineUnavailable, UserError
from tcplab.script import parse_file, parse_script
from tcplab.script.__main__ import main
from tcplab.script.kernel import (
    build_packet,
    check_root,
    header_sysctls,
    parse_packet,
    run_kernel,
)
from tcplab.script.match import inbound_seg

SUITE = Path(__file__).resolve().parents[1] / "python" / "tcplab" / "scenarios" / "scripts"


def _skip_reason() -> str | None:
    if os.environ.get("TCPLAB_SKIP_KERNEL"):
        return "TCPLAB_SKIP_KERNEL is set (run without namespaces on a shared machine)"
    if os.geteuid() != 0:
        return "the kernel script engine needs root (network namespace and TUN device)"
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing"
    if shutil.which("ip") is None:
        return "ip (iproute2) is not installed"
    try:
        subprocess.run(["ip", "netns", "list"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return "`ip netns` is not available"
    return None


REASON = _skip_reason()
needs_root = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def _ours() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("tcplab-script-")}


def _csum_ok(data: bytes) -> bool:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def test_injected_packet_has_valid_checksums_and_parses_back():
    ev = parse_script(
        "0 < P. 1461:2921(1460) ack 4381 win 257 <nop,nop,sack 5841:7301 8761:10221>\n"
    )[0]
    seg = ev.action
    abs_seg = inbound_seg(seg, local_isn=1000, remote_isn=0)
    pkt = build_packet(seg, abs_seg, 40000, 8080, 7)
    assert _csum_ok(pkt[:20])  # IPv4 header checksum (RFC 791)
    pseudo = pkt[12:20] + struct.pack("!BBH", 0, 6, len(pkt) - 20)
    assert _csum_ok(pseudo + pkt[20:])  # TCP checksum over the pseudo-header (RFC 793)
    sport, dport, back = parse_packet(pkt)
    assert (sport, dport) == (40000, 8080)
    seq, ack, flags, wnd, payload, *_rest, sack = back
    assert (seq, ack, wnd, payload) == (1461, 1000 + 4381, 257, 1460)
    assert flags == 0x18
    assert sack == [(1000 + 5841, 1000 + 7301), (1000 + 8761, 1000 + 10221)]
    assert socket.inet_ntoa(pkt[12:16]) == "192.0.2.1"


def test_sysctl_header_lines(tmp_path):
    f = tmp_path / "s.pkt"
    f.write_text("--sysctl=net.ipv4.tcp_timestamps=0\n0 socket(..., SOCK_STREAM, 0) = 3\n")
    assert header_sysctls(str(f)) == {"net.ipv4.tcp_timestamps": "0"}
    f.write_text("// x\n--sysctl=kernel.panic=1\n")
    with pytest.raises(UserError, match=r"s\.pkt:2: near 'kernel\.panic'.*net\.ipv4\.tcp_"):
        header_sysctls(str(f))
    f.write_text("--sysctl=net.ipv4.tcp_sack\n")
    with pytest.raises(UserError, match=r"s\.pkt:1: .*expected '--sysctl=NAME=VALUE'"):
        header_sysctls(str(f))


def test_without_root_the_error_says_so(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EngineUnavailable, match="needs root"):
        check_root()
    assert main(["--engine", "kernel", str(SUITE / "linux-6" / "iw.pkt")]) == 1


@needs_root
def test_failing_line_reports_expected_and_actual_and_cleans_up():
    before = _ours()
    f = SUITE / "linux-6" / "iw.pkt"
    text = f.read_text().replace(
        "+0 %{ assert tcpi_unacked == 10 }%", "+0  > . 14601:16061(1460) ack 1"
    )
    res = run_kernel(parse_script(text, "iw-11.pkt"), "iw-11.pkt", sysctls={})
    bad = res.failure()
    assert bad is not None and "nothing was sent" in bad.detail  # IW10: no eleventh segment
    text = f.read_text().replace("tcpi_unacked == 10", "tcpi_unacked == 9")
    bad = run_kernel(parse_script(text, "iw-9.pkt"), "iw-9.pkt", sysctls={}).failure()
    assert bad is not None and "tcpi_unacked = 10 (expected == 9)" in bad.detail
    assert _ours() == before  # each run's namespace is gone


@needs_root
def test_errors_inside_the_namespace_still_remove_it():
    before = _ours()
    events = parse_script("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n", "bad.pkt")
    with pytest.raises(UserError, match=r"sysctl net\.ipv4\.tcp_no_such_knob"):
        run_kernel(events, "bad.pkt", sysctls={"net.ipv4.tcp_no_such_knob": "1"})
    assert _ours() == before


@needs_root
def test_sysctls_are_set_in_the_namespace_only():
    host = Path("/proc/sys/net/ipv4/tcp_syn_linear_timeouts")
    if not host.exists():
        pytest.skip("this kernel has no tcp_syn_linear_timeouts")
    was = host.read_text()
    f = SUITE / "linux-6" / "syn-backoff.pkt"  # sets tcp_syn_linear_timeouts=0 in its namespace
    res = run_kernel(parse_file(f), str(f))
    assert res.passed, res.failure()
    assert host.read_text() == was


@needs_root
@pytest.mark.parametrize("name", sorted(p.name for p in (SUITE / "linux-6").glob("*.pkt")))
def test_every_linux6_script_passes_on_the_kernel(name):
    f = SUITE / "linux-6" / name
    res = run_kernel(parse_file(f), str(f))
    assert res.passed, f"{name}: {res.failure()}"
