"""Simulator runner of behaviour scripts (issue 14): a script that matches the model passes, one
line changed makes it fail with expected vs actual, and the shipped suite parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplab.script import parse_file, parse_script
from tcplab.script.__main__ import main
from tcplab.script.sim import run_sim

SUITE = Path(__file__).resolve().parents[1] / "python" / "tcplab" / "scenarios" / "scripts"

OPEN = """\
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
+0  > S 0:0(0) <mss 1460,sackOK,TS val 1 ecr 0,wscale 1>
+.1 < S. 0:0(0) ack 1 win 65535 <mss 1460,nop,nop,sackOK,nop,wscale 8>
+0  > . 1:1(0) ack 1
+0  write(3, ..., 4380) = 4380
+0  > . 1:1461(1460) ack 1
+0  > . 1461:2921(1460) ack 1
+0  > . 2921:4381(1460) ack 1
+0 %{ assert tcpi_unacked == 3 }%
"""


def _run(text: str, stack: str = "linux-6"):
    return run_sim(parse_script(text, "t.pkt"), "t.pkt", stack)


def test_matching_script_passes_every_line():
    res = _run(OPEN)
    assert res.passed, res.failure()
    assert len(res.lines) == 10


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ("2921:4381(1460)", "2921:4001(1080)", 9, "expected 2921:4001(1080)"),
        ("tcpi_unacked == 3", "tcpi_unacked == 4", 10, "tcpi_unacked = 3 (expected == 4)"),
        ("+0  > . 1:1(0) ack 1\n", "+0  > . 1:1(0) ack 7\n", 5, "ack 1 (expected 7)"),
        (
            "+0  > . 1461:2921(1460) ack 1\n",
            "+.05 > . 1461:2921(1460) ack 1\n",
            8,
            "expected 0.150000s",
        ),
        ("+0  > S 0:0(0) <mss 1460", "+0  > S 0:0(0) <mss 1400", 3, "mss 1460 (expected 1400)"),
    ],
)
def test_changed_line_fails_with_expected_and_actual(old, new, line, words):
    assert old in OPEN
    res = _run(OPEN.replace(old, new))
    bad = res.failure()
    assert not res.passed and bad is not None
    assert bad.line == line
    assert words in bad.detail


def test_extra_outbound_segment_is_reported():
    res = _run(OPEN.replace("write(3, ..., 4380) = 4380", "write(3, ..., 5840) = 5840"))
    bad = res.failure()
    assert bad is not None and bad.line == 10 and "unexpected outbound segment" in bad.detail


def test_command_exit_status(tmp_path, capsys):
    good = tmp_path / "good.pkt"
    good.write_text(OPEN)
    bad = tmp_path / "bad.pkt"
    bad.write_text(OPEN.replace("tcpi_unacked == 3", "tcpi_unacked == 9"))
    assert main([str(good)]) == 0
    assert main([str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:10: FAIL" in out and "tcpi_unacked = 3 (expected == 9)" in out
    junk = tmp_path / "junk.pkt"
    junk.write_text("0 frobnicate() = 0\n")
    assert main([str(junk)]) == 2


def test_shipped_suite_parses_and_runs():
    files = sorted(SUITE.rglob("*.pkt"))
    assert files, SUITE
    for f in files:
        res = run_sim(parse_file(f), str(f), f.parent.name)
        assert res.lines, f


def test_table_lists_every_suite_directory(capsys):
    assert main(["--table"]) == 0
    out = capsys.readouterr().out
    for d in SUITE.iterdir():
        if d.is_dir():
            n = len(list(d.glob("*.pkt")))
            assert any(line.split()[:2] == [d.name, str(n)] for line in out.splitlines()), d.name


# Scripts the model fails, per suite directory, each for a cause listed in README "Behaviour
# scripts" (known differences; the script's header names it too). A model change that fixes
# one, or breaks another, fails this test so that the README table is updated with it.
# linux-6: none (the last two, delack-timer.pkt and quickack-after-idle.pkt, passed once the
# receiver kept a quick ACK for every segment that grows its window and re-entered quick-ACK mode
# after an idle gap above its RTO).
# rto-cwnd.pkt of the Linux 2.x and BSD personalities passed once their slow start ran while
# cwnd <= ssthresh (knob slow_start_inclusive), linux-2.6.16/undo-dsack-rto.pkt once BIC's undo
# followed tcp_bic.c's max(cwnd, last_max_cwnd) (cca param undo_rule = "w_max").
KNOWN_SIM_DIFFERENCES: dict[str, set[str]] = {}


def test_every_personality_has_a_suite():
    from tcplab import stacks

    dirs = {d.name for d in SUITE.iterdir() if d.is_dir()}
    assert set(stacks.names()) - {"generic"} <= dirs


@pytest.mark.parametrize("stack", sorted(d.name for d in SUITE.iterdir() if d.is_dir()))
def test_suite_fails_only_the_known_differences(stack):
    failed = {
        f.name
        for f in sorted((SUITE / stack).glob("*.pkt"))
        if not run_sim(parse_file(f), str(f), stack).passed
    }
    assert failed == KNOWN_SIM_DIFFERENCES.get(stack, set())


@pytest.mark.parametrize("stack", sorted(d.name for d in SUITE.iterdir() if d.is_dir()))
def test_suite_checks_rto_and_timeout_response(stack):
    # Issue 15: every personality's suite has the timer and the response to a timeout.
    names = {f.name for f in (SUITE / stack).glob("*.pkt")}
    assert {"iw.pkt", "rto-backoff.pkt", "syn-backoff.pkt"} <= names, names
    if stack != "linux-6":  # linux-6: rto-loss-state.pkt, frto.pkt, undo-dsack.pkt
        assert "rto-cwnd.pkt" in names, names


PASSIVE = """\
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1
+.1 < . 1:1(0) ack 1 win 257
+0  accept(3, ..., ...) = 4
+.1 < . 1:1461(1460) ack 1 win 257
+0  > . 1:1(0) ack 1461
+.1 < . 2921:4381(1460) ack 1 win 257
+0  > . 1:1(0) ack 1461 <sack 2921:4381>
"""


def test_passive_open_drives_the_receiver_model():
    res = _run(PASSIVE)
    assert res.passed, res.failure()
    # the SACK block is compared: a wrong one fails with what was sent
    bad = _run(PASSIVE.replace("<sack 2921:4381>", "<sack 2921:5841>")).failure()
    assert bad is not None and "expected [(2921, 5841)]" in bad.detail
    # the receiver model has no congestion state to assert on
    bad = _run(PASSIVE + "+0 %{ assert tcpi_snd_cwnd == 10 }%\n").failure()
    assert bad is not None and "assertion before the socket exists" in bad.detail


def test_fin_stays_off_the_wire_until_close():
    text = OPEN + "+.1 < . 1:1(0) ack 4381 win 257\n"
    assert _run(text).passed  # the model's sized flow would send FIN here; no close() yet
    closed = _run(text + "+0 close(3) = 0\n+0  > F. 4381:4381(0) ack 1\n")
    assert closed.passed, closed.failure()


def test_ca_state_follows_linux_names():
    text = OPEN + (
        "+.1 < . 1:1(0) ack 1 win 257 <sack 1461:2921,nop,nop>\n"
        "+0 %{ assert tcpi_ca_state == TCP_CA_Disorder }%\n"
    )
    res = _run(text)
    assert res.passed, res.failure()


def test_trace_prints_segments_and_never_passes(capsys):
    assert main(["--trace", str(SUITE / "linux-6" / "iw.pkt")]) == 0
    out = capsys.readouterr().out
    assert "> P. 13141:14601(1460)" in out and "TRACE (linux-6)" in out and "PASS" not in out


def test_sysctl_header_sets_model_knobs_or_is_refused(tmp_path):
    """``--sysctl`` lines reach the model as knobs (tcp_early_retrans=0: no tail loss probe);
    one the model has no knob for is an error naming the file and the sysctl."""
    from tcplab.errors import UserError
    from tcplab.script.sim import sysctl_knobs

    f = tmp_path / "a.pkt"
    f.write_text("--sysctl=net.ipv4.tcp_early_retrans=0\n0 socket(..., SOCK_STREAM, 0) = 3\n")
    assert sysctl_knobs(str(f)) == {"tlp": False}
    f.write_text("--sysctl=net.ipv4.tcp_ecn=1\n")
    with pytest.raises(UserError, match=r"a\.pkt: --sysctl=net\.ipv4\.tcp_ecn=1: .*no knob"):
        sysctl_knobs(str(f))
    # XNU's stretch-ACK sysctls (macOS) set the simulator's stretch_ack_* knobs.
    f.write_text("--sysctl=net.inet.tcp.rcvsspktcnt=16\n--sysctl=net.inet.tcp.maxseg_unacked=4\n")
    assert sysctl_knobs(str(f)) == {"stretch_ack_wait": 16, "stretch_ack_segments": 4}


def test_xnu_sysctls_are_refused_by_the_kernel_engine(tmp_path):
    """A BSD/XNU sysctl in a script is the simulator's only: the kernel engine says so before it
    creates anything."""
    from tcplab.errors import UserError
    from tcplab.script.kernel import run_kernel

    f = tmp_path / "x.pkt"
    text = "--sysctl=net.inet.tcp.rcvsspktcnt=16\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
    f.write_text(text)
    with pytest.raises(UserError, match=r"x\.pkt: --sysctl=net\.inet\.tcp\.rcvsspktcnt.*simulator"):
        run_kernel(parse_file(f), str(f))


def test_path_header_options_set_model_knobs_and_are_refused_by_the_kernel_engine(tmp_path):
    """``--peer_local=1`` (XNU TF_LOCAL) and ``--route_rtt=US`` / ``--route_rttvar=US`` (the
    route's cached metrics, µs) describe the path: the simulator takes them as knobs, the kernel
    engine refuses them; other packetdrill options stay ignored. XNU's local-peer sysctls map to
    the local values."""
    from tcplab.errors import UserError
    from tcplab.script.kernel import run_kernel
    from tcplab.script.sim import option_knobs, sysctl_knobs

    f = tmp_path / "x.pkt"
    f.write_text(
        "--tolerance_usecs=1000\n--peer_local=1\n--route_rtt=99200\n--route_rttvar=37200\n"
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
    )
    assert option_knobs(str(f)) == {
        "peer_local": True,
        "route_rtt": 99_200_000,
        "route_rttvar": 37_200_000,
    }
    with pytest.raises(UserError, match=r"x\.pkt: --peer_local: a simulator-only option"):
        run_kernel(parse_file(f), str(f))
    f.write_text("--peer_local=yes\n")
    with pytest.raises(UserError, match=r"--peer_local=yes: expected an integer"):
        option_knobs(str(f))
    f.write_text(
        "--sysctl=net.inet.tcp.rtt_min=100\n--sysctl=net.inet.tcp.local_slowstart_flightsize=4\n"
    )
    assert sysctl_knobs(str(f)) == {"min_rto_local": 100_000_000, "initial_window_local": 4}
