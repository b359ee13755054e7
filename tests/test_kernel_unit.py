"""Kernel engine parts that need neither root nor namespaces: topology planning, knob mapping,
refusals, TCP_INFO parsing, result assembly, the emulator self-check, and the fidelity report."""

from __future__ import annotations

import copy
import math
import os
import socket
import struct
from pathlib import Path

import numpy as np
import pytest

from tcplab.errors import EngineError, EngineUnavailable
from tcplab.kernel import compare, engine, linux, result, tcpinfo, topology

MS = 1_000_000
S = 1_000_000_000


def chan(rate=20_000_000, delay=20 * MS, limit=67, loss=None):
    return {
        "rate_bps": rate,
        "delay_ns": delay,
        "queue": {"kind": "droptail", "limit_pkts": limit, "limit_bytes": None},
        "loss": loss or {"model": "none"},
    }


def dumbbell(flows=1, tcp=None, cca="cubic", duration=4 * S, interval=S):
    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links = [
        {
            "name": "bn",
            "a": "r1",
            "b": "r2",
            "mtu": 1500,
            "monitor": True,
            "ab": chan(),
            "ba": chan(),
        },
    ]
    fl = []
    for i in range(flows):
        s, r = f"s{i}", f"d{i}"
        nodes += [{"name": s, "kind": "host"}, {"name": r, "kind": "host"}]
        access = chan(rate=200_000_000, delay=100_000, limit=1000)
        links.append({"name": f"{s}.acc", "a": s, "b": "r1", "ab": access, "ba": access})
        links.append({"name": f"{r}.acc", "a": r, "b": "r2", "ab": access, "ba": access})
        fl.append(
            {
                "name": f"f{i}",
                "group": "f",
                "kind": "tcp",
                "src": s,
                "dst": r,
                "start_ns": 0,
                "stop_ns": duration,
                "bytes": None,
                "cca": {"name": cca, "params": {}},
                "tcp": dict(tcp or {}),
            }
        )
    return {
        "seed": 1,
        "duration_ns": duration,
        "interval_ns": interval,
        "record_changes": False,
        "nodes": nodes,
        "links": links,
        "flows": fl,
    }


# ---------------------------------------------------------------------------------------------
# Topology


def test_plan_addresses_and_routes_follow_shortest_path():
    p = topology.plan(dumbbell(flows=2))
    addrs = [a for lk in p.links for a in (lk.a_addr, lk.b_addr)]
    assert len(set(addrs)) == len(addrs)
    assert p.links[0].subnet == "10.1.0.0/24" and p.links[0].a_addr == "10.1.0.1"
    # s0 -> d0: access link ab, bottleneck ab, receiver access link ba.
    assert p.path("s0", "d0") == [(1, "ab"), (0, "ab"), (2, "ba")]
    assert p.path("d0", "s0") == [(2, "ab"), (0, "ba"), (1, "ba")]
    # s0 reaches d0's address through r1 (its access peer); nothing for the adjacent peer.
    routes = {r.dst: r for r in p.routes["s0"]}
    assert routes[f"{p.addr_of('d0')}/32"].via == p.links[1].b_addr
    assert f"{p.links[1].b_addr}/32" not in routes
    # Interface names fit Linux's 15-byte limit and are unique per namespace.
    assert all(len(lk.em_a) <= 15 for lk in p.links)
    assert len({lk.a_mac for lk in p.links} | {lk.b_mac for lk in p.links}) == 2 * len(p.links)


def test_plan_ties_go_to_first_declared_link_like_the_simulator():
    # A triangle x-y, x-z, z-y: x reaches y directly; y reaches z directly; the two-hop tie
    # never arises, but a square a-b-d, a-c-d must route a->d via b (declared first).
    cfg = {
        "nodes": [{"name": n, "kind": "router"} for n in "abcd"],
        "links": [
            {"name": "ab", "a": "a", "b": "b", "ab": chan(), "ba": chan()},
            {"name": "ac", "a": "a", "b": "c", "ab": chan(), "ba": chan()},
            {"name": "bd", "a": "b", "b": "d", "ab": chan(), "ba": chan()},
            {"name": "cd", "a": "c", "b": "d", "ab": chan(), "ba": chan()},
        ],
        "flows": [],
    }
    p = topology.plan(cfg)
    assert p.path("a", "d") == [(0, "ab"), (2, "ab")]
    with pytest.raises(ValueError, match="unknown node"):
        topology.plan(
            {
                **cfg,
                "links": [
                    *cfg["links"],
                    {"name": "x", "a": "a", "b": "q", "ab": chan(), "ba": chan()},
                ],
            }
        )


# ---------------------------------------------------------------------------------------------
# Knobs, CCAs, personalities


def test_knob_mapping_sets_what_linux_can_set():
    f = dumbbell(
        tcp={
            "min_rto": 300 * MS,
            "initial_window": "rfc3390",
            "delayed_ack": False,
            "sack": False,
            "dupthresh": 5,
            "cwnd_unit": "packets",
        }
    )["flows"][0]
    k = linux.kernel_plan_for_flow(f, 1500)
    assert k.sender_sysctls["net.ipv4.tcp_rto_min_us"] == "300000"
    assert k.sender_sysctls["net.ipv4.tcp_sack"] == "0"
    assert k.receiver_sysctls["net.ipv4.tcp_sack"] == "0"
    assert k.sender_sysctls["net.ipv4.tcp_reordering"] == "5"
    # RFC 3390 at SMSS 1448 (MTU 1500, timestamps): 4380 B = 3 segments.
    assert k.sender_route["initcwnd"] == "3"
    assert k.receiver_route["quickack"] == "1"


@pytest.mark.parametrize(
    ("knobs", "match"),
    [
        ({"initial_ssthresh": 100_000}, "initial_ssthresh"),
        ({"cwnd_unit": "bytes"}, "cwnd_unit.*Linux has no setting"),
        ({"sndbuf": 1 << 20, "rcvbuf": 2 << 20}, "differ"),
        ({"no_such_knob": 1}, "does not know"),
        ({"recovery": "newreno"}, "SACK"),
    ],
)
def test_knobs_the_kernel_cannot_honour_are_refused(knobs, match):
    f = dumbbell(tcp=knobs)["flows"][0]
    with pytest.raises(linux.KnobRefusal, match=match):
        linux.kernel_plan_for_flow(f, 1500)


