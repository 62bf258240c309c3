"""The documentation site: every ```python block in docs/ runs, and ``mkdocs build --strict``
succeeds (when mkdocs is installed).

Convention for code blocks (also in docs/writing-docs.md): every ```python block is executed,
on its own, in a fresh namespace, with a temporary directory as the working directory, so it
must be self-contained and fast. A block that must not run (a shell session, a fragment, a
script that needs a dataset download) carries an HTML comment ``<!-- norun -->`` on the line
right above its opening fence; the comment is invisible on the site. A block whose import of
an optional third-party package fails because the package is not installed is skipped.

All blocks run in one child process (so a block that installs glasstorch as ``torch`` or
changes global switches cannot leak into the rest of the test session); global switches are
reset between blocks.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
NORUN = "<!-- norun -->"
# Pages whose python blocks are fragments by design (not executed): the pitfall catalogue shows
# the mistaken code in isolation.
FRAGMENT_PAGES = {"pitfalls.md"}
_FENCE = re.compile(r"^\s*```(\S*)(.*)$")


def extract_blocks(text):
    """``(line_number, code, runnable)`` for each ```python block of a Markdown text."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or not m.group(1):
            i += 1
            continue
        lang, start = m.group(1), i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        if lang != "python":
            continue
        previous = lines[start - 1].strip() if start > 0 else ""
        code = textwrap.dedent("\n".join(body)) + "\n"
        blocks.append((start + 1, code, previous != NORUN))
    return blocks


def doc_pages():
    return sorted(p for p in DOCS.rglob("*.md"))


def runnable_blocks():
    """``{block_id: code}`` for every block the test executes."""
    out = {}
    for page in doc_pages():
        rel = page.relative_to(DOCS).as_posix()
        if rel in FRAGMENT_PAGES:
            continue
        for line, code, runnable in extract_blocks(page.read_text(encoding="utf-8")):
            if runnable:
                out[f"{rel}:{line}"] = code
    return out


BLOCKS = runnable_blocks()


# ----------------------------------------------------------------------------- child process
def _reset_globals():
    import glasstorch
    from glasstorch import _compat

    glasstorch.set_default_dtype(glasstorch.float32)
    glasstorch.set_grad_enabled(True)
    glasstorch.set_printoptions(profile="default")
    glasstorch.autograd.set_detect_anomaly(False)
    glasstorch.debug.disable()
    glasstorch.debug.reset()
    if _compat.is_installed():
        _compat.uninstall_as_torch()


def _run_blocks(spec_path):
    """Child process: run each block, write ``{id: [error or None, seconds]}`` next to spec."""
    import contextlib
    import io
    import traceback
    import warnings

    spec = json.loads(Path(spec_path).read_text())
    workdir = os.getcwd()
    results = {}
    for block_id, code in spec.items():
        t0 = time.perf_counter()
        error = None
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                exec(compile(code, block_id, "exec"), {"__name__": "__main__"})
        except ModuleNotFoundError as e:
            missing = (e.name or "").partition(".")[0]
            if missing and missing != "glasstorch" and importlib.util.find_spec(missing) is None:
                error = f"SKIP: needs the {missing!r} package"
            else:
                error = traceback.format_exc()
        except BaseException:  # noqa: BLE001 - report every failure, SystemExit included
            error = traceback.format_exc()
        finally:
            os.chdir(workdir)
            _reset_globals()
        results[block_id] = [error, time.perf_counter() - t0]
    Path(spec_path).with_suffix(".out.json").write_text(json.dumps(results))


def _child_env():
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    env.pop("GLASSTORCH_DEBUG", None)
    return env


@pytest.fixture(scope="module")
def block_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docs_blocks")
    spec = tmp / "blocks.json"
    spec.write_text(json.dumps(BLOCKS))
    proc = subprocess.run([sys.executable, __file__, "--run-blocks", str(spec)], cwd=tmp,
                          env=_child_env(), capture_output=True, text=True, timeout=600)
    out = spec.with_suffix(".out.json")
    assert out.exists(), f"the block runner died:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text())


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("block_id", sorted(BLOCKS))
def test_code_block_runs(block_results, block_id):
    error, _seconds = block_results[block_id]
    if error is not None and error.startswith("SKIP: "):
        pytest.skip(error[6:])
    assert error is None, f"docs/{block_id} failed:\n{error}"


def test_pages_have_runnable_examples():
    # guards the extraction itself: a broken parser would find nothing and pass vacuously
    pages_with_code = {b.split(":")[0] for b in BLOCKS}
    assert {"getting-started.md", "pytorch-users.md", "guide/autograd.md"} <= pages_with_code
    assert len(BLOCKS) >= 40


def test_block_extraction_and_norun_marker():
    text = ("intro\n```python\nx = 1\n```\n<!-- norun -->\n```python\nimport missing\n```\n"
            "```bash\nls\n```\n- item\n\n    ```python\n    z = 3\n    ```\n")
    assert extract_blocks(text) == [(2, "x = 1\n", True), (6, "import missing\n", False),
                                    (14, "z = 3\n", True)]


def test_failing_block_is_reported(tmp_path):
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps({"ok": "x = 1\n", "bad": "raise ValueError('boom')\n",
                                "extra": "import no_such_package_xyz\n",
                                "ours": "import glasstorch.no_such_module\n"}))
    subprocess.run([sys.executable, __file__, "--run-blocks", str(spec)], cwd=tmp_path,
                   env=_child_env(), check=True, timeout=120)
    results = json.loads(spec.with_suffix(".out.json").read_text())
    assert results["ok"][0] is None
    assert "ValueError: boom" in results["bad"][0]
    assert results["extra"][0] == "SKIP: needs the 'no_such_package_xyz' package"
    assert "ModuleNotFoundError" in results["ours"][0]   # a missing glasstorch module fails


def test_every_page_is_in_the_nav():
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.relative_to(DOCS).as_posix() for p in doc_pages()
               if p.relative_to(DOCS).as_posix() not in config]
    assert not missing, f"pages not listed in mkdocs.yml's nav: {missing}"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None
                    or importlib.util.find_spec("mkdocstrings_handlers") is None,
                    reason="mkdocs and mkdocstrings-python are not installed (the docs extra)")
def test_mkdocs_build_strict(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", str(REPO / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "api" / "nn" / "index.html").exists()


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--run-blocks":
    _run_blocks(sys.argv[2])
