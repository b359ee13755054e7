"""Jansen & McGregor, "Measured comparative performance of TCP stacks" (WAND, 2005 poster).

Experiments J1–J4 (seed-experiments.md): slow start on a 2 Mbit/s, 200 ms path; bidirectional 5 %
random loss; reverse-path congestion; non-conformance seen in traces. Scenarios in
``scenarios/studies/jansen2005/``.
"""

from .core import Study

STUDY = Study(
    name="jansen2005",
    title="Jansen & McGregor 2005: measured comparative performance of TCP stacks",
    citation=(
        'S. Jansen, A. McGregor, "Measured comparative performance of TCP stacks", WAND '
        "Network Research Group, University of Waikato, 2005 (poster)."
    ),
    testbed=(
        "Emulation network, 100 Mbit/s Ethernet; FreeBSD Dummynet routers R1, R2 emulate delay, "
        "bandwidth and loss; sender — R1 — R2 — receiver; the same OS on both ends; socket "
        "buffers enlarged except in J1. Stacks: Linux 2.4.27, Linux 2.6.10, FreeBSD 5.2.1, "
        "FreeBSD 5.3, OpenBSD 3.5, Windows XP."
    ),
    ids=("J1", "J2", "J3", "J4"),
)
