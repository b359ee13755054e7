"""Per-trial seeds (docs/design.md §2).

Trial ``k`` (0-based) of a run whose scenario seed is ``S`` uses

    trial_seed(S, k) = int.from_bytes(sha256(f"tcplab-trial:{S}:{k}".encode("ascii"))[:8], "big")
                       & (2**63 - 1)

i.e. the first 8 bytes of the SHA-256 digest as a big-endian unsigned integer, with the top bit
cleared so the value is also a valid (non-negative) TOML and JSON integer and fits an ``i64``. The
formula is part of the reproducibility contract: never change it (a changed formula changes every
published result). It depends only on ``S`` and ``k``, so adding trials does not change the seeds
of the earlier ones, and trial ``k`` can be re-run alone.
"""

from __future__ import annotations

import hashlib

__all__ = ["MAX_SEED", "trial_seed", "trial_seeds"]

#: Largest scenario seed accepted (seeds are TOML integers, i.e. signed 64-bit).
MAX_SEED = 2**63 - 1


def trial_seed(seed: int, trial: int) -> int:
    """The seed of trial *trial* (0-based) of a run with scenario seed *seed*."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"scenario seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise ValueError(f"trial index must be a non-negative integer, got {trial!r}")
    digest = hashlib.sha256(f"tcplab-trial:{seed}:{trial}".encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def trial_seeds(seed: int, trials: int) -> list[int]:
    """Seeds of trials 0 … *trials*−1."""
    return [trial_seed(seed, k) for k in range(trials)]
