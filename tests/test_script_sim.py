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
