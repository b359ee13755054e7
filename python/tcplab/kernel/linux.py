"""What the running Linux kernel does, as simulator knobs, and how a scenario's knobs map onto it.

:func:`linux6_tcp_knobs` is the ONE place that states Linux 6.x's TCP behaviour in the
simulator's knob vocabulary (crates/tcplab-sim/src/tcp/config.rs). ``tcplab compare`` passes it
to the simulator so both engines run "Linux"; the kernel engine accepts a scenario knob it cannot
set on the kernel only when it equals this value. It is the simulator's ``linux-6``
personality (python/tcplab/stacks/linux-6.toml) with this machine's buffer limits.

:func:`kernel_plan_for_flow` turns one flow's knobs into kernel settings (per-namespace sysctls,
iperf3 options) or a refusal naming the knob.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .hosts import KERNEL_REFUSALS

__all__ = [
    "CCA_MODULE_PARAMS",
    "KernelFlowSettings",
    "KnobRefusal",
    "available_ccas",
    "check_cca",
    "kernel_plan_for_flow",
    "linux6_tcp_knobs",
]

MS = 1_000_000
S = 1_000_000_000


def _sysctl(path: str, default: str | None = None) -> str | None:
    try:
        return Path("/proc/sys", path.replace(".", "/")).read_text().strip()
    except OSError:
        return default


def linux6_cca_params(cca: str) -> dict[str, Any]:
    """The ``linux-6`` personality's parameters for congestion control *cca* (its stack file's
    ``[cca_params.<cca>]``, each value with its source; empty for one it leaves at the
    controller's defaults): what this machine's kernel runs when a scenario names *cca*."""
    from .. import stacks

    return stacks.get("linux-6").params_for(cca)


def linux6_tcp_knobs(mtu: int = 1500) -> dict[str, Any]:
    """Linux 6.x TCP behaviour as simulator knobs: the ``linux-6`` personality
    (python/tcplab/stacks/linux-6.toml, every value with its source) with this machine's
    buffer limits, plus the engine defaults the personality leaves implicit.

    ``stacks-and-ccas.md`` is /work/shared/reference/stacks-and-ccas.md (facts with sources);
    "ip-sysctl" is the kernel's Documentation/networking/ip-sysctl.rst.
    """
    from .. import stacks

    del mtu  # the MSS follows the MTU in both engines (mss = 0)
    wmem = (_sysctl("net.ipv4.tcp_wmem") or "4096 16384 4194304").split()
    rmem = (_sysctl("net.ipv4.tcp_rmem") or "4096 131072 6291456").split()
    knobs: dict[str, Any] = {
        # Knobs the personality leaves at the engine's defaults, stated here because the kernel
        # engine accepts a knob it cannot set only when it equals Linux's behaviour.
        # MSS = first-hop MTU − 40 (Linux advmss; RFC 9293 §3.7.1); timestamps take 12 B.
        "mss": 0,
        # No initial threshold: TCP_INFINITE_SSTHRESH (stacks-and-ccas.md A.1, B.1).
        "initial_ssthresh": None,
        # An ACK for every second full-sized segment (stacks-and-ccas.md B.1).
        "delayed_ack": True,
        "delack_segments": 2,
        # Limited transmit in the Disorder state (RFC 3042).
        "limited_transmit": True,
        # tcp_syn_retries = 6 (ip-sysctl).
        "syn_retries": 6,
        # No pacing without the fq qdisc, except BBR's own (tcp internal pacing).
        "pacing": False,
        # iperf3 reads as fast as data arrives.
        "app_read_rate": None,
        # With tcp_timestamps on, Linux offers the option in every SYN it sends and answers an
        # offer (ip-sysctl: tcp_timestamps "Enable timestamps as defined in RFC1323"); there is
        # no answer-only setting.
        "timestamps_offer": True,
        # With tcp_window_scaling on, Linux's SYN carries the option whatever the shift (p0f
        # 3.00b p0f.fp: Linux 2.4.x SYNs 'mss,sok,ts,nop,ws' with shift 0), and its window is
        # never Windows' 16-KB-then-rounded default (knob rcvbuf_round_to_mss).
        "window_scaling_offer_unscaled": True,
        "rcvbuf_round_to_mss": False,
    }
    knobs.update(stacks.get("linux-6").knob_values())
    # This machine's autotuning limits instead of the 6.x defaults of the personality: the send
    # buffer may grow to tcp_wmem[2] (the simulator has no send-buffer autotuning: the limit is
    # used from the start); the receive buffer starts at tcp_rmem[1], whose window is the
    # personality's measured share of it (rcvbuf_window), and grows to tcp_rmem[2], of which
    # half is offered as window (tcp_adv_win_scale = 1, as linux-6.toml's ceiling).
    knobs["sndbuf"] = int(wmem[2])
    knobs["rcvbuf"] = rcvbuf_window(int(rmem[1]))
    knobs["rcvbuf_autotune_max"] = int(rmem[2]) // 2
    return knobs


#: The 6.x default tcp_rmem[1] (ip-sysctl) against which linux-6.toml's `rcvbuf` (the window
#: of that buffer, measured: 81 760 B, a window/buffer ratio of 0.62) is given.
LINUX6_DEFAULT_RMEM1 = 131072


def _linux6_window_of_default_buffer() -> int:
    from .. import stacks

    return int(stacks.get("linux-6").knob_values()["rcvbuf"])


def rcvbuf_window(rmem1: int) -> int:
    """The initial window of a tcp_rmem[1] of *rmem1* bytes at the personality's measured
    window/buffer ratio (linux-6.toml `rcvbuf`; 6.6+ scaling_ratio). The autotuning ceiling keeps
    the 1/2 of linux-6.toml's `rcvbuf_autotune_max`."""
    return rmem1 * _linux6_window_of_default_buffer() // LINUX6_DEFAULT_RMEM1


