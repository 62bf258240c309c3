"""Grad-mode switches: context managers, decorators, thread-locality, exception safety."""

import threading

import pytest

import glasstorch as gt


def test_no_grad_and_enable_grad_nest_and_restore():
    assert gt.is_grad_enabled()
    with gt.no_grad():
        assert not gt.is_grad_enabled()
        with gt.enable_grad():
            assert gt.is_grad_enabled()
        assert not gt.is_grad_enabled()
    assert gt.is_grad_enabled()


def test_restored_after_exception():
    with pytest.raises(ValueError):
        with gt.no_grad():
            raise ValueError
    assert gt.is_grad_enabled()


def test_decorators_and_generators():
    @gt.no_grad()
    def f():
        return gt.is_grad_enabled()

    @gt.no_grad()
    def gen():
        yield gt.is_grad_enabled()
        yield gt.is_grad_enabled()

    assert f() is False and gt.is_grad_enabled()
    assert list(gen()) == [False, False] and gt.is_grad_enabled()


def test_set_grad_enabled_function_and_context():
    gt.set_grad_enabled(False)
    assert not gt.is_grad_enabled()
    gt.set_grad_enabled(True)
    with gt.set_grad_enabled(False):
        assert not gt.is_grad_enabled()
    assert gt.is_grad_enabled()


def test_inference_mode():
    with gt.inference_mode():
        assert gt.is_inference_mode_enabled() and not gt.is_grad_enabled()
    with gt.inference_mode(False):
        assert not gt.is_inference_mode_enabled() and gt.is_grad_enabled()
    assert not gt.is_inference_mode_enabled()


def test_thread_local():
    seen = []
    with gt.no_grad():
        t = threading.Thread(target=lambda: seen.append(gt.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]
