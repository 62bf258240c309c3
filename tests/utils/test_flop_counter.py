"""FlopCounterMode counts torch's flops, per module and aten op, forward and backward."""

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _counts(lib, run):
    from importlib import import_module
    mode = import_module(f"{lib.__name__}.utils.flop_counter").FlopCounterMode(display=False)
    with mode:
        run(lib)
    return mode.get_total_flops(), {k: {str(op).split(".")[-1]: v for op, v in d.items()}
                                    for k, d in mode.get_flop_counts().items()}


def _mlp(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4))
    m(lib.randn(2, 8)).sum().backward()


def _conv(lib):
    c = lib.nn.Conv2d(3, 5, 3)
    c(lib.randn(2, 3, 8, 8, requires_grad=True)).sum().backward()
    c(lib.randn(2, 3, 8, 8)).sum().backward()
    lib.nn.ConvTranspose2d(3, 4, 3, stride=2)(lib.randn(1, 3, 5, 5)).sum().backward()


def _products(lib):
    a = lib.randn(4, 5, 6, requires_grad=True) @ lib.randn(6, 7)
    lib.randn(5, 6) @ lib.randn(6, 7)
    lib.randn(6) @ lib.randn(6, 7)
    lib.randn(6, 7) @ lib.randn(7)
    lib.bmm(lib.randn(3, 2, 4), lib.randn(3, 4, 5))
    lib.randn(2, 3, 4, 5) @ lib.randn(2, 3, 5, 6)
    lib.nn.functional.linear(lib.randn(3, 4, 8), lib.randn(5, 8), lib.randn(5))
    lib.addmm(lib.randn(2, 3), lib.randn(2, 4), lib.randn(4, 3))
    a.sum().backward()


@pytest.mark.parametrize("run", [_mlp, _conv, _products])
def test_counts_match_torch(run):
    assert _counts(gt, run) == _counts(torch, run)


def test_table_and_display(capsys):
    from glasstorch.utils.flop_counter import FlopCounterMode
    with FlopCounterMode(depth=1):
        _mlp(gt)
    out = capsys.readouterr().out
    assert "Global" in out and "Sequential" in out and "Sequential.0" not in out
    global_line = next(line for line in out.splitlines() if line.startswith("Global"))
    assert global_line.split()[-1] == "100.00%"
