"""SLAC IEPM, Coccetti & Cottrell, "TCP stacks on production links: Fast TCP and Reno TCP single
streams" (April 2003).

Experiments S1–S2 (seed-experiments.md): SLAC → CERN, RTT ≈ 207 ms, iperf windows 8/16/32 MB,
20-minute runs reported every 5 s. Scenarios in ``scenarios/studies/slac2003/``.
"""

from .core import Study

STUDY = Study(
    name="slac2003",
    title="SLAC IEPM 2003: FAST TCP and Reno single streams on a production path",
    citation=(
        'F. Coccetti, R. L. Cottrell, "TCP stacks on production links: Fast TCP and Reno TCP '
        'single streams", SLAC IEPM, April 2003.'
    ),
    testbed=(
        "SLAC → CERN production path, RTT ≈ 207 ms, MTU 1500, txqueuelen 100; Linux senders; "
        "iperf with -w 8, 16 and 32 MB; throughput every 5 s over 20-minute measurements. "
        "The bottleneck is not stated."
    ),
    ids=("S1", "S2"),
)
