"""glasstorch.utils.cpp_extension: building C++ extensions, as torch's on a CPU-only build.

``load`` compiles C++ sources with the system compiler into a Python extension module (or a
plain shared library) and imports it; ``CppExtension`` is the setuptools form. What differs
from torch: glasstorch has no ATen/libtorch, so there are no ``torch/extension.h`` headers to
include (``include_paths()`` is empty); extensions written against the Python C API (or any
library of their own) build and run, extensions that include torch's headers fail to build
with the compiler's error, as torch does for any broken extension. Built modules are cached
under ``~/.cache/glasstorch_extensions`` (``TORCH_EXTENSIONS_DIR`` overrides it), apart from
torch's cache, whose modules link against libtorch. CUDA sources raise torch's CPU-only error.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig

__all__ = ["CUDA_HOME", "ROCM_HOME", "IS_HIP_EXTENSION", "IS_WINDOWS", "IS_MACOS",
           "CppExtension", "get_default_build_root", "include_paths", "is_ninja_available",
           "library_paths", "load", "verify_ninja_availability"]

CUDA_HOME = None  # no CUDA toolkit is used: glasstorch runs on the CPU
ROCM_HOME = None
IS_HIP_EXTENSION = False
IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform.startswith("darwin")

_CUDA_SUFFIXES = (".cu", ".cuh")


def get_default_build_root() -> str:
    """Where ``load`` builds when neither ``build_directory`` nor ``TORCH_EXTENSIONS_DIR``
    says."""
    return os.path.realpath(os.path.expanduser("~/.cache/glasstorch_extensions"))


def include_paths(device_type="cpu"):
    """Header folders an extension gets: none, glasstorch ships no C++ headers."""
    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"unsupported device_type {device_type!r}")
    if device_type == "cuda":
        _no_cuda()
    return []


def library_paths(device_type="cpu"):
    """Library folders an extension links against: none (there is no libtorch)."""
    return include_paths(device_type)


def is_ninja_available() -> bool:
    """Whether the ``ninja`` build tool is on PATH."""
    return shutil.which("ninja") is not None


def verify_ninja_availability():
    """Raise torch's RuntimeError when ``ninja`` is not on PATH."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get "
                           "it)")


def _no_cuda():
    raise OSError("CUDA_HOME environment variable is not set. Please set it to your CUDA "
                  "install root.")


def _compiler():
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"


def CppExtension(name, sources, *args, **kwargs):
    """A ``setuptools.Extension`` for C++ sources (``language="c++"``)."""
    from setuptools import Extension
    kwargs["language"] = "c++"
    kwargs["include_dirs"] = [*kwargs.get("include_dirs", []), *include_paths()]
    return Extension(name, sources, *args, **kwargs)


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_ldflags=None,
         extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
         is_python_module=True, is_standalone=False, keep_intermediates=True):
    """Compile ``sources`` into ``<build_directory>/<name>.so`` (again only when the sources
    or flags changed) and import it as module ``name``; with ``is_python_module=False`` load
    it into the process as a shared library (returns None), with ``is_standalone`` build an
    executable and return its path."""
    sources = [sources] if isinstance(sources, str) else list(sources)
    if with_cuda or any(s.endswith(_CUDA_SUFFIXES) for s in sources):
        _no_cuda()
    verify_ninja_availability()
    build_directory = build_directory or os.path.join(
        os.environ.get("TORCH_EXTENSIONS_DIR", get_default_build_root()),
        f"py{sys.version_info.major}{sys.version_info.minor}_cpu", name)
    os.makedirs(build_directory, exist_ok=True)
    suffix = "" if is_standalone else ".so"
    target = os.path.join(build_directory, name + suffix)
    cmd = [_compiler(), *([] if is_standalone else ["-shared", "-fPIC"]), "-O2", "-std=c++17",
           f"-DTORCH_EXTENSION_NAME={name}", "-I" + sysconfig.get_paths()["include"],
           *("-I" + p for p in extra_include_paths or []), *(extra_cflags or []),
           *(os.path.abspath(s) for s in sources), "-o", target, *(extra_ldflags or [])]
    digest = hashlib.sha256(" ".join(cmd).encode())
    for source in sources:
        with open(source, "rb") as f:
            digest.update(f.read())
    stamp = target + ".sha256"
    built = os.path.exists(target) and os.path.exists(stamp) and \
        open(stamp).read() == digest.hexdigest()
    if not built:
        if verbose:
            print(f"Building extension module {name}...\n{' '.join(cmd)}", file=sys.stderr)
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=build_directory)
        if proc.returncode != 0:
            raise RuntimeError(f"Error building extension '{name}': {proc.stdout}{proc.stderr}")
        with open(stamp, "w") as f:
            f.write(digest.hexdigest())
    elif verbose:
        print(f"No modifications detected for re-loaded extension module {name}, skipping "
              "build step...", file=sys.stderr)
    if is_standalone:
        return target
    if not is_python_module:
        import ctypes
        ctypes.CDLL(target, mode=ctypes.RTLD_GLOBAL)
        return None
    spec = importlib.util.spec_from_file_location(name, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module
