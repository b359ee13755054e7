"""Packet captures of simulator runs (issue: packet traces).

A capture names a link (``"bottleneck"``: both directions, as ``tcpdump`` on an interface sees
them) or a host (``"host:NAME"``: every link direction touching the host). The engine records the
packets of trial 0 as they start serialisation onto those link directions and writes one standard
pcap file per capture (Ethernet/IPv4/TCP with all options, headers only: 128-byte snap length),
byte-identical for the same seed. Analyse them with ``tcplab trace`` or tcptrace/Wireshark.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import UserError


def capture_specs(config: dict[str, Any], names: Sequence[str], directory: Path) -> list[dict]:
    """The normalized-config ``capture`` entries (docs/design.md §3) for *names*, writing into
    *directory*; raises UserError for a name that is neither a link nor ``host:<host>``."""
    links = {ln["name"]: ln for ln in config["links"]}
    hosts = {n["name"] for n in config["nodes"] if n["kind"] == "host"}
    specs = []
    for name in names:
        if name.startswith("host:"):
            host = name[5:]
            if host not in hosts:
                hint = difflib.get_close_matches(host, sorted(hosts), n=1)
                raise UserError(
                    f"capture {name!r}: no host {host!r}"
                    + (f"; did you mean 'host:{hint[0]}'?" if hint else "")
                    + f" (hosts: {', '.join(sorted(hosts))})"
                )
            channels = [
                f"{ln['name']}.{d}"
                for ln in config["links"]
                if host in (ln["a"], ln["b"])
                for d in ("ab", "ba")
            ]
        elif name in links:
            channels = [f"{name}.ab", f"{name}.ba"]
        else:
            hint = difflib.get_close_matches(name, sorted(links), n=1)
            raise UserError(
                f"capture {name!r}: no link of that name"
                + (f"; did you mean {hint[0]!r}?" if hint else "")
                + " (links: "
                + ", ".join(sorted(links))
                + '; a host is written "host:NAME")'
            )
        safe = name.replace(":", "-").replace("/", "_")
        specs.append({"name": name, "channels": channels, "path": str(directory / f"{safe}.pcap")})
    return specs