def rcvbuf_buffer(window: int) -> int:
    """The inverse of :func:`rcvbuf_window`: the tcp_rmem[1] whose window is *window*."""
    return -(-window * LINUX6_DEFAULT_RMEM1 // _linux6_window_of_default_buffer())


def available_ccas() -> list[str]:
    from ..engines import kernel_ccas

    return kernel_ccas()


# Simulator CCA parameters that are Linux module parameters (/sys/module/tcp_<cca>/parameters),
# with the conversion from the scenario value to the module's representation. Module parameters
# are global to the host, so the kernel engine only *checks* them; it never changes them.
def _bool01(v: Any) -> str:
    return "1" if v in (True, "true", "linux", "on", 1) else "0"


CCA_MODULE_PARAMS: dict[str, dict[str, tuple[str, Any]]] = {
    "cubic": {
        # hystart: true/"linux" = Linux HyStart (module parameter hystart=1), false/"off" = 0.
        "hystart": ("hystart", _bool01),
        # HYSTART_ACK_TRAIN = 1, HYSTART_DELAY = 2 (tcp_cubic.c module doc).
        "hystart_detect": (
            "hystart_detect",
            lambda v: {"both": "3", "ack_train": "1", "delay": "2", "none": "0"}.get(str(v), "?"),
        ),
        "hystart_low_window": ("hystart_low_window", lambda v: str(int(v))),
        "hystart_ack_delta_us": ("hystart_ack_delta_us", lambda v: str(int(v))),
        "fast_convergence": ("fast_convergence", _bool01),
        "tcp_friendliness": ("tcp_friendliness", _bool01),
        # beta = β·1024 (BICTCP_BETA_SCALE); C = bic_scale·10/1024 (tcp_cubic.c module doc).
        "beta": ("beta", lambda v: str(round(float(v) * 1024))),
        "c": ("bic_scale", lambda v: str(round(float(v) * 1024 / 10))),
    },
}
# Parameters that describe Linux's own rule and are accepted with these values only.
CCA_FIXED_PARAMS: dict[str, dict[str, tuple[Any, ...]]] = {
    "reno": {"ssthresh_from": ("cwnd", "auto")},
    "cubic": {"ssthresh_from": ("cwnd", "auto")},
}


class KnobRefusal(ValueError):
    """A scenario setting the kernel engine cannot honour (message names it and says why)."""


def _module_param(cca: str, param: str) -> str | None:
    try:
        return Path(f"/sys/module/tcp_{cca}/parameters/{param}").read_text().strip()
    except OSError:
        return None


def check_cca(flow: dict[str, Any], available: list[str], read_param: Any = None) -> str:
    """The kernel CCA name for *flow*, or KnobRefusal. *read_param(cca, name)* reads a module
    parameter (default: /sys/module/tcp_<cca>/parameters/<name>)."""
    read_param = read_param or _module_param
    cca = flow.get("cca") or {"name": "cubic", "params": {}}
    name = cca.get("name", "cubic")
    if name not in available:
        raise KnobRefusal(
            f"flow {flow['name']!r}: congestion control {name!r} is not available in the running "
            f"kernel (available: {', '.join(available) or 'none'}; "
            "/proc/sys/net/ipv4/tcp_available_congestion_control)"
        )
    for pname, value in (cca.get("params") or {}).items():
        fixed = CCA_FIXED_PARAMS.get(name, {}).get(pname)
        if fixed is not None:
            if value not in fixed:
                raise KnobRefusal(
                    f"flow {flow['name']!r}: {name} parameter {pname} = {value!r} cannot be "
                    f"honoured by Linux (its rule is {fixed[0]!r})"
                )
            continue
        spec = CCA_MODULE_PARAMS.get(name, {}).get(pname)
        if spec is None:
            raise KnobRefusal(
                f"flow {flow['name']!r}: {name} parameter {pname!r} has no counterpart in the "
                "running kernel"
            )
        module_param, conv = spec
        path = f"/sys/module/tcp_{name}/parameters/{module_param}"
        current = read_param(name, module_param)
        want = conv(value)
        if current is None or current.upper() in ("Y", "N"):
            current = {"Y": "1", "N": "0"}.get((current or "").upper(), current)
        if current != want:
            raise KnobRefusal(
                f"flow {flow['name']!r}: {name} parameter {pname} = {value!r} differs from the "
                f"running kernel's {path} = {current} (module parameters are global to the host; "
                "the kernel engine does not change them)"
            )
    return name


@dataclass
class KernelFlowSettings:
    """How one flow's knobs are realised on the kernel."""

    #: sysctls for the sender's / receiver's namespace
    sender_sysctls: dict[str, str] = field(default_factory=dict)
    receiver_sysctls: dict[str, str] = field(default_factory=dict)
    #: ``ip route`` attributes on the sender's route to the receiver
    sender_route: dict[str, str] = field(default_factory=dict)
    #: ``ip route`` attributes on the receiver's route to the sender
    receiver_route: dict[str, str] = field(default_factory=dict)
    #: extra iperf3 client options
    iperf_args: list[str] = field(default_factory=list)
    #: knobs honoured and how, for the run's record
    applied: dict[str, str] = field(default_factory=dict)


def _smss(mtu: int, knobs: dict[str, Any]) -> int:
    mss = int(knobs.get("mss") or 0) or (mtu - 40)
    ts = knobs.get("timestamps", True)
    return mss - (12 if ts else 0)


def _iw_segments(iw: Any, smss: int) -> int:
    if isinstance(iw, int):
        return max(1, iw)
    if iw == "rfc3390":  # RFC 3390 §1
        return min(4 * smss, max(2 * smss, 4380)) // smss
    if iw == "rfc6928":  # RFC 6928 §2
        return min(10 * smss, max(2 * smss, 14600)) // smss
    raise KnobRefusal(f"initial_window {iw!r} is not understood")


def kernel_plan_for_flow(flow: dict[str, Any], mtu: int) -> KernelFlowSettings:
    """Kernel settings for a TCP flow's knobs, or KnobRefusal naming the first it cannot honour.

    Knobs absent from the flow mean "the running kernel's behaviour". Knobs present are either
    set (sysctl of the sender's or receiver's namespace, a route attribute, an iperf3 option) or,
    when Linux has no setting for them, accepted only if equal to :func:`linux6_tcp_knobs`.
    """
    knobs = dict(flow.get("tcp") or {})
    recv = flow.get("receiver_tcp")
    linux = linux6_tcp_knobs(mtu)
    out = KernelFlowSettings()
    who = f"flow {flow['name']!r}"

    def refuse(knob: str, why: str) -> KnobRefusal:
        return KnobRefusal(f"{who}: tcp.{knob} = {knobs.get(knob)!r}: {why}")

    if recv is not None and recv != knobs:
        raise KnobRefusal(
            f"{who}: receiver_tcp differs from tcp; the kernel engine applies one set of knobs "
            "to both ends"
        )
    for knob, value in knobs.items():
        if knob == "mss":
            if value:
                out.iperf_args += ["-M", str(int(value))]
                out.applied[knob] = f"iperf3 -M {int(value)} (TCP_MAXSEG)"
        elif knob == "initial_window":
            n = _iw_segments(value, _smss(mtu, knobs))
            out.sender_route["initcwnd"] = str(n)
            out.applied[knob] = f"route initcwnd {n}"
        elif knob == "initial_ssthresh":
            if value is not None:
                raise refuse(
                    knob,
                    "Linux has no per-connection initial ssthresh (the route metric is ignored "
                    "while tcp_no_ssthresh_metrics_save = 1)",
                )
        elif knob in ("sndbuf", "rcvbuf", "rcvbuf_autotune_max"):
            continue  # below, together
        elif knob in ("timestamps", "sack", "dsack", "window_scaling"):
            v = "1" if value else "0"
            name = f"net.ipv4.tcp_{knob}"
            out.sender_sysctls[name] = v
            out.receiver_sysctls[name] = v
            out.applied[knob] = f"{name}={v} (both ends)"
        elif knob == "min_rto":
            out.sender_sysctls["net.ipv4.tcp_rto_min_us"] = str(int(value) // 1000)
            out.applied[knob] = f"net.ipv4.tcp_rto_min_us={int(value) // 1000}"
        elif knob == "max_rto":
            if _sysctl("net.ipv4.tcp_rto_max_ms") is None:
                if value != linux[knob]:
                    raise refuse(knob, f"this kernel's maximum RTO is fixed at {linux[knob]} ns")
            else:
                out.sender_sysctls["net.ipv4.tcp_rto_max_ms"] = str(int(value) // MS)
                out.applied[knob] = f"net.ipv4.tcp_rto_max_ms={int(value) // MS}"
        elif knob == "dupthresh":
            out.sender_sysctls["net.ipv4.tcp_reordering"] = str(int(value))
            out.applied[knob] = f"net.ipv4.tcp_reordering={int(value)}"
        elif knob == "syn_retries":
            out.sender_sysctls["net.ipv4.tcp_syn_retries"] = str(int(value))
            out.applied[knob] = f"net.ipv4.tcp_syn_retries={int(value)}"
        elif knob == "delayed_ack":
            if not value:
                out.receiver_route["quickack"] = "1"
                out.applied[knob] = "receiver route quickack 1"
        elif knob == "recovery":
            if value == "newreno" and knobs.get("sack", True):
                raise refuse(knob, "Linux uses SACK recovery whenever SACK is negotiated")
        elif knob == "pacing":
            if value and (flow.get("cca") or {}).get("name") != "bbr":
                raise refuse(knob, "Linux paces only with the fq qdisc (not available) or BBR")
        elif knob in KERNEL_REFUSALS:
            if value:  # 0 = an ideal host, which is what the engine runs
                raise refuse(knob, KERNEL_REFUSALS[knob])
        elif knob in linux:
            if value != linux[knob]:
                raise refuse(
                    knob,
                    f"Linux has no setting for it; its behaviour is {linux[knob]!r} "
                    "(tcplab.kernel.linux.linux6_tcp_knobs)",
                )
        else:
            raise refuse(knob, "the kernel engine does not know how to apply this knob")
    snd, rcv = knobs.get("sndbuf"), knobs.get("rcvbuf")
    autotune = knobs.get("rcvbuf_autotune_max")
    if autotune is not None:
        # An autotuned receiver (the linux-6 personality): rcvbuf is the initial window and
        # rcvbuf_autotune_max the largest; set as the namespaces' autotuning limits, no -w: the
        # initial buffer at the measured window/buffer ratio (rcvbuf_buffer), the largest at
        # twice the window (tcp_adv_win_scale = 1, ip-sysctl; linux-6.toml's ceiling).
        rcv = int(rcv if rcv is not None else linux["rcvbuf"])
        autotune = int(autotune)
        if autotune < rcv:
            raise refuse(
                "rcvbuf_autotune_max", f"is below tcp.rcvbuf = {rcv} (autotuning only grows)"
            )
        rmem1 = rcvbuf_buffer(rcv)
        out.receiver_sysctls["net.ipv4.tcp_rmem"] = f"4096 {rmem1} {2 * autotune}"
        out.applied["rcvbuf/rcvbuf_autotune_max"] = (
            f"net.ipv4.tcp_rmem = 4096 {rmem1} {2 * autotune} (receiver; autotuning on)"
        )
        if snd is not None:
            out.sender_sysctls["net.ipv4.tcp_wmem"] = f"4096 16384 {int(snd)}"
            out.applied["sndbuf"] = f"net.ipv4.tcp_wmem = 4096 16384 {int(snd)} (sender)"
    elif snd is not None or rcv is not None:
        if snd is not None and rcv is not None and snd != rcv:
            raise KnobRefusal(
                f"{who}: tcp.sndbuf = {snd} and tcp.rcvbuf = {rcv} differ; iperf3 -w sets both "
                "socket buffers to one value"
            )
        w = int(snd if snd is not None else rcv)
        cap = int(_sysctl("net.core.wmem_max", "0") or 0)
        cap = min(cap, int(_sysctl("net.core.rmem_max", "0") or 0))
        if w <= cap:
            out.iperf_args += ["-w", str(w)]
            out.applied["sndbuf/rcvbuf"] = f"iperf3 -w {w} (SO_SNDBUF/SO_RCVBUF, both ends)"
        else:
            # net.core.{r,w}mem_max caps SO_SNDBUF/SO_RCVBUF and is global to the host (it
            # cannot be set from a namespace, and the engine leaves the host alone). Instead the
            # namespaces' autotuning limits are raised, so the buffers may grow to the window:
            # Linux charges about twice the payload to a buffer (SO_SNDBUF doubling, ip-sysctl
            # tcp_adv_win_scale), hence 2·w.
            lim = 2 * w
            out.sender_sysctls["net.ipv4.tcp_wmem"] = f"4096 16384 {lim}"
            out.receiver_sysctls["net.ipv4.tcp_rmem"] = f"4096 131072 {lim}"
            out.applied["sndbuf/rcvbuf"] = (
                f"autotuning up to {lim} B (net.ipv4.tcp_wmem/tcp_rmem max; {w} B exceeds "
                f"net.core.wmem_max/rmem_max = {cap} B, which the engine does not change)"
            )
    return out


# Personalities the kernel engine runs: the running Linux itself.
LINUX_PERSONALITIES = {None, "", "linux", "linux-6", "linux6", "native", "kernel"}


def check_personality(flow: dict[str, Any], meta: dict[str, Any]) -> None:
    """Refuse OS personalities other than the running Linux."""
    names = set()
    for src in (flow, flow.get("tcp") or {}):
        if isinstance(src, dict) and src.get("personality") is not None:
            names.add(src.get("personality"))
    per_flow = (meta.get("personalities") or {}) if isinstance(meta, dict) else {}
    if isinstance(per_flow, dict) and flow["name"] in per_flow:
        names.add(per_flow[flow["name"]])
    if isinstance(meta, dict) and meta.get("personality") is not None:
        names.add(meta.get("personality"))
    for n in names:
        if n not in LINUX_PERSONALITIES:
            release = os.uname().release
            raise KnobRefusal(
                f"flow {flow['name']!r}: personality {n!r} cannot run on the kernel engine, which "
                f"runs this machine's Linux {release} (use --engine sim, or personality 'linux-6')"
            )


def iperf_time_arg(start_ns: int, stop_ns: int) -> int:
    """iperf3 -t takes whole seconds: enough to cover the flow; the engine stops it at stop_ns."""
    return max(1, math.ceil((stop_ns - start_ns) / S) + 1)


def kernel_catalog(base: Any = None) -> Any:
    """The simulator's catalog (knobs, CCAs with parameters) plus every CCA the running kernel
    offers (``bbr`` here), for loading scenarios that run on the kernel engine."""
    from ..catalog import default_catalog
    from ..engines import with_kernel_ccas

    return with_kernel_ccas(base if base is not None else default_catalog(), available_ccas())
