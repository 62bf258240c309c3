"""Calls that torch refuses and glasstorch used to answer with a number (issue: silent
results). Each runs in both libraries: same exception type, same message gist."""

import math

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

CASES = {
    "bce_logits_long": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(3), lib.tensor([0, 1, 1])),
    "bce_logits_long_2d": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(2, 2), lib.tensor([[0, 1], [1, 0]])),
    "bce_logits_int32": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(2), lib.tensor([0, 1], dtype=lib.int32)),
    "bce_logits_bool": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(3), lib.tensor([True, False, True])),
    "kl_div_long_target": lambda lib: lib.nn.functional.kl_div(
        lib.zeros(3), lib.tensor([0, 1, 1]), reduction="sum"),
    "kl_div_long_input": lambda lib: lib.nn.functional.kl_div(
        lib.tensor([0, 1, 1]), lib.zeros(3), reduction="sum"),
    "linspace_float_steps": lambda lib: lib.linspace(0, 1, 2.5),
    "linspace_bool_steps": lambda lib: lib.linspace(0, 1, True),
    "logspace_float_steps": lambda lib: lib.logspace(0, 1, 2.5),
    "logspace_negative_steps": lambda lib: lib.logspace(0, 1, -1),
    "arange_nan": lambda lib: lib.arange(0, math.nan),
    "arange_inf": lambda lib: lib.arange(0, math.inf),
    "arange_wrong_sign": lambda lib: lib.arange(0, 1, -1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_like_torch(name):
    with pytest.raises(Exception) as theirs:
        CASES[name](torch)
    with pytest.raises(Exception) as ours:
        CASES[name](gt)
    assert type(ours.value) is type(theirs.value)
    first_word = str(theirs.value).split()[0]  # names the function or the problem
    assert first_word in str(ours.value), (str(ours.value), str(theirs.value))


def test_valid_forms_still_work():
    assert gt.linspace(0, 1, gt.tensor(3)).tolist() == [0.0, 0.5, 1.0]
    loss = gt.nn.functional.binary_cross_entropy_with_logits(gt.zeros(2), gt.tensor([0., 1.]))
    assert abs(loss.item() - math.log(2)) < 1e-6
    assert gt.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]


ERRORS = {
    "huge_allocation": lambda lib: lib.empty(2 ** 40),
    "size_past_int64": lambda lib: lib.empty(2 ** 63),
    "storage_size_overflow": lambda lib: lib.zeros(2 ** 62, 4),
    "view_dtype_last_dim": lambda lib: lib.zeros(3).view(lib.int64),
    "view_dtype_stride": lambda lib: lib.zeros(3, 6, dtype=lib.uint8)[:, :4].view(lib.int32),
    "view_dtype_0d": lambda lib: lib.zeros(()).view(lib.float64),
    "index_add_1d": lambda lib: lib.zeros(3).index_add_(0, lib.tensor([5]), lib.ones(1)),
    "index_add_1d_negative": lambda lib: lib.zeros(3).index_add_(0, lib.tensor([-1]),
                                                                 lib.ones(1)),
    "index_add_2d": lambda lib: lib.zeros(3, 2).index_add_(0, lib.tensor([5]), lib.ones(1, 2)),
    "index_add_2d_alpha": lambda lib: lib.zeros(3, 2).index_add_(0, lib.tensor([5]),
                                                                 lib.ones(1, 2), alpha=2),
    "index_select": lambda lib: lib.zeros(3).index_select(0, lib.tensor([5])),
    "tensor_of_str_rows": lambda lib: lib.tensor(["a"]),
    "tensor_of_mixed": lambda lib: lib.tensor([1, "a"]),
    "view_negative": lambda lib: lib.zeros(6).view(-2, 3),
    "movedim_repeated_source": lambda lib: lib.zeros(2, 3).movedim((0, 0), (1, 0)),
    "movedim_repeated_destination": lambda lib: lib.zeros(2, 3).movedim((0, 1), (1, 1)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_type_and_message_like_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](gt)
    assert type(ours.value) is type(theirs.value)
    # torch's message (without its C++ location prefix) starts ours
    expected = str(theirs.value).split("\n")[0].split("] ")[-1].split(" (")[0]
    if "you tried to allocate" in expected:
        expected = expected.split("err == 0. ")[-1].split(" bytes")[0]
    assert str(ours.value).startswith(expected[:60]), (str(ours.value), expected)


def test_no_numpy_warning_escapes_where_torch_is_silent():
    import warnings
    t = gt.tensor([math.inf, -math.inf])
    # glasstorch's import-time filter, which pytest's collection-time catch_warnings drops:
    # what matters is that NumPy's warnings are raised from glasstorch's frames
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"glasstorch(\.|$)")
        for value in (t.sum(), t.mean(), t.nansum(), t.nanmean(), t.sum(0, keepdim=True)):
            assert math.isnan(value.item())
        gt.tensor([math.nan]).long()
        gt.nn.functional.batch_norm(gt.zeros(0, 3), gt.zeros(3), gt.ones(3), training=True)
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
