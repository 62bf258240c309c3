"""torch.utils.cpp_extension on the CPU: building and importing an extension, torch's errors."""

import shutil

import pytest

import glasstorch.utils.cpp_extension as ce

SOURCE = r"""
#include <Python.h>
static PyObject* add(PyObject*, PyObject* args) {
    long x, y;
    if (!PyArg_ParseTuple(args, "ll", &x, &y)) return NULL;
    return PyLong_FromLong(x + y);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "gt_ext_add", NULL, -1, methods};
PyMODINIT_FUNC PyInit_gt_ext_add(void) { return PyModule_Create(&def); }
"""

needs_tools = pytest.mark.skipif(not (shutil.which("c++") and shutil.which("ninja")),
                                 reason="needs a C++ compiler and ninja")


@needs_tools
def test_load_builds_imports_and_reuses(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "cache"))
    src = tmp_path / "add.cpp"
    src.write_text(SOURCE)
    module = ce.load(name="gt_ext_add", sources=[str(src)])
    assert module.add(2, 40) == 42
    assert str(tmp_path / "cache") in module.__file__
    ce.load(name="gt_ext_add", sources=[str(src)], verbose=True)
    assert "No modifications detected" in capsys.readouterr().err


@needs_tools
def test_build_failure_names_the_extension(tmp_path):
    src = tmp_path / "bad.cpp"
    src.write_text("#include <torch/extension.h>\n")
    with pytest.raises(RuntimeError, match="Error building extension 'bad'"):
        ce.load(name="bad", sources=[str(src)], build_directory=str(tmp_path))


def test_cpu_only_answers_match_torch(tmp_path):
    torch_ce = pytest.importorskip("torch.utils.cpp_extension")
    assert ce.CUDA_HOME is torch_ce.CUDA_HOME is None
    assert ce.is_ninja_available() == torch_ce.is_ninja_available()
    (tmp_path / "k.cu").write_text("int f() { return 1; }\n")
    for mod in (ce, torch_ce):
        with pytest.raises(OSError, match="CUDA_HOME environment variable is not set"):
            mod.load(name="k", sources=[str(tmp_path / "k.cu")],
                     build_directory=str(tmp_path))
    assert ce.CppExtension("x", ["x.cpp"]).language == "c++"
