"""Run pytest in this process under real torch or under glasstorch, recording every outcome.

    python tests/ecosystem/_pytest_launch.py --backend torch|glasstorch --record OUT.jsonl \
        [--only NODEIDS.txt] -- [pytest args...]

Under glasstorch ``install_as_torch()`` runs before pytest starts, so the library's own tests
and conftest files ``import torch`` and get glasstorch. The plugin writes one JSON line per test
(node id, outcome, crash message, the failure text's tail) and per collection error.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)


class OutcomeRecorder:
    """pytest plugin: per-test outcome, merged over setup/call/teardown."""

    def __init__(self, path, only=None):
        self.path = path
        self.only = only
        self.tests = {}
        self.collection_errors = []
        self.collected = []

    @staticmethod
    def _describe(report):
        crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
        text = getattr(report, "longreprtext", "") or ""
        if crash is not None:
            message = crash.message
        elif isinstance(report.longrepr, tuple):  # skips: (file, line, reason)
            message = str(report.longrepr[2])
        else:
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            message = lines[-1] if lines else ""
        return message, text[-4000:]

    def pytest_runtest_logreport(self, report):
        """Merge the phases: an error in setup/teardown, a failure in call, else pass/skip."""
        entry = self.tests.setdefault(report.nodeid, {"outcome": "passed", "message": "",
                                                      "text": "", "seconds": 0.0})
        entry["seconds"] += getattr(report, "duration", 0.0)
        if report.passed:
            if hasattr(report, "wasxfail"):
                entry["outcome"] = "xpassed"
            return
        message, text = self._describe(report)
        if report.skipped:
            if entry["outcome"] == "passed":
                entry["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
                entry["message"] = message
            return
        # failed
        if entry["outcome"] in ("failed", "error"):
            return
        entry["outcome"] = "failed" if report.when == "call" else "error"
        entry["message"], entry["text"] = message, text

    def pytest_collectreport(self, report):
        """A module that failed to import (or to collect) is one collection error."""
        if report.failed:
            message, text = self._describe(report)
            self.collection_errors.append({"nodeid": report.nodeid, "message": message,
                                           "text": text})

    def pytest_collection_modifyitems(self, session, config, items):
        """Keep only the chosen node ids. Filtering here rather than naming the ids on the
        command line: pytest aborts the whole session when one named id is not found, and a
        parametrized id may well differ (or be missing) under glasstorch."""
        if self.only is None:
            return
        keep = [item for item in items if item.nodeid in self.only]
        dropped = [item for item in items if item.nodeid not in self.only]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep

    def pytest_collection_finish(self, session):
        """Remember the collected node ids (what ``--collect-only`` reports)."""
        self.collected = [item.nodeid for item in session.items]

    def pytest_sessionfinish(self, session):
        """Write the records (also on an interrupted session)."""
        with open(self.path, "w") as f:
            for nodeid, entry in self.tests.items():
                f.write(json.dumps({"nodeid": nodeid, **entry}) + "\n")
            for entry in self.collection_errors:
                f.write(json.dumps({"outcome": "collection_error", **entry}) + "\n")
            for nodeid in self.collected:
                f.write(json.dumps({"outcome": "collected", "nodeid": nodeid}) + "\n")


def main(argv=None):
    """Parse our options, prepare the backend, hand the rest to pytest."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--" in argv:
        split = argv.index("--")
        ours, pytest_args = argv[:split], argv[split + 1:]
    else:
        ours, pytest_args = argv, []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["torch", "glasstorch"], required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--only", help="a file of node ids, one a line: run just those")
    args = parser.parse_args(ours)
    only = None
    if args.only:
        with open(args.only) as f:
            only = {line.rstrip("\n") for line in f if line.strip()}

    # our own folder must not shadow the library's modules
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    sys.path.insert(0, os.getcwd())  # like `python -m pytest`: the checkout is importable
    if args.backend == "glasstorch":
        from glasstorch._compat import install_as_torch
        install_as_torch()
    else:
        sys.path.append(TESTS)
        from ecosystem._runner import _prepare_oracle_torchvision
        _prepare_oracle_torchvision()
        sys.path.remove(TESTS)
    import pytest

    # some conftests read sys.argv (torchinfo checks for --overwrite / --no-output)
    sys.argv = ["pytest", *pytest_args]
    return int(pytest.main(pytest_args, plugins=[OutcomeRecorder(args.record, only)]))


if __name__ == "__main__":
    sys.exit(main())
