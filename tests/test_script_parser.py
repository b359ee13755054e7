"""Parser of behaviour scripts (issue 14): the accepted subset, errors naming file/line/token, and
fuzzing showing that no text makes the parser raise anything but ScriptError."""

from __future__ import annotations

import contextlib

import pytest

from tcplab.errors import UserError
from tcplab.script import Assertion, ScriptError, Segment, Syscall, parse_file, parse_script

GOOD = """\
// passive open then a flight
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  setsockopt(3, SOL_SOCKET, SO_SNDBUF, [65536], 4) = 0
+0  setsockopt(3, IPPROTO_TCP, TCP_CONGESTION, "reno", 4) = 0
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
+.1 < . 1:1(0) ack 1 win 257
+0  accept(3, ..., ...) = 4
+0  write(4, ..., 10000) = 10000
+0  > P. 1:10001(10000) ack 1
/* a block
   comment */
+0 %{
assert tcpi_snd_cwnd == 10
assert tcpi_ca_state == TCP_CA_Open
}%
+.1 < . 1:1(0) ack 1001 win 257 <sack 2001:3001,nop,nop,TS val 5 ecr 7>
0.3~0.35 > . 1001:2001(1000) ack 1
* > F. 10001:10001(0) ack 1
+0 %{ assert tcpi_rto >= 200000; assert tcpi_retransmits < 3 }%
+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
"""


def test_good_script_parses_with_resolved_times():
    ev = parse_script(GOOD, "good.pkt")
    assert [e.line for e in ev][:3] == [2, 3, 4]
    syn = ev[5].action
    assert isinstance(syn, Segment) and syn.inbound and syn.flags == "S" and syn.win == 32792
    assert [o.kind for o in syn.options] == ["mss", "sackOK", "nop", "nop", "nop", "wscale"]
    assert ev[7].time == pytest.approx(0.1)
    data = ev[10].action
    assert (
        isinstance(data, Segment)
        and not data.inbound
        and (data.start, data.end, data.length) == (1, 10001, 10000)
    )
    asserts = ev[11].action
    assert asserts == (
        Assertion("cwnd", "tcpi_snd_cwnd", "==", 10),
        Assertion("ca_state", "tcpi_ca_state", "==", 0),
    )
    assert ev[11].line == 15
    sack = ev[12].action
    assert sack.options[0].values == (2001, 3001) and sack.options[-1].values == (5, 7)
    assert ev[12].time == pytest.approx(0.2)
    assert (ev[13].time, ev[13].time_end) == (pytest.approx(0.3), pytest.approx(0.35))
    assert ev[14].time is None
    assert [a.var for a in ev[15].action] == ["rto", "retransmits"]
    call = ev[16].action
    assert isinstance(call, Syscall) and call.ret == -1 and call.errno == "EINPROGRESS"
    assert ev[2].action.args[3] == '"reno"'


@pytest.mark.parametrize(
    ("text", "line", "token", "words"),
    [
        (
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\nx listen(3, 1) = 0\n",
            2,
            "x",
            "expected a time",
        ),
        ("0 sockt(..., SOCK_STREAM, IPPROTO_TCP) = 3\n", 1, "sockt", "did you mean 'socket'"),
        ("0 listen(3) = 0\n", 1, "listen", "takes 2 arguments"),
        ("\n\n0 < S 0:0(0) win 1 <mss 1000,bogus 3>\n", 3, "bogus", "unknown TCP option"),
        ("0 < SX 0:0(0) win 1\n", 1, "SX", "bad TCP flags"),
        ("0 < . 1:11(5) ack 1 win 1\n", 1, "1:11(5)", "does not equal"),
        ("0 < . 1:1(0) ack 1 win 99999\n", 1, "99999", "out of range"),
        ("0 < S 0:0(0) ack 1 win 1\n", 1, "S", "lack '.'"),
        ("0 < . ack 1 win 1\n", 1, "< . ack 1 win 1", "needs a sequence range"),
        ("1 listen(3, 1) = 0\n0.5 listen(3, 1) = 0\n", 2, "0.5", "goes backwards"),
        ("0 %{ assert tcpi_cwind == 10 }%\n", 1, "tcpi_cwind", "unknown TCP_INFO variable"),
        ("0 %{ assert tcpi_cwnd === 10 }%\n", 1, "assert tcpi_cwnd === 10", "expected 'assert"),
        ("0 %{ assert tcpi_cwnd == 10\n", 1, "%{", "never closed"),
        ("0 /* open\n", 1, "/*", "never closed"),
        ("0 connect(3, ..., ...) = -1\n", 1, "-1", "errno"),
        ("0 < S 0:0(0) win 1 <wscale 15>\n", 1, "15", "at most 14"),
        ("0 < . 1:1(0) ack 1 win 1 <sack 5>\n", 1, "5", "SACK block"),
        ("0\n", 1, "0", "nothing after the time"),
    ],
)
def test_errors_name_file_line_and_token(text, line, token, words):
    with pytest.raises(ScriptError) as ei:
        parse_script(text, "bad.pkt")
    err = ei.value
    assert isinstance(err, UserError)
    assert (err.path, err.line, err.token) == ("bad.pkt", line, token)
    assert str(err).startswith(f"bad.pkt:{line}: near ")
    assert words in str(err)


def test_parse_file_reads_and_reports_missing(tmp_path):
    p = tmp_path / "a.pkt"
    p.write_text("0 listen(3, 1) = 0\n")
    assert parse_file(p)[0].action.name == "listen"
    with pytest.raises(ScriptError, match="cannot read script"):
        parse_file(tmp_path / "missing.pkt")


hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PIECES = [
    "0",
    "+0",
    "+.1",
    "*",
    "0.1~0.2",
    "<",
    ">",
    "S",
    "S.",
    ".",
    "P.",
    "F.",
    "R",
    "0:0(0)",
    "1:1001(1000)",
    "ack",
    "win",
    "1",
    "257",
    "<",
    ">",
    "mss",
    "sackOK",
    "nop",
    "wscale",
    "sack",
    "2001:3001",
    "TS",
    "val",
    "ecr",
    ",",
    "(",
    ")",
    "=",
    "-1",
    "socket",
    "listen(3, 1)",
    "write(4, ..., 10)",
    "%{",
    "}%",
    "assert",
    "tcpi_cwnd",
    "==",
    "TCP_CA_Loss",
    "//",
    "/*",
    "*/",
    "\n",
    " ",
    "...",
    '"',
    "[",
    "]",
    "\u00e9",
    "99999999999999999999",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_fuzz_token_soup_only_raises_script_error(pieces):
    try:
        parse_script(" ".join(pieces), "fuzz.pkt")
    except ScriptError as e:
        assert e.path == "fuzz.pkt" and e.line >= 0


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_random_text_only_raises_script_error(text):
    with contextlib.suppress(ScriptError):
        parse_script(text, "fuzz.pkt")


def test_check_command_reports_bad_file_and_fails(tmp_path, capsys):
    from tcplab.script.__main__ import main

    good = tmp_path / "good.pkt"
    good.write_text(GOOD)
    bad = tmp_path / "bad.pkt"
    bad.write_text("0 listen(3, 1) = 0\n+0 < S 0:0(0) win 1 <mss 1000,bogus>\n")
    assert main(["--check", str(good)]) == 0
    assert "ok (17 events)" in capsys.readouterr().out
    assert main(["--check", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: near 'bogus'" in err
