"""``tcplab identify --probe``: identify a local Linux CCA actively (Gordon-style).

Gordon (Mishra et al., SIGMETRICS 2020) makes the server under test send through a bottleneck
it controls and drops packets at chosen times, then reads the algorithm from how the window
reacts. Here the kernel engine (python/tcplab/kernel) plays both parts on this machine: the
chosen CCA runs in a network namespace, the link emulator carries a bottleneck that drops chosen
packets (``loss = {model = "list"}``; drop times are converted to packet indices at the
bottleneck rate, so they are approximate), tcpdump captures the sender's link, and TCP_INFO gives
the kernel's own cwnd. The capture is identified as any other (:func:`classify.identify`), against
linux-6 with every algorithm of the simulator; the cwnd reduction at each drop read from TCP_INFO
is reported beside it as direct evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from ..units import UnitError, parse_duration, parse_rate
from . import references as R


def probe_doc(cca: str, rate: str, rtt: str, drops: str, duration: str, seed: int = 1) -> tuple:
    try:
        rate_bps = parse_rate(rate)
    except UnitError as e:
        raise UserError(f"--rate: {e}") from e
    times = []
    for t in drops.split(","):
        t = t.strip()
        if t:
            try:
                times.append(parse_duration(t) / 1e9)
            except UnitError as e:
                raise UserError(f"--drops: {t!r}: {e}") from e
    packets = sorted({int(t * rate_bps / (1500 * 8)) for t in times})
    doc = {
        "name": "identify-probe",
        "duration": duration,
        "interval": "50ms",
        "trials": 1,
        "seed": seed,
        "path": {
            "rate": rate,
            "rtt": rtt,
            "queue": "bdp",
            "loss": {"model": "list", "packets": packets},
        },
        "flow": [{"name": "ident", "cca": cca}],
    }
    return doc, packets, times


def host_buffers(observed_window: bool = True) -> dict[str, Any]:
    """This machine's socket-buffer limits as knobs (tcp_rmem, tcp_wmem; the same mapping
    ``tcplab compare`` uses, python/tcplab/kernel/linux.py): a known property of the probed
    host, so the references are simulated with it rather than with linux-6's defaults. With
    *observed_window* the receive window is the largest the capture shows, fixed."""
    from ..kernel.linux import linux6_tcp_knobs

    k = linux6_tcp_knobs()
    out = {n: k[n] for n in ("sndbuf", "rcvbuf", "rcvbuf_autotune_max")}
    if observed_window:
        out["rcvbuf"] = "observed"  # classify.identify: the window the capture shows
    return out


def cwnd_betas(ts: Any, times: list[float]) -> list[float]:
    """cwnd after / before each drop time, from the TCP_INFO time series (trial 0)."""
    out = []
    df = ts[ts["trial"] == 0] if "trial" in ts.columns else ts
    for t in times:
        before = df[(df["time_s"] > t - 1.0) & (df["time_s"] <= t)]["cwnd_segments"]
        after = df[(df["time_s"] > t) & (df["time_s"] <= t + 1.5)]["cwnd_segments"]
        if len(before) and len(after) and before.max() > 0:
            out.append(float(after.min() / before.max()))
    return out


def probe(
    cca: str,
    rate: str = "20Mbit",
    rtt: str = "40ms",
    drops: str = "4s,9s,14s",
    duration: str = "20s",
    jobs: int = 1,
    seed: int = 1,
    keep: str | None = None,
) -> dict[str, Any]:
    from .. import runner
    from .classify import identify

    doc, packets, times = probe_doc(cca, rate, rtt, drops, duration, seed)
    res = runner.run(doc, engine="kernel", pcap=["host:ident.snd"])
    cap = Path(res.captures[0])
    if keep:
        Path(keep).write_bytes(cap.read_bytes())
    cands = [c for c in R.candidates() if c.stack == "linux-6"]
    r = identify(cap, jobs=jobs, cands=cands, tcp=host_buffers())
    r["probe"] = {
        "cca": cca,
        "rate": rate,
        "rtt": rtt,
        "drop_times_s": times,
        "drop_packets": packets,
        "cwnd_beta": cwnd_betas(res.timeseries, times),
        "valid": res.summary.get("valid", True),
    }
    return r
