import hashlib

import pytest

from tcplab.seeds import MAX_SEED, trial_seed, trial_seeds


def test_trial_seed_is_the_documented_hash():
    for seed, k in ((1, 0), (1, 1), (42, 7), (MAX_SEED, 3)):
        digest = hashlib.sha256(f"tcplab-trial:{seed}:{k}".encode()).digest()
        assert trial_seed(seed, k) == int.from_bytes(digest[:8], "big") & (2**63 - 1)


def test_trial_seeds_are_stable_distinct_and_in_range():
    seeds = trial_seeds(1, 100)
    assert len(set(seeds)) == 100
    assert all(0 <= s <= MAX_SEED for s in seeds)
    # adding trials does not change earlier ones
    assert trial_seeds(1, 10) == seeds[:10]
    assert trial_seeds(2, 10) != seeds[:10]


@pytest.mark.parametrize(("seed", "k"), [(-1, 0), (1, -1), (True, 0), (1.5, 0), (2**63, 0)])
def test_trial_seed_rejects_bad_input(seed, k):
    with pytest.raises(ValueError):
        trial_seed(seed, k)
