"""A short, fixed fuzzing campaign (the long one: ``python -m tests.serialization.fuzz``)."""

import pytest

from tests.serialization import fuzz


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzzed_checkpoints_are_loaded_or_refused_cleanly(seed):
    loaded, refused = fuzz.run(150, seed)
    assert refused > 0 and loaded + refused == 150
