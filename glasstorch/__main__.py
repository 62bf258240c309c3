"""Command line: ``python -m glasstorch run script.py [args...]``, ``provide-torch-metadata``
and ``--version``.

``run`` executes an unmodified PyTorch script with ``import torch`` (and ``torchvision``) served
by glasstorch, exactly as ``python script.py [args...]`` would run it: ``sys.argv`` is the
script and its arguments, the script's folder is first on ``sys.path``, and it runs as
``__main__``. ``run -m module [args...]`` does the same for a module, like ``python -m``.

``provide-torch-metadata [--torchvision] [--target DIR]`` writes metadata-only ``torch`` (and
``torchvision``) distributions into site-packages, so ``pip install`` of a library that
depends on torch (transformers, timm...) counts torch as installed instead of downloading it;
``--remove`` takes them out again (``pip uninstall torch`` works too). It refuses to write where
a real torch is installed.
"""

import argparse
import os
import runpy
import sys

_USAGE = """\
usage: python -m glasstorch run script.py [args...]
       python -m glasstorch run -m module [args...]
       python -m glasstorch provide-torch-metadata [--torchvision] [--remove] [--target DIR]
       python -m glasstorch --version"""


def _version():
    import numpy

    from glasstorch import version
    return (f"glasstorch {version.glasstorch_version} (serves torch {version.__version__} "
            f"and torchvision {version.torchvision_version}; numpy {numpy.__version__}; "
            f"Python {sys.version.split()[0]})")


def _run(argv):
    from glasstorch._compat import install_as_torch

    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE)
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m glasstorch run -m: a module name is required", file=sys.stderr)
            return 2
        install_as_torch()
        sys.argv = [argv[1], *argv[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"python -m glasstorch run: can't open file {script!r}: no such file",
              file=sys.stderr)
        return 2
    install_as_torch()
    sys.argv = [script, *argv[1:]]
    # like `python script.py`: the script's folder, not the current one, comes first
    script_dir = os.path.dirname(os.path.abspath(script))
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    runpy.run_path(script, run_name="__main__")
    return 0


def _provide_metadata(argv):
    from glasstorch import _compat

    parser = argparse.ArgumentParser(
        prog="python -m glasstorch provide-torch-metadata",
        description="Write metadata-only torch (and torchvision) distributions into "
                    "site-packages, so pip treats them as installed and does not download "
                    "them. Nothing importable is written: run programs with "
                    "`python -m glasstorch run`.")
    parser.add_argument("--torchvision", action="store_true",
                        help="also provide torchvision (glasstorch.vision serves it)")
    parser.add_argument("--remove", action="store_true",
                        help="remove the torch and torchvision metadata this command wrote")
    parser.add_argument("--target", metavar="DIR",
                        help="the folder to write to (default: this environment's "
                             "site-packages)")
    args = parser.parse_args(argv)
    try:
        if args.remove:
            removed = _compat._remove_metadata(args.target)
            for path in removed:
                print(f"removed {path}")
            if not removed:
                print(f"no glasstorch-provided torch metadata in "
                      f"{_compat._site_packages(args.target)}")
            return 0
        written = _compat._write_metadata(args.target, torchvision=args.torchvision)
    except (RuntimeError, OSError) as exc:
        print(f"python -m glasstorch provide-torch-metadata: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    print("pip now counts these as installed. They hold no code: run programs with "
          "`python -m glasstorch run script.py`, which serves `import torch`.")
    return 0


def main(argv=None):
    """Entry point of ``python -m glasstorch``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "run":
        return _run(argv[1:])
    if argv and argv[0] == "provide-torch-metadata":
        return _provide_metadata(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m glasstorch", usage=_USAGE,
        description="glasstorch: the PyTorch programming model in readable Python on NumPy.")
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    args = parser.parse_args(argv)
    if args.version:
        print(_version())
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