def test_window_uses_iperf_w_or_namespace_autotuning(monkeypatch):
    monkeypatch.setattr(
        linux,
        "_sysctl",
        lambda path, default=None: {
            "net.core.wmem_max": "4194304",
            "net.core.rmem_max": "4194304",
        }.get(path, default),
    )
    small = linux.kernel_plan_for_flow(
        dumbbell(tcp={"sndbuf": 65536, "rcvbuf": 65536})["flows"][0], 1500
    )
    assert small.iperf_args == ["-w", "65536"]
    big = linux.kernel_plan_for_flow(
        dumbbell(tcp={"sndbuf": 16 << 20, "rcvbuf": 16 << 20})["flows"][0], 1500
    )
    assert "-w" not in big.iperf_args
    assert big.receiver_sysctls["net.ipv4.tcp_rmem"].split()[2] == str(32 << 20)


def test_cca_checks():
    f = dumbbell(cca="vegas")["flows"][0]
    with pytest.raises(linux.KnobRefusal, match=r"'vegas' is not available.*reno, cubic, bbr"):
        linux.check_cca(f, ["reno", "cubic", "bbr"])
    f = dumbbell()["flows"][0]
    f["cca"]["params"] = {"beta": 0.7, "hystart": "linux", "ssthresh_from": "cwnd"}
    params = {"beta": "717", "hystart": "1"}
    assert linux.check_cca(f, ["cubic"], lambda c, p: params.get(p)) == "cubic"
    f["cca"]["params"] = {"beta": 0.5}
    with pytest.raises(linux.KnobRefusal, match="beta"):
        linux.check_cca(f, ["cubic"], lambda c, p: params.get(p))
    f["cca"]["params"] = {"ssthresh_from": "flight_size"}
    with pytest.raises(linux.KnobRefusal, match="ssthresh_from"):
        linux.check_cca(f, ["cubic"], lambda c, p: None)


def test_personality_other_than_linux_is_refused():
    f = dumbbell()["flows"][0]
    linux.check_personality(f, {"personality": "linux-6"})
    with pytest.raises(linux.KnobRefusal, match=r"windows-xp.*cannot run on the kernel engine"):
        linux.check_personality(f, {"personalities": {"f0": "windows-xp"}})


def _fake_env(monkeypatch, ccas=("reno", "cubic", "bbr")):
    monkeypatch.setattr(engine, "_need_root", lambda: None)
    monkeypatch.setattr(engine, "_need_tools", lambda: None)
    monkeypatch.setattr(engine.linkem, "available", lambda: "extension")
    monkeypatch.setattr(engine.linux, "available_ccas", lambda: list(ccas))


def test_preflight_refusals_name_the_problem(monkeypatch):
    _fake_env(monkeypatch)
    with pytest.raises(EngineError, match="not available in the running kernel"):
        engine.preflight(dumbbell(cca="vegas"))
    cfg = dumbbell()
    cfg["meta"] = {"personality": "freebsd-5.3"}
    with pytest.raises(EngineError, match=r"freebsd-5\.3"):
        engine.preflight(cfg)
    cfg = dumbbell()
    cfg["links"][0]["ab"]["queue"]["kind"] = "red"
    with pytest.raises(EngineError, match="droptail"):
        engine.preflight(cfg)
    # Two flows from one host that need different per-namespace settings.
    cfg = dumbbell(flows=2)
    cfg["flows"][1]["src"] = "s0"
    cfg["flows"][0]["tcp"] = {"min_rto": 200 * MS}
    cfg["flows"][1]["tcp"] = {"min_rto": 1 * S}
    with pytest.raises(EngineError, match="tcp_rto_min_us"):
        engine.preflight(cfg)
    pre = engine.preflight(dumbbell(flows=2))
    assert [f.port for f in pre.flows] == [engine.SERVER_PORT0, engine.SERVER_PORT0 + 1]


def test_not_root_is_refused_before_anything(monkeypatch):
    monkeypatch.setattr(engine.os, "geteuid", lambda: 1000)
    called = []
    monkeypatch.setattr(engine, "RunNamespaces", lambda *a: called.append(a))
    with pytest.raises(EngineUnavailable, match=r"needs root.*Nothing was created"):
        engine.run(dumbbell())
    assert called == []


# ---------------------------------------------------------------------------------------------
# TCP_INFO over sock_diag


def _diag_msg(
    src: str, sport: int, dst: str, dport: int, info: dict[str, int], family: int = socket.AF_INET
) -> bytes:
    raw = bytearray(248)
    for name, v in info.items():
        off, fmt = tcpinfo.TCP_INFO_FIELDS[name]
        struct.pack_into("=" + fmt, raw, off, v)
    if family == socket.AF_INET:
        s = socket.inet_aton(src) + bytes(12)
        d = socket.inet_aton(dst) + bytes(12)
    else:
        s = bytes(10) + b"\xff\xff" + socket.inet_aton(src)
        d = bytes(10) + b"\xff\xff" + socket.inet_aton(dst)
    body = struct.pack("=BBBB", family, 1, 0, 0) + struct.pack("!HH", sport, dport) + s + d
    body += bytes(12) + bytes(20)  # if, cookie; expires, rqueue, wqueue, uid, inode
    attr = struct.pack("=HH", 4 + len(raw), tcpinfo.INET_DIAG_INFO) + bytes(raw)
    cong = b"cubic\0\0\0"
    attr += struct.pack("=HH", 4 + 6, tcpinfo.INET_DIAG_CONG) + cong
    payload = body + attr
    return struct.pack("=IHHII", 16 + len(payload), tcpinfo.SOCK_DIAG_BY_FAMILY, 2, 1, 0) + payload


