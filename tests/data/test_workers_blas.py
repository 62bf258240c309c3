"""While DataLoader workers run, the main process leaves them cores: OpenBLAS threads that spin
waiting for each other next to busy workers turn each matrix product into scheduler waits."""

import gc
import os

import pytest

import glasstorch as gt
from glasstorch.utils.data import DataLoader, TensorDataset

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads():
    return max((i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"), default=None)


def test_blas_threads_shared_with_workers_and_restored():
    cpus = os.cpu_count() or 1
    with threadpoolctl.threadpool_limits(cpus, user_api="blas"):
        before = _blas_threads()
        if before is None or before < 2:
            pytest.skip("needs a multi-threaded BLAS")
        loader = DataLoader(TensorDataset(gt.arange(16.)), batch_size=2, num_workers=2)
        first = iter(loader)
        next(first)
        second = iter(loader)  # two live iterators: the limit holds until both are gone
        next(second)
        assert _blas_threads() == max(1, cpus - 2)
        del first
        gc.collect()
        assert _blas_threads() == max(1, cpus - 2)
        del second
        gc.collect()
        assert _blas_threads() == before
