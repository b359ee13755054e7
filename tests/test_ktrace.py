"""The kernel tracepoint recorder (python/tcplab/kernel/ktrace.py): parsing tracefs text,
grouping by flow and end, refusals. No root needed; the kernel runs are in test_kernel_root.py."""

from __future__ import annotations

import pytest

from tcplab.errors import EngineError, UserError
from tcplab.kernel import ktrace

# Lines in the layout of this machine's Linux 6.18 tracefs (`trace` of an instance, mono clock).
TRACE = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 4/6   #P:2
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          iperf3-25455   [001] .....  1402.463028: tcp_rcvbuf_grow: time=22006 rtt_us=22000 \
copied=20272 inq=0 space=14480 ooo=0 scaling_ratio=160 rcvbuf=131072 rcv_ssthresh=80480 \
window_clamp=81920 rcv_wnd=80896 family=AF_INET6 sport=5201 dport=40000 saddr=10.1.2.1 \
daddr=10.1.1.1 saddrv6=::ffff:10.1.2.1 daddrv6=::ffff:10.1.1.1 skaddr=00000000a1b2c3d4 \
sock_cookie=1f
          <idle>-0       [000] ..s1.  1402.470000: tcp_probe: family=AF_INET \
src=10.1.1.1:40000 dest=10.1.2.1:5201 mark=0x0 data_len=0 snd_nxt=0x2c3d snd_una=0x1b2c \
snd_cwnd=20 ssthresh=2147483647 snd_wnd=80896 srtt=20123 rcv_wnd=65535 sock_cookie=20 \
skbaddr=0000000011112222 skaddr=0000000033334444
          <idle>-0       [000] ..s1.  1402.480500: tcp_cong_state_set: family=AF_INET \
sport=40000 dport=5201 saddr=10.1.1.1 daddr=10.1.2.1 saddrv6=::ffff:10.1.1.1 \
daddrv6=::ffff:10.1.2.1 cong_state=3
   ksoftirqd/1-22      [001] ..s1.  1402.490000: tcp_cong_state_set: family=AF_INET \
sport=40007 dport=5208 saddr=10.1.1.1 daddr=10.1.2.1 saddrv6=::ffff:10.1.1.1 \
daddrv6=::ffff:10.1.2.1 cong_state=1
""".replace("\\\n", "")


def test_parse_reads_time_event_and_fields():
    recs = ktrace.parse(TRACE)
    assert [e for _, e, _ in recs] == [
        "tcp_rcvbuf_grow",
        "tcp_probe",
        "tcp_cong_state_set",
        "tcp_cong_state_set",
    ]
    t, _, f = recs[0]
    assert t == 1402 * 10**9 + 463_028_000
    assert f["copied"] == 20272 and f["space"] == 14480 and f["sport"] == 5201
    # tcp_probe gives address:port; the ports become sport/dport, hex values ints.
    _, _, p = recs[1]
    assert (p["sport"], p["dport"]) == (40000, 5201)
    assert p["snd_nxt"] == 0x2C3D and p["snd_cwnd"] == 20
    assert recs[2][0] - recs[1][0] == 10_500_000


def test_lost_events_from_the_header():
    assert ktrace.lost_events(TRACE) == 2
    assert ktrace.lost_events("# tracer: nop\n") == 0


def test_per_flow_groups_by_flow_and_end_and_aligns_columns():
    recs = ktrace.parse(TRACE)
    out = ktrace.per_flow(recs, 1402 * 10**9, [("cubic.0", 40000, 5201)])
    # The receiver's event (local port = server port) and the sender's two; the record of
    # another connection (ports 40007/5208) is not the flow's.
    assert set(out["cubic.0"]) == {"rcv", "snd"}
    grow = out["cubic.0"]["rcv"]["tcp_rcvbuf_grow"]
    assert grow["t_ns"] == [463_028_000] and grow["copied"] == [20272]
    snd = out["cubic.0"]["snd"]
    assert snd["tcp_probe"]["snd_cwnd"] == [20]
    assert snd["tcp_cong_state_set"]["cong_state"] == [3]
    # Text and pointer fields are left out; every column has one entry per record.
    assert "family" not in grow and "sock_cookie" not in grow
    for ev in (grow, snd["tcp_probe"]):
        assert {len(v) for v in ev.values()} == {1}


def test_per_flow_pads_fields_a_record_lacks():
    recs = [
        (10, "tcp_probe", {"sport": 1, "dport": 2, "a": 5}),
        (20, "tcp_probe", {"sport": 1, "dport": 2, "b": 7}),
        (30, "tcp_probe", {"sport": 1, "dport": 2, "a": 6}),
    ]
    cols = ktrace.per_flow(recs, 0, [("f", 1, 2)])["f"]["snd"]["tcp_probe"]
    assert cols == {"t_ns": [10, 20, 30], "a": [5, None, 6], "b": [None, 7, None]}


def test_unknown_or_no_events_are_refused():
    with pytest.raises(EngineError, match=r"unknown event\(s\) tcp_nope; choose from tcp_probe"):
        ktrace.KTrace(["tcp_probe", "tcp_nope"], "0badf00d", [5201])
    with pytest.raises(EngineError, match="at least one event"):
        ktrace.KTrace([], "0badf00d", [5201])


def test_missing_tracefs_is_a_clear_error(tmp_path):
    kt = ktrace.KTrace(["tcp_probe"], "0badf00d", [5201], root=tmp_path)
    (tmp_path / "instances").mkdir()
    with pytest.raises(EngineError, match=r"no tracepoint tcp:tcp_probe"):
        kt.start()


def test_run_refuses_ktrace_on_the_simulator():
    import tcplab
    from tcplab.bundled import resolve

    qs = resolve("quickstart")
    with pytest.raises(UserError, match="--engine kernel"):
        tcplab.run(qs, ktrace=["tcp_probe"], trials=1)
    # Refused before the engine is looked for (so also where the kernel engine cannot run).
    with pytest.raises(UserError, match="unknown event"):
        tcplab.run(qs, ktrace=["tcp_nope"], trials=1, engine="kernel")


def test_ktrace_frame_has_one_row_per_event():
    from tcplab.results import ktrace_frame

    recs = ktrace.parse(TRACE)
    raw = {
        "kernel": {
            "tracepoints": {
                "flows": ktrace.per_flow(recs, 1402 * 10**9, [("cubic.0", 40000, 5201)])
            }
        }
    }
    df = ktrace_frame([{"kernel": {}}, raw])
    assert list(df["event"]) == ["tcp_rcvbuf_grow", "tcp_probe", "tcp_cong_state_set"]
    assert list(df["trial"]) == [1, 1, 1]
    assert df["time_s"].iloc[0] == pytest.approx(0.463028)
    assert ktrace_frame([{"kernel": {}}]) is None


def test_run_refuses_rerun_invalid_on_the_simulator_and_negative_counts():
    import tcplab
    from tcplab.bundled import resolve

    qs = resolve("quickstart")
    with pytest.raises(UserError, match="only the kernel engine marks a trial invalid"):
        tcplab.run(qs, rerun_invalid=2, trials=1)
    with pytest.raises(UserError, match="give a count ≥ 0"):
        tcplab.run(qs, rerun_invalid=-1, trials=1, engine="kernel")
