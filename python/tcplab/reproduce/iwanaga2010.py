"""Iwanaga, Kumazoe, Cavendish, Tsuru, Oie, "High-Speed TCP Performance Characterization under
Various Operating Systems" (Kyushu Institute of Technology, ~2010).

Experiments I1–I5 (seed-experiments.md): a 1 Gbit/s emulated path with 64-packet switch
buffers, Linux 2.6.25 servers (Reno, CUBIC, Compound) and Linux / Windows XP / Vista / 7 clients.
Scenarios in ``scenarios/studies/iwanaga2010/``.
"""

from .core import Study

STUDY = Study(
    name="iwanaga2010",
    title="Iwanaga et al. 2010: high-speed TCP under various operating systems",
    citation=(
        'S. Iwanaga, K. Kumazoe, D. Cavendish, M. Tsuru, Y. Oie, "High-Speed TCP Performance '
        'Characterization under Various Operating Systems", Kyushu Institute of Technology, '
        "~2010."
    ),
    testbed=(
        "Server 1, Server 2 — switch — Hurricane II emulator (RTT 0–230 ms) — switch — Client 1, "
        "Client 2; 1 Gbit/s, MTU 1500, switch buffers 64 packets. Servers Linux 2.6.25 (Reno, "
        "CUBIC, Compound TCP patch); clients Linux 2.6.29.4, Windows XP x64 SP2, Vista SP2, "
        "Windows 7, tuned for high performance; iperf and web100. Default RTT 180 ms; single "
        "flows 100 s, coexisting flows 300 s; averages over 5 trials."
    ),
    ids=("I1", "I2", "I3", "I4", "I5"),
)
