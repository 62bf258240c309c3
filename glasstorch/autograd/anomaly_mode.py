"""Anomaly detection: name the backward node that produced NaN and show where its
forward ran (``detect_anomaly`` / ``set_detect_anomaly``)."""

from __future__ import annotations

import warnings

from .grad_mode import _Mode, _state

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection (``detect_anomaly``) is on."""
    return _state.anomaly_enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward results for NaN."""
    return _state.anomaly_check_nan


class detect_anomaly(_Mode):
    """Record each node's forward traceback and check every backward output for NaN.

    Slows everything down: use it to debug, not to train.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self._prev = (_state.anomaly_enabled, _state.anomaly_check_nan)
        _state.anomaly_enabled, _state.anomaly_check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _state.anomaly_enabled, _state.anomaly_check_nan = self._prev
        return False

    def clone(self):
        """A fresh context manager with the same setting (used when it decorates a function)."""
        return detect_anomaly.__new__(detect_anomaly)._init_quiet(self.check_nan)

    def _init_quiet(self, check_nan):
        self.check_nan = check_nan
        return self


class set_detect_anomaly(_Mode):
    """Turn anomaly detection on or off; as a context manager, restore it after."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (_state.anomaly_enabled, _state.anomaly_check_nan)
        self.mode, self.check_nan = bool(mode), check_nan
        _state.anomaly_enabled, _state.anomaly_check_nan = self.mode, check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.anomaly_enabled, _state.anomaly_check_nan = self._prev
        return False

    def clone(self):
        """A fresh context manager with the same setting (used when it decorates a function)."""
        return set_detect_anomaly(self.mode, self.check_nan)
