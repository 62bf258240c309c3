"""Smoke tests run by default for installed libraries; the cases a library's module lists in
``BLOCKED`` (stopped by a capability glasstorch still lacks) run only when asked
(``GLASSTORCH_ECOSYSTEM=1``). Selected libraries' runs start together."""

import os

import pytest

from . import _harness


def _blocked(item):
    """Why ``item`` is skipped by default (None: it runs)."""
    blocked = getattr(getattr(item, "module", None), "BLOCKED", None)
    if isinstance(blocked, str):
        return blocked
    callspec = getattr(item, "callspec", None)
    if blocked and callspec is not None:
        return blocked.get(callspec.params.get("name"))
    return None


def _ecosystem_items(items):
    return [i for i in items if str(i.fspath).startswith(_harness.HERE)]


def pytest_collection_modifyitems(config, items):
    if os.environ.get("GLASSTORCH_ECOSYSTEM") == "1":
        return
    for item in _ecosystem_items(items):
        reason = _blocked(item)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"{reason} (runs with "
                                                    f"GLASSTORCH_ECOSYSTEM=1)"))


def pytest_collection_finish(session):
    """Each ecosystem test module names its library (``LIB``) and what it imports
    (``MODULE``); the first ecosystem test starts the runs of every installed library with
    a case left to run, in collection order."""
    libs = []
    for item in _ecosystem_items(session.items):
        if item.get_closest_marker("skip") is not None:
            continue
        module = item.module
        lib, dep = getattr(module, "LIB", None), getattr(module, "MODULE", None)
        if lib and dep and lib not in libs and _harness.installed(dep):
            libs.append(lib)
    _harness.SELECTED[:] = libs
