"""Where a distributed checkpoint lives: a folder of per-rank files and an index."""

from __future__ import annotations

import os
import pickle

__all__ = ["FileSystemWriter", "FileSystemReader"]

_INDEX = ".metadata"


class FileSystemWriter:
    """Write a checkpoint into the folder ``path`` (created if missing)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False,
                 overwrite=True):
        self.path = os.fspath(path)
        self.sync_files, self.overwrite = sync_files, overwrite

    def _write(self, name, obj):
        os.makedirs(self.path, exist_ok=True)
        target = os.path.join(self.path, name)
        tmp = target + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, target)       # readers never see half a file


class FileSystemReader:
    """Read a checkpoint from the folder ``path``."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._files = {}

    def _read(self, name):
        if name not in self._files:
            target = os.path.join(self.path, name)
            if not os.path.exists(target):
                raise FileNotFoundError(f"distributed checkpoint: {target} does not exist")
            with open(target, "rb") as f:
                self._files[name] = pickle.load(f)
        return self._files[name]