def test_parse_dump_reads_tcp_info_fields():
    msg = _diag_msg(
        "10.1.1.1",
        40000,
        "10.1.2.1",
        5201,
        {
            "snd_cwnd": 123,
            "snd_mss": 1448,
            "rtt_us": 40_500,
            "bytes_acked": 1 << 40,
            "total_rto": 3,
        },
    )
    msg += _diag_msg(
        "10.1.2.1", 5201, "10.1.1.1", 40000, {"bytes_received": 777}, family=socket.AF_INET6
    )
    msg += struct.pack("=IHHII", 20, tcpinfo.NLMSG_DONE, 2, 1, 0) + bytes(4)
    socks, done = tcpinfo.parse_dump(msg)
    assert done and len(socks) == 2
    a, b = socks
    assert (a.src, a.sport, a.dst, a.dport, a.cong) == (
        "10.1.1.1",
        40000,
        "10.1.2.1",
        5201,
        "cubic",
    )
    assert a.info["snd_cwnd"] == 123 and a.info["rtt_us"] == 40_500
    assert a.info["bytes_acked"] == 1 << 40 and a.info["total_rto"] == 3
    assert (b.src, b.dst, b.info["bytes_received"]) == ("10.1.2.1", "10.1.1.1", 777)
    # A shorter (older) tcp_info leaves the later fields absent.
    assert tcpinfo.parse_tcp_info(bytes(104))["pacing_rate"] is None
    err = struct.pack("=IHHII", 20, tcpinfo.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -1)
    with pytest.raises(OSError):
        tcpinfo.parse_dump(err)


# ---------------------------------------------------------------------------------------------
# Result assembly and self-check


