"""torch.utils.data.datapipes (the part accelerate uses) and graph_settings, against torch."""

import warnings

import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _shuffler(lib, **kw):
    from importlib import import_module
    it = import_module(f"{lib.__name__}.utils.data.datapipes.iter")
    return it.Shuffler(it.IterableWrapper(range(20)), **kw)


@pytest.mark.parametrize("buffer_size", [1, 4, 10000])
def test_shuffler_is_a_permutation_and_can_be_turned_off(buffer_size):
    for lib in (glasstorch, torch):
        lib.manual_seed(0)
        dp = _shuffler(lib, buffer_size=buffer_size)
        assert isinstance(dp, lib.utils.data.IterDataPipe)
        assert isinstance(dp, lib.utils.data.IterableDataset)
        first = list(dp)
        assert sorted(first) == list(range(20)) and len(dp) == 20
        assert (first == list(range(20))) == (buffer_size == 1)
        dp.set_seed(3)
        seeded = list(dp)
        assert list(dp.set_seed(3)) == seeded  # a given seed repeats the order
        lib.utils.data.graph_settings.apply_shuffle_settings(dp, shuffle=False)
        assert list(dp) == list(range(20))


def test_apply_shuffle_settings_adds_a_shuffler():
    for lib in (glasstorch, torch):
        from importlib import import_module
        it = import_module(f"{lib.__name__}.utils.data.datapipes.iter")
        wrapped = it.IterableWrapper(range(5))
        assert lib.utils.data.graph_settings.apply_shuffle_settings(wrapped) is wrapped
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            dp = lib.utils.data.graph_settings.apply_shuffle_settings(wrapped, shuffle=True)
        assert type(dp).__name__ == "ShufflerIterDataPipe"
        assert any("does not contain a `Shuffler`" in str(w.message) for w in seen)
        with pytest.raises(AssertionError, match="buffer_size should be larger than 0"):
            it.Shuffler(wrapped, buffer_size=0)
