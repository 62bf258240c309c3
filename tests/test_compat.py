"""``python -m glasstorch run`` and ``install_as_torch``: unmodified PyTorch scripts on glasstorch.

install_as_torch changes the import system for the whole process, so everything that installs it
runs in a subprocess.
"""

import contextlib
import importlib.util
import io
import os
import re
import runpy
import subprocess
import sys
import textwrap
import warnings

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "compat_scripts")
NUMBER = re.compile(r"-?\d+\.?\d*(?:e-?\d+)?")


def run(args, cwd=None, timeout=120):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def run_glasstorch(*args, **kw):
    return run(["-m", "glasstorch", *args], **kw)


def run_check(code):
    """Run ``code`` after install_as_torch() in a fresh interpreter; fail with its output."""
    prelude = "from glasstorch._compat import install_as_torch\ninstall_as_torch()\n"
    proc = run(["-c", prelude + textwrap.dedent(code)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def assert_same_output(ours, theirs):
    """Line by line equal, numbers within float32 round-off."""
    ours, theirs = ours.strip().splitlines(), theirs.strip().splitlines()
    assert len(ours) == len(theirs), (ours, theirs)
    for a, b in zip(ours, theirs):
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b), (a, b)
        for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
            assert float(x) == pytest.approx(float(y), rel=2e-5, abs=2e-6), (a, b)


def test_version(capsys):
    # in-process: --version and the usage errors return before anything is installed
    from glasstorch.__main__ import main
    assert main(["--version"]) == 0
    import glasstorch
    out = capsys.readouterr().out
    assert out.startswith(f"glasstorch {glasstorch.version.glasstorch_version} ") and "numpy" in out


def test_usage_errors(tmp_path, capsys):
    from glasstorch.__main__ import main
    from glasstorch._compat import is_installed
    assert main(["run"]) == 2 and "usage" in capsys.readouterr().out
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    assert "nope.py" in capsys.readouterr().err
    assert main(["run", "-m"]) == 2
    assert main([]) == 2
    assert not is_installed()
    # and the real command line
    proc = run_glasstorch("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("glasstorch ")


def test_scripts_match_real_torch(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    scripts = [("tensor_autograd.py",), ("train_mlp.py", "--steps", "60", "--save",
                                          str(tmp_path / "gt.pt"))]
    ours = []
    for script, *args in scripts:
        proc = run_glasstorch("run", os.path.join(SCRIPTS, script), *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        ours.append(proc.stdout)
    assert "reloaded equal True" in ours[1]
    # the same scripts, unmodified, on the real torch: in this process (torch is not served
    # here), which saves starting another interpreter that imports torch
    for (script, *args), out in zip(scripts, ours):
        args = [a.replace("gt.pt", "torch.pt") for a in args]
        monkeypatch.setattr(sys, "argv", [script, *args])
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            runpy.run_path(os.path.join(SCRIPTS, script), run_name="__main__")
        assert_same_output(out, buf.getvalue())


def _losses(output):
    return [float(m) for m in re.findall(r"^iter \d+: loss (\S+)$", output, re.M)]


def test_unseen_style_gpt_reaches_torchs_loss(tmp_path, monkeypatch):
    # random init differs between the libraries, the data batches do not: the losses must
    # follow the same curve (within a few percent), not match digit for digit
    pytest.importorskip("torch")
    script = os.path.join(SCRIPTS, "nanogpt_char.py")
    proc = run_glasstorch("run", script, "40", str(tmp_path / "gt.pt"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "saved 29 tensors" in proc.stdout
    monkeypatch.setattr(sys, "argv", [script, "40"])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(script, run_name="__main__")
    ours, theirs = _losses(proc.stdout), _losses(buf.getvalue())
    assert len(ours) == len(theirs) == 3
    assert ours[-1] < 0.75 * ours[0] and theirs[-1] < 0.75 * theirs[0]
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=0.08), (ours, theirs)


def test_missing_torch_function_names_it():
    torch = pytest.importorskip("torch")
    import glasstorch
    missing = [n for n in sorted(dir(torch)) if not n.startswith("_") and n.islower()
               and callable(getattr(torch, n)) and not isinstance(getattr(torch, n), type)
               and not hasattr(glasstorch, n)]
    if not missing:
        pytest.skip("glasstorch implements every public torch function")
    name = missing[0]
    proc = run_glasstorch("run", os.path.join(SCRIPTS, "missing_symbol.py"), name)
    assert proc.returncode == 1
    assert "before 2.0" in proc.stdout
    assert f"NotImplementedInGlasstorch: torch.{name} is not implemented in glasstorch" \
        in proc.stderr


def test_served_modules_and_errors():
    vision = importlib.util.find_spec("glasstorch.vision") is not None
    run_check(f"""
        import sys
        import glasstorch
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch.optim import Adam
        from glasstorch._compat import (ImportNotInGlasstorch, ModuleNotInGlasstorch,
                                        NotImplementedInGlasstorch, is_installed)
        assert is_installed()
        assert torch is glasstorch and sys.modules["torch"] is glasstorch
        assert torch.__spec__.name == "glasstorch"  # glasstorch's own spec is untouched
        import glasstorch.nn, glasstorch.nn.functional, glasstorch.utils.data, glasstorch.optim
        assert nn is glasstorch.nn and F is glasstorch.nn.functional and torch.nn is nn
        assert DataLoader is glasstorch.utils.data.DataLoader
        assert Adam is glasstorch.optim.Adam
        assert sys.modules["torch.nn.functional"] is glasstorch.nn.functional
        assert isinstance(torch.zeros(2), torch.Tensor)

        # missing attributes: NotImplementedError AND AttributeError, naming the torch symbol
        assert not hasattr(torch, "no_such_fn") and not hasattr(F, "no_such_fn")
        assert getattr(torch.nn, "no_such_fn", 7) == 7
        for mod, qual in [(torch, "torch"), (F, "torch.nn.functional"),
                          (torch.utils.data, "torch.utils.data")]:
            try:
                mod.no_such_fn
            except NotImplementedError as e:
                assert isinstance(e, AttributeError) and type(e) is NotImplementedInGlasstorch
                assert str(e) == qual + ".no_such_fn is not implemented in glasstorch (yet)", e
            else:
                raise AssertionError("no error")
        try:
            torch.ones(2).no_such_method()
        except NotImplementedError as e:
            assert isinstance(e, AttributeError)
            assert "torch.Tensor.no_such_method is not implemented in glasstorch" in str(e)
        assert not hasattr(torch.ones(1), "no_such_method")
        # protocol probes stay plain AttributeErrors
        try:
            torch.nn.functional.__path__
        except AttributeError as e:
            assert not isinstance(e, NotImplementedError)

        # from-imports keep the message (Python would otherwise replace it)
        try:
            from torch.nn.functional import relu, no_such_fn
        except ImportError as e:
            assert type(e) is ImportNotInGlasstorch and isinstance(e, NotImplementedError)
            assert "torch.nn.functional.no_such_fn is not implemented" in str(e)
        else:
            raise AssertionError("no error")

        # missing submodules: NotImplementedError AND ModuleNotFoundError
        try:
            import torch.no_such_module.sub
        except ImportError as e:
            assert type(e) is ModuleNotInGlasstorch and isinstance(e, NotImplementedError)
            assert e.name == "torch.no_such_module"
            assert str(e).startswith("torch.no_such_module is not implemented in glasstorch")
        else:
            raise AssertionError("no error")
        if {vision}:
            import torchvision
            assert torchvision is sys.modules["glasstorch.vision"]
        else:
            try:
                import torchvision.transforms
            except ImportError as e:
                assert "glasstorch.vision" in str(e) and "not available" in str(e)
            else:
                raise AssertionError("no error")
        # installing twice is harmless
        from glasstorch._compat import install_as_torch, uninstall_as_torch
        assert install_as_torch() is glasstorch
        assert sum(type(f).__name__ == "_TorchFinder" for f in sys.meta_path) == 1
        uninstall_as_torch()
        assert not is_installed() and "torch" not in sys.modules
        assert "__getattr__" not in glasstorch.Tensor.__dict__
        print("ok")
    """)


def test_refuses_when_real_torch_is_loaded():
    pytest.importorskip("torch")
    from glasstorch._compat import install_as_torch, is_installed
    # torch is imported in this process: install_as_torch refuses before changing anything
    with pytest.raises(RuntimeError, match="already imported"):
        install_as_torch()
    assert not is_installed()


def test_run_sets_argv_path_and_exit_code(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 41\n")
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import sys
        import torch
        from helper import VALUE  # the script's folder is on sys.path
        print(sys.argv, __name__, VALUE + 1, torch.tensor([1, 2]).sum().item())
        sys.exit(3)
    """))
    proc = run_glasstorch("run", str(tmp_path / "main.py"), "--flag", "x")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == f"[{str(tmp_path / 'main.py')!r}, '--flag', 'x'] __main__ 42 3"


def test_run_module(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(textwrap.dedent("""
        import sys
        import torch.nn as nn
        print(__name__, sys.argv[1:], type(nn.Linear(2, 3)).__module__)
    """))
    proc = run_glasstorch("run", "-m", "mypkg.train", "--lr", "1", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "__main__ ['--lr', '1'] glasstorch.nn.modules.linear"


def test_tensorboard_under_served_torch(tmp_path):
    pytest.importorskip("tensorboardX")
    out = run_check(f"""
        import sys
        import torch
        from torch.utils.tensorboard import SummaryWriter
        with SummaryWriter({str(tmp_path)!r}) as w:
            w.add_scalar("x", torch.tensor(2.5), 1)
            w.add_images("imgs", [torch.zeros(1, 4, 4), torch.ones(1, 4, 4)], 1,
                         dataformats="CHW")
        print(sys.modules["torch"].__name__)
    """)
    assert out.strip() == "glasstorch"
    from tests.test_tensorboard import summaries
    got = {t: v for t, _, v in summaries(str(tmp_path))}
    assert got["x"].simple_value == 2.5 and got["imgs"].image.width == 8