def _samples(rows):
    cols = ("tick", "t_ns", "ns", "src", "sport", "dst", "dport", *tcpinfo.FIELD_NAMES)
    arr = np.full((len(rows), len(cols)), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        for k, v in r.items():
            arr[i, cols.index(k)] = v
    out = {c: arr[:, j] for j, c in enumerate(cols)}
    for c in ("tick", "t_ns", "ns", *("TCPFastRetrans",)):
        out[f"netstat_{c}"] = np.zeros(0, dtype=np.int64)
    return out


def _ip(a):
    return int.from_bytes(socket.inet_aton(a), "big")


def _lane(
    name,
    d,
    delivered=1000,
    mean=30_000,
    p99=80_000,
    rate=20_000_000,
    achieved=None,
    span=0,
    drops=0,
    delay=20 * MS,
):
    return {
        "name": name,
        "dir": d,
        "from": "x",
        "to": "y",
        "rate_bps": rate,
        "delay_ns": delay,
        "packets": delivered,
        "bytes": delivered * 1500,
        "drops": 0,
        "lost": 0,
        "busy_ns": 0,
        "max_queue_pkts": 0,
        "delivered": delivered,
        "check": {
            "lateness": {"mean_ns": mean, "p99_ns": p99},
            "achieved_rate_bps": achieved,
            "rate_span_ns": span,
            "socket_drops": drops,
            "oversize": 0,
            "send_errors": 0,
            "send_retries": 0,
        },
    }


def test_assemble_builds_series_from_tcp_info():
    cfg = dumbbell(duration=3 * S)
    p = topology.plan(cfg)
    src, dst = p.addr_of("s0"), p.addr_of("d0")
    rows = []
    for k in range(4):  # ticks at 0, 1, 2, 3 s (period = interval)
        rows.append(
            {
                "tick": k,
                "t_ns": k * S,
                "ns": 0,
                "src": _ip(src),
                "sport": 40000,
                "dst": _ip(dst),
                "dport": 5201,
                "snd_cwnd": 10 + k,
                "snd_mss": 1448,
                "snd_ssthresh": 0x7FFFFFFF if k < 2 else 20,
                "rtt_us": 40_000,
                "rttvar_us": 1000,
                "rto_us": 240_000,
                "bytes_acked": 1 + k * 1_000_000,
                "bytes_sent": k * 1_000_000,
                "bytes_retrans": 0,
                "unacked": 5,
                "sacked": 1,
                "lost": 1,
                "retrans": 0,
                "snd_wnd": 65535,
                "total_retrans": k,
                "total_rto": 0,
                "pacing_rate": 1000,
                "min_rtt_us": 40_500,
            }
        )
        rows.append(
            {
                "tick": k,
                "t_ns": k * S,
                "ns": 1,
                "src": _ip(dst),
                "sport": 5201,
                "dst": _ip(src),
                "dport": 40000,
                "bytes_received": k * 2_500_000,
                "data_segs_in": k * 100,
            }
        )
    flows = [
        result.FlowInfo(
            index=0,
            name="f0",
            kind="tcp",
            src_ns_index=0,
            dst_ns_index=1,
            src_addr=src,
            dst_addr=dst,
            port=5201,
            cport=40000,
            cca="cubic",
        )
    ]
    em = {
        "links": [_lane("bn", "ab"), _lane("bn", "ba")],
        "watch_series": {
            "flow": ["f0"] * 3,
            "time_ns": [S, 2 * S, 3 * S],
            "dupacks": [0, 3, 5],
            "sack_blocks": [0, 4, 9],
        },
        # SYN 80 ms after t0; the first full segment one handshake round trip (the path's
        # 40.4 ms propagation) plus iperf3's 60 ms test start later.
        "flows": [
            {
                "flow": "f0",
                "syn_mono_ns": 1000 + 80 * MS,
                "first_bulk_mono_ns": 1000 + 80 * MS + 60 * MS + 40_400_000,
            }
        ],
    }
    raw = result.assemble(
        cfg, p, flows, samples=_samples(rows), period_ns=S, em_report=em, iperf={0: {}}, t0=1000
    )
    s = raw["series"]
    assert s["time_ns"] == [S, 2 * S, 3 * S]
    assert s["goodput_bps"] == pytest.approx([20e6, 20e6, 20e6])
    assert s["cwnd_bytes"] == [11 * 1448, 12 * 1448, 13 * 1448]
    assert math.isinf(s["ssthresh_bytes"][0]) and s["ssthresh_bytes"][2] == 20 * 1448
    assert s["in_flight_bytes"][0] == 3 * 1448  # unacked − sacked − lost + retrans
    assert s["snd_una"][0] == 1_000_001 and s["snd_nxt"][0] == 1_000_001
    assert s["dupacks"] == [0, 3, 5]
    f = raw["flows"][0]
    assert f["bytes_delivered"] == 7_500_000 and f["retransmits"] == 3 and f["sack_blocks"] == 9
    assert raw["kernel"]["flows"][0]["start_offset_ns"] == 140 * MS
    assert raw["valid"], raw["invalid_reasons"]


def test_self_check_flags_late_slow_or_dropping_emulator():
    cfg = dumbbell()
    p = topology.plan(cfg)
    _, reasons = result.validity(
        {"links": [_lane("bn", "ab", achieved=19_990_000, span=S)]}, cfg, p, {}
    )
    assert reasons == []
    _, reasons = result.validity({"links": [_lane("bn", "ab", mean=900_000)]}, cfg, p, {})
    assert "late on average" in reasons[0]
    _, reasons = result.validity(
        {"links": [_lane("bn", "ab", achieved=18_000_000, span=S)]}, cfg, p, {}
    )
    assert "18.000 Mbit/s" in reasons[0]
    _, reasons = result.validity({"links": [_lane("bn", "ab", drops=3)]}, cfg, p, {})
    assert "socket drops" in reasons[0]
    # A min RTT below the path's propagation delay means the emulator delivered too little delay.
    lo, hi = result.base_rtt_ns(cfg, p, "s0", "d0")
    assert lo == 2 * (20 * MS + 2 * 100_000)
    _, reasons = result.validity(
        {"links": [_lane("bn", "ab")]}, cfg, p, {"f0": (lo - 1 * MS, (lo, hi))}
    )
    assert "minimum RTT" in reasons[0]


def test_late_packets_name_the_hosts_steal_time_when_there_was_some():
    cfg = dumbbell()
    p = topology.plan(cfg)
    late = {"links": [_lane("bn", "ab", mean=900_000)]}
    _, reasons = result.validity(late, cfg, p, {}, steal_ns=37_000_000)
    assert len(reasons) == 2 and "hypervisor took 37 ms" in reasons[1]
    # No steal, or steal without late packets: nothing is said of the hypervisor.
    assert len(result.validity(late, cfg, p, {}, steal_ns=0)[1]) == 1
    ok = {"links": [_lane("bn", "ab")]}
    assert result.validity(ok, cfg, p, {}, steal_ns=37_000_000)[1] == []


def test_cpu_steal_is_read_from_proc_stat(monkeypatch, tmp_path):
    import builtins

    stat = tmp_path / "stat"
    stat.write_text("cpu  858078 2682362 163537 707632 3252 0 6792 12740 0 0\ncpu0 1 2 3\n")
    real_open = builtins.open
    monkeypatch.setattr(
        builtins, "open", lambda f, *a, **k: real_open(stat if f == "/proc/stat" else f, *a, **k)
    )
    assert engine.cpu_steal_ns() == 12740 * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    stat.write_text("cpu  1 2 3\n")  # an old kernel without the field
    assert engine.cpu_steal_ns() is None


# ---------------------------------------------------------------------------------------------
# Fidelity report


def _raw(name, times, delivered, cwnd_t, cwnd, retx=0, rto=0):
    return {
        "flows": [
            {"name": name, "bytes_delivered": delivered[-1], "retransmits": retx, "timeouts": rto}
        ],
        "series": {
            "flow": [0] * len(times),
            "time_ns": times,
            "delivered_bytes": delivered,
            "cwnd_bytes": [float(c) for c in np.interp(times, cwnd_t, cwnd)],
        },
        "changes": {"flow": [0] * len(cwnd_t), "time_ns": cwnd_t, "cwnd_bytes": cwnd},
    }


def test_simulator_opens_each_flow_as_the_kernels_iperf3_did():
    cfg = dumbbell(flows=2)
    lo = 40_400_000  # the empty path's RTT: 2 x (0.1 + 20 + 0.1) ms of propagation
    t0 = 5_000_000_123_456
    kern = {
        "kernel": {
            "t0_mono_ns": t0,
            "flows": [
                # f0: cookie one RTT after its SYN, bulk one RTT and 2 ms after the cookie.
                {
                    "name": "f0",
                    "syn_ns": 80 * MS,
                    "first_data_ns": 80 * MS + lo,
                    "first_bulk_ns": 80 * MS + 2 * lo + 2 * MS,
                    "start_offset_ns": 7,
                },
                # f1: same SYN, but its SYN-ACK waited 5 ms; bulk 1 ms after the cookie's RTT.
                {
                    "name": "f1",
                    "syn_ns": 80 * MS,
                    "first_data_ns": 85 * MS + lo,
                    "first_bulk_ns": 85 * MS + 2 * lo + 1 * MS,
                    "start_offset_ns": 7,
                },
            ],
        }
    }
    got = compare.iperf3_start(cfg, kern)
    assert got is not None
    run, aligned, stagger = got
    # The simulated SYN leaves so that the cookie leaves when the kernel's did.
    assert stagger == {"f0": 0, "f1": 5 * MS}
    assert [f["start_ns"] for f in run["flows"]] == [0, 5 * MS]
    assert [(f["prelude_bytes"], f["prelude_gap_ns"]) for f in run["flows"]] == [
        (37, 2 * MS),
        (37, 1 * MS),
    ]
    # Series aligned on the earliest opening; the hosts' timestamp clocks at the kernel's
    # phase (CLOCK_MONOTONIC milliseconds at simulated time 0).
    assert [f["start_offset_ns"] for f in aligned["kernel"]["flows"]] == [80 * MS] * 2
    for f in run["flows"]:
        assert f["tcp"]["clock_phase"] == f["receiver_tcp"]["clock_phase"] == 123_456
    assert "prelude_bytes" not in cfg["flows"][0]  # input untouched
    # A record without the cookie's time: the handshake counts as one round trip.
    old = copy.deepcopy(kern)
    for f in old["kernel"]["flows"]:
        del f["first_data_ns"]
    run, _, stagger = compare.iperf3_start(cfg, old)
    assert stagger == {"f0": 0, "f1": 0}
    assert [f["prelude_gap_ns"] for f in run["flows"]] == [2 * MS, 6 * MS]
    # A flow whose bulk was not seen: no iperf3 start (alignment on the bulk applies).
    old["kernel"]["flows"][1]["first_bulk_ns"] = None
    assert compare.iperf3_start(cfg, old) is None


def test_fidelity_aligns_kernel_start_and_judges():
    cfg = dumbbell(duration=10 * S)
    times = [k * S for k in range(1, 11)]
    rate = 2_000_000  # bytes/s
    sim = _raw("f0", times, [rate * t // S for t in times], [0, 5 * S], [100_000, 200_000])
    off = 300 * MS
    # The kernel is the same flow started 300 ms late.
    kt = list(range(0, 10 * S, 10 * MS))
    kdel = [max(0, rate * (t - off) // S) for t in kt]
    kern = {
        "valid": True,
        "flows": [{"name": "f0", "bytes_delivered": kdel[-1], "retransmits": 0, "timeouts": 0}],
        "series": {
            "flow": [0] * 10,
            "time_ns": times,
            "delivered_bytes": [int(np.interp(t, kt, kdel)) for t in times],
        },
        "kernel": {
            "flows": [{"name": "f0", "start_offset_ns": off}],
            "fine": {
                "f0": {
                    "receiver_t_ns": kt,
                    "delivered_bytes": kdel,
                    "sender_t_ns": [t + off for t in (0, 5 * S)],
                    "cwnd_bytes": [100_000, 200_000],
                }
            },
        },
    }
    rep = compare.fidelity(cfg, sim, kern)
    f = rep["flows"][0]
    assert f["mean_goodput_bps"]["rel_diff"] == pytest.approx(0, abs=0.01)
    assert f["cwnd"]["mae_rel"] == pytest.approx(0, abs=1e-9)
    assert rep["pass"]
    # Half the goodput on the simulator fails the mean-goodput check.
    sim2 = _raw("f0", times, [rate * t // S // 2 for t in times], [0], [100_000])
    rep2 = compare.fidelity(cfg, sim2, kern)
    assert not rep2["pass"] and rep2["flows"][0]["checks"]["mean_goodput"]["pass"] is False
    # An invalid kernel run never passes; a missing simulator result is reported.
    assert not compare.fidelity(cfg, sim, {**kern, "valid": False})["pass"]
    rep3 = compare.fidelity(cfg, None, kern, "simulator: unknown congestion control 'bbr'")
    assert "bbr" in rep3["flows"][0]["error"] and not rep3["pass"]


def test_linux_sim_config_fills_only_unset_known_knobs():
    cfg = dumbbell(tcp={"min_rto": 1 * S})
    out = compare.linux_sim_config(cfg, known_knobs={"min_rto", "initial_window", "cwnd_unit"})
    assert out["flows"][0]["tcp"] == {
        "min_rto": 1 * S,
        "initial_window": 10,
        "cwnd_unit": "packets",
    }
    assert cfg["flows"][0]["tcp"] == {"min_rto": 1 * S}  # input untouched


def test_linux_behaviour_is_the_linux6_personality_with_this_machines_buffers(monkeypatch):
    from tcplab import stacks

    monkeypatch.setattr(
        linux,
        "_sysctl",
        lambda path, default=None: {
            "net.ipv4.tcp_rmem": "4096 131072 33554432",
            "net.ipv4.tcp_wmem": "4096 16384 4194304",
        }.get(path, default),
    )
    knobs = linux.linux6_tcp_knobs()
    persona = stacks.get("linux-6").knob_values()
    for k, v in persona.items():
        if k not in ("rcvbuf", "rcvbuf_autotune_max"):
            assert knobs[k] == v, k
    # Linux >= 4.19: the SYN window is about 64 KB (rounded down to whole segments), not a count
    assert persona["rwnd_initial_segments"] == knobs["rwnd_initial_segments"] == 0
    assert persona["rwnd_initial_bytes"] == knobs["rwnd_initial_bytes"] == 65535
    # the initial window at the personality's measured window/buffer ratio (81 760 of 131 072),
    # the ceiling at half of tcp_rmem[2]
    assert (knobs["rcvbuf"], knobs["rcvbuf_autotune_max"], knobs["sndbuf"]) == (
        81760,
        16 << 20,
        4194304,
    )
    # The simulator side of compare: an autotuned receiver unless the scenario fixes a window.
    auto = compare.linux_sim_config(dumbbell(), known_knobs=set(knobs))["flows"][0]["tcp"]
    assert auto["rcvbuf"] == 81760 and auto["rcvbuf_autotune_max"] == 16 << 20
    fixed = compare.linux_sim_config(
        dumbbell(tcp={"sndbuf": 1 << 20, "rcvbuf": 1 << 20}), known_knobs=set(knobs)
    )["flows"][0]["tcp"]
    assert fixed["rcvbuf"] == 1 << 20 and "rcvbuf_autotune_max" not in fixed
    # A receiver with knobs of its own (window = ... sets its buffers) is a Linux host as well:
    # before, it kept only those and ran with the simulator's generic defaults otherwise.
    d = dumbbell(tcp={"sndbuf": 20000})
    d["flows"][0]["receiver_tcp"] = {"rcvbuf": 20000}
    both = compare.linux_sim_config(d, known_knobs=set(knobs))["flows"][0]
    rcv = both["receiver_tcp"]
    assert rcv["rcvbuf"] == 20000 and "rcvbuf_autotune_max" not in rcv
    assert rcv["delack_timeout"] == persona["delack_timeout"]
    assert rcv["quickack_segments"] == persona["quickack_segments"]
    assert both["tcp"]["rcvbuf_autotune_max"] == 16 << 20
    # A scenario file that gives the receiver nothing of its own still writes `receiver_tcp`
    # out (empty, a copy of `tcp`: scenario/model.py), and the simulator takes it as it stands:
    # the validator's simulated receivers were its generic ones (64 MB, 200 ms delayed ACKs, no
    # quick ACKs, no SACK compression) until that side got Linux's knobs too.
    from tcplab import scenario as scenario_mod

    vfile = Path(linux.__file__).parent / "validation" / "c-cubic-2flows-100mbit-20ms.toml"
    written = scenario_mod.load(vfile, catalog=linux.kernel_catalog()).config(0)
    assert all(f["receiver_tcp"] == {} for f in written["flows"])
    for f in compare.linux_sim_config(written, known_knobs=set(knobs))["flows"]:
        assert f["receiver_tcp"] == f["tcp"]
        for k in ("comp_sack_nr", "quickack_segments", "delack_timeout", "quickack_on_growth"):
            assert f["receiver_tcp"][k] == persona[k], k
    # The kernel's congestion control is Linux 6.x's: the simulated side takes the linux-6
    # personality's parameters for it (CUBIC's jiffy clock), and a scenario's own win.
    cubic = compare.linux_sim_config(written, known_knobs=set(knobs))["flows"][0]["cca"]
    assert cubic == {"name": "cubic", "params": stacks.get("linux-6").params_for("cubic")}
    assert cubic["params"]["jiffy_clock"] is True
    own = copy.deepcopy(written)
    own["flows"][0]["cca"]["params"] = {"jiffy_clock": False}
    got = compare.linux_sim_config(own, known_knobs=set(knobs))["flows"][0]["cca"]["params"]
    assert got["jiffy_clock"] is False and got["hystart"] == "linux"
    assert written["flows"][0]["cca"]["params"] == {}  # input untouched
    # The kernel side: every knob of the linux-6 personality is honoured or equal to Linux's,
    # and the autotuned buffers become the receiver namespace's tcp_rmem.
    plan = linux.kernel_plan_for_flow(dumbbell(tcp=dict(persona))["flows"][0], 1500)
    assert plan.receiver_sysctls["net.ipv4.tcp_rmem"] == "4096 131072 6291456"
    assert "-w" not in plan.iperf_args and plan.sender_route["initcwnd"] == "10"
    with pytest.raises(linux.KnobRefusal, match="rwnd_initial_segments"):
        linux.kernel_plan_for_flow(dumbbell(tcp={"rwnd_initial_segments": 4})["flows"][0], 1500)
    with pytest.raises(linux.KnobRefusal, match="autotuning only grows"):
        linux.kernel_plan_for_flow(
            dumbbell(tcp={"rcvbuf": 1 << 20, "rcvbuf_autotune_max": 1 << 16})["flows"][0], 1500
        )


def test_exchangeable_flows_are_judged_as_a_group():
    cfg = dumbbell(flows=2, duration=10 * S)
    for f in cfg["flows"]:
        f["src"], f["dst"], f["group"] = "s0", "d0", "g"

    def flow(name, good):
        return {
            "flow": name,
            "mean_goodput_bps": {"sim": good[0], "kernel": good[1]},
            "retransmits": {"sim": 10, "kernel": 12},
            "timeouts": {"sim": 0, "kernel": 0},
            "pass": False,
        }

    # Shares swapped between the engines: per flow ±40 %, but the same split.
    flows = [flow("f0", (60e6, 41e6)), flow("f1", (40e6, 59e6))]
    (g,) = compare._group_checks(cfg, flows)
    assert g["pass"] and all(f["exchangeable"] for f in flows)
    assert g["goodput_bps"]["sim"] == [60e6, 40e6]
    # A fair kernel against an unfair simulator fails on the shares and on Jain's index.
    (g,) = compare._group_checks(cfg, [flow("f0", (80e6, 50e6)), flow("f1", (20e6, 50e6))])
    assert not g["pass"]
    assert g["checks"]["fairness"]["pass"] is False
    assert g["checks"]["sorted_shares"]["pass"] is False
    # Flows of different hosts are not exchangeable.
    cfg["flows"][1]["src"] = "s1"
    assert compare._group_checks(cfg, [flow("f0", (1, 1)), flow("f1", (1, 1))]) == []


def test_small_share_says_which_flows_take_the_losses():
    def f(sim, kern, rs, rk):
        return {"mean_goodput_bps": {"sim": sim, "kernel": kern},
                "retransmits": {"sim": rs, "kernel": rk}}  # fmt: skip

    # A phase effect: the slower flow (a quarter of the goodput) takes 9 of 10 losses.
    flows = [f(75.0, 60.0, 1.0, 6.0), f(25.0, 40.0, 9.0, 4.0)]
    assert compare._small_share(flows, "sim") == pytest.approx(
        {"goodput": 0.25, "retransmits": 0.9}
    )
    assert compare._small_share(flows, "kernel") == pytest.approx(
        {"goodput": 0.4, "retransmits": 0.4}
    )
    # Nothing retransmitted: no share to give; equal flows: none below the mean.
    assert math.isnan(
        compare._small_share([f(1.0, 1.0, 0.0, 0.0), f(2.0, 1.0, 0.0, 0.0)], "sim")["retransmits"]
    )
    assert compare._small_share([f(1.0, 1.0, 3.0, 3.0)] * 2, "kernel") == {
        "goodput": 0.0,
        "retransmits": 0.0,
    }


def test_trials_are_judged_on_their_means():
    cfg = dumbbell(flows=2, duration=10 * S)
    for f in cfg["flows"]:
        f["src"], f["dst"], f["group"] = "s0", "d0", "g"

    def flow(name, sim, kern):
        e = {
            "flow": name,
            "kind": "tcp",
            "cca": "cubic",
            "mean_goodput_bps": {"sim": sim, "kernel": kern, "rel_diff": (sim - kern) / kern},
            "interval_goodput": {"mae_rel": 0.05, "correlation": 0.9},
            "cwnd": {
                "mean_sim_bytes": 100.0,
                "mean_kernel_bytes": 100.0,
                "mean_rel": 0.0,
                "mae_rel": 0.1,
                "correlation": 0.5,
            },
            "retransmits": {"sim": 10.0, "kernel": 12.0},
            "timeouts": {"sim": 0.0, "kernel": 0.0},
        }
        e["checks"] = compare._flow_checks(e)
        e["pass"] = all(c["pass"] is not False for c in e["checks"].values())
        return e

    def trial(sim, kern):
        flows = [flow("f0", sim[0], kern[0]), flow("f1", sim[1], kern[1])]
        groups = compare._group_checks(cfg, flows)
        return {"kernel_valid": True, "kernel_invalid_reasons": [], "flows": flows,
                "groups": groups, "pass": all(g["pass"] for g in groups)}  # fmt: skip

    # A deterministic simulator splits 55/41 every time; the kernel's split varies by run
    # (the three splits measured on this machine). Each single run but the middle one fails
    # on the shares; the means agree.
    sim = (55e6, 41e6)
    runs = [trial(sim, k) for k in [(46e6, 50e6), (56e6, 40e6), (59e6, 37e6)]]
    assert [r["groups"][0]["pass"] for r in runs] == [False, True, False]
    merged = compare.merge_trials(cfg, runs)
    (g,) = merged["groups"]
    assert g["pass"], g["checks"]
    assert g["goodput_bps"]["kernel"] == pytest.approx(
        [(50e6 + 56e6 + 59e6) / 3, (46e6 + 40e6 + 37e6) / 3]
    )
    assert g["trials"]["jain_kernel"] == pytest.approx(
        [r["groups"][0]["jain"]["kernel"] for r in runs]
    )
    assert merged["trials"] == 3 and merged["pass"]
    f0 = merged["flows"][0]
    assert f0["mean_goodput_bps"]["kernel"] == pytest.approx((46e6 + 56e6 + 59e6) / 3)
    assert f0["trials"]["sim_goodput_bps"] == [55e6] * 3
    assert f0["trials"]["kernel_retransmits"] == [12.0] * 3
    assert g["trials"]["retransmits_sim"] == [20.0] * 3  # both flows of each trial
    # Who takes the losses: the slower flow of each kernel trial has 46/96, 40/96, 37/96 of the
    # goodput and half the retransmissions (12 of 24; the test's flows all retransmit 12).
    shares = g["trials"]["small_share_kernel"]
    assert [x["goodput"] for x in shares] == pytest.approx([46 / 96, 40 / 96, 37 / 96])
    assert [x["retransmits"] for x in shares] == [0.5] * 3
    # An invalid kernel run in any trial invalidates the whole comparison.
    runs[1]["kernel_valid"] = False
    runs[1]["kernel_invalid_reasons"] = ["emulator late"]
    bad = compare.merge_trials(cfg, runs)
    assert not bad["pass"] and bad["kernel_invalid_reasons"] == ["emulator late"]
    # One trial: the report itself.
    assert compare.merge_trials(cfg, runs[:1]) is runs[0]
    # Extra simulator trials (no kernel run of their own) count in the simulator's means only:
    # here a simulator whose first three trials split 80/16 and whose next three split 48/48.
    runs[1]["kernel_valid"] = True
    unfair = [trial((80e6, 16e6), k) for k in [(46e6, 50e6), (56e6, 40e6), (59e6, 37e6)]]
    extra = [trial((48e6, 48e6), (1.0, 1.0)) for _ in range(3)]  # kernel side ignored
    alone = compare.merge_trials(cfg, unfair)
    both = compare.merge_trials(cfg, unfair, extra)
    assert not alone["groups"][0]["checks"]["fairness"]["pass"]
    (g,) = both["groups"]
    assert g["goodput_bps"]["sim"] == pytest.approx([64e6, 32e6])
    assert g["goodput_bps"]["kernel"] == alone["groups"][0]["goodput_bps"]["kernel"]
    assert g["jain"]["sim"] == pytest.approx((compare._jain([80e6, 16e6]) + 1.0) / 2)
    assert len(g["trials"]["jain_sim"]) == 6 and len(g["trials"]["jain_kernel"]) == 3
    assert g["trials"]["jain_sim_sem"] > 0 and g["trials"]["jain_kernel_sem"] > 0
    assert both["trials"] == 3 and both["sim_trials"] == 6
    # Per kernel trial (not per simulator trial): the stagger used and the kernel's counters.
    for i, r in enumerate(unfair):
        r["start_stagger_ms"] = {"f1": 0.5 * i}
        r["kernel_netstat"] = {"s0": {"TcpExtTCPHystartTrainCwnd": 100 + i}}
    again = compare.merge_trials(cfg, unfair, extra)
    assert again["stagger_trials_ms"] == [{"f1": 0.0}, {"f1": 0.5}, {"f1": 1.0}]
    assert [n["s0"]["TcpExtTCPHystartTrainCwnd"] for n in again["kernel_netstat_trials"]] == [
        100,
        101,
        102,
    ]
    f0 = both["flows"][0]
    assert f0["trials"]["sim_goodput_bps"] == [80e6] * 3 + [48e6] * 3
    assert f0["mean_goodput_bps"]["kernel"] == pytest.approx((46e6 + 56e6 + 59e6) / 3)
    assert f0["retransmits"] == {"sim": 10.0, "kernel": 12.0}


def test_simulator_starts_flows_with_the_kernels_stagger():
    kern = {
        "kernel": {
            "flows": [
                {"name": "f.0", "start_offset_ns": 87_100_000},
                {"name": "f.1", "start_offset_ns": 90_900_000},
                {"name": "udp", "start_offset_ns": None},
            ]
        }
    }
    st = compare.start_stagger(kern)
    assert st == {"f.0": 0, "f.1": 3_800_000}
    aligned = compare.common_start_offset(kern, st)
    # Both kernel flows are shifted by the punctual one's offset; f.1 keeps its 3.8 ms.
    assert [f["start_offset_ns"] for f in aligned["kernel"]["flows"][:2]] == [87_100_000] * 2
    assert kern["kernel"]["flows"][1]["start_offset_ns"] == 90_900_000  # input untouched
    cfg = dumbbell(flows=2)
    cfg["flows"][0]["name"], cfg["flows"][1]["name"] = "f.0", "f.1"
    cfg["flows"][1]["start_ns"] = 1 * S
    out = compare.staggered(cfg, st)
    assert [f.get("start_ns", 0) for f in out["flows"]] == [0, 1 * S + 3_800_000]
    assert compare.start_stagger({"kernel": {"flows": []}}) == {}


def test_netstat_reads_tcp_and_tcpext_counters_and_their_change():
    from tcplab.kernel import netstat

    snmp = (
        "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
        "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens OutSegs RetransSegs CurrEstab\n"
        "Tcp: 1 200 120000 -1 3 1000 7 2\n"
        "Udp: InDatagrams\nUdp: 5\n"
    )
    ext = (
        "TcpExt: SyncookiesSent TCPHystartTrainDetect TCPHystartTrainCwnd\n"
        "TcpExt: 0 1 250\n"
        "IpExt: InNoRoutes\nIpExt: 0\n"
    )
    before = netstat.parse(snmp + ext)
    assert before["TcpOutSegs"] == 1000 and before["TcpExtTCPHystartTrainCwnd"] == 250
    assert "IpForwarding" not in before and "UdpInDatagrams" not in before
    after = netstat.parse(snmp.replace("1000 7 2", "5000 9 0") + ext.replace("0 1 250", "0 2 410"))
    # Counters that moved, by how much; gauges (CurrEstab, RtoMin) and still counters left out.
    assert netstat.delta(before, after) == {
        "TcpExtTCPHystartTrainCwnd": 160,
        "TcpExtTCPHystartTrainDetect": 1,
        "TcpOutSegs": 4000,
        "TcpRetransSegs": 2,
    }


def test_reductions_are_ssthresh_changes_after_slow_start():
    inf = 2**31 * 1448.0
    t = np.array([0, 1, 2, 3, 4, 5, 6], dtype=float)
    ss = np.array([inf, inf, 100, 100, 70, np.nan, 90], dtype=float)
    # The first finite value (the end of slow start) is not a response; NaN samples are skipped.
    assert compare._reductions(t, ss).tolist() == [4.0, 6.0]
    assert compare._reductions(t[:3], ss[:3]).tolist() == []


def test_loss_events_say_who_responds_to_each_congestion_event():
    ms = 1e6
    red = {
        "f0": np.array([1000, 2000, 3000]) * ms,
        "f1": np.array([1030, 2500, 4000]) * ms,
    }
    t = np.array([0, 3500]) * ms
    cwnd = {"f0": (t, np.array([100.0, 100.0])), "f1": (t, np.array([50.0, 150.0]))}
    ev = compare._loss_events(red, cwnd, 20 * ms)
    # 1.00 + 1.03 s: one event (within two round trips), both flows; 2.0 and 3.0 s: f0 alone,
    # the larger; 2.5 s: f1 alone, the smaller then; 4.0 s: f1 alone, the larger since 3.5 s.
    assert ev == {"events": 5, "several": 1, "largest": 3, "other": 1}
    # With a round trip of 10 ms the first two responses are separate events.
    assert compare._loss_events(red, cwnd, 10 * ms)["several"] == 0
    line = compare._loss_events_line("g", {"loss_events_sim": [ev, ev], "loss_events_kernel": [ev]})
    assert (
        "simulator 10 events, 2 with several flows responding, 8 with one: "
        "the largest flow in 6 (75%)" in line
    )
    assert "kernel 5 events" in line


def _attempts(monkeypatch, verdicts, pauses=None):
    """engine.run over stub attempts that are valid or not as *verdicts* says, in order; the
    pauses before reruns are recorded in *pauses* instead of slept."""
    calls = []
    monkeypatch.setattr(engine.time, "sleep", (pauses if pauses is not None else []).append)

    def once(config):
        ok = verdicts[len(calls)]
        calls.append(config)
        return {
            "engine": "kernel",
            "valid": ok,
            "invalid_reasons": [] if ok else [f"attempt {len(calls)} late"],
            "kernel": {},
        }

    monkeypatch.setattr(engine, "_run_once", once)
    return calls


def test_an_invalid_trial_is_run_again_after_a_pause_by_default(monkeypatch):
    pauses = []
    calls = _attempts(monkeypatch, [False, True], pauses)
    raw = engine.run({"meta": {}})
    assert len(calls) == 2 and pauses == [engine.RERUN_PAUSE_S]
    assert raw["valid"]
    assert raw["kernel"]["discarded_attempts"] == [["attempt 1 late"]]
    # Twice by default, the pause doubling; the third invalid attempt is kept.
    calls = _attempts(monkeypatch, [False, False, False, True], pauses := [])
    raw = engine.run({"meta": {}})
    assert len(calls) == 3 == engine.DEFAULT_RERUN_INVALID + 1
    assert pauses == [engine.RERUN_PAUSE_S, 2 * engine.RERUN_PAUSE_S]
    assert not raw["valid"] and len(raw["kernel"]["discarded_attempts"]) == 2


def test_rerun_invalid_bounds_the_attempts_and_keeps_the_last_invalid_one(monkeypatch):
    calls = _attempts(monkeypatch, [False, False, False, True])
    raw = engine.run({"meta": {"kernel": {"rerun_invalid": 2}}})
    assert len(calls) == 3
    assert not raw["valid"] and raw["invalid_reasons"] == ["attempt 3 late"]
    assert raw["kernel"]["discarded_attempts"] == [["attempt 1 late"], ["attempt 2 late"]]
    calls = _attempts(monkeypatch, [False, True])
    raw = engine.run({"meta": {"kernel": {"rerun_invalid": 0}}})
    assert len(calls) == 1 and not raw["valid"]
    assert raw["kernel"]["discarded_attempts"] == []


def test_a_valid_first_attempt_is_not_repeated(monkeypatch):
    calls = _attempts(monkeypatch, [True, True])
    assert engine.run({})["kernel"]["discarded_attempts"] == []
    assert len(calls) == 1
