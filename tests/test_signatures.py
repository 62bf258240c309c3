"""Every public callable accepts torch's parameters under torch's names and kinds, with torch's
defaults (issue 26): the flat namespace, Tensor methods, nn.functional, linalg, special, fft.

torch's side is the checked-in table ``data_signatures/torch_signatures.json``, written by
``data_signatures/generate.py`` from torch 2.13 (Python signatures, the argument-parser
signatures of its builtins, each confirmed by calling torch with every parameter by keyword),
so the comparison is fast, deterministic and needs no torch (only the last test, which runs
the new keyword forms in both libraries, does). ``python tests/test_signatures.py`` prints the
full report.

For each torch overload of a callable, glasstorch's one signature must:
- accept every torch parameter name by keyword (``self`` of a method is the receiver);
- take torch's positional parameters at the same positions (where torch's overloads put
  different names at one position, glasstorch's one name there is enough), a lone int list
  (``zeros(2, 3)``) as ``*args`` too, and not take torch's keyword-only ones positionally;
- default what torch defaults, to the same value (``None`` is accepted as the sentinel when
  torch's overloads differ in whether the parameter is given at all).
glasstorch may accept more than torch (a method shares its function's one definition, so
``Tensor.abs`` also takes the function's ``out=``); that is not reported.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import warnings

import pytest

import glasstorch as gt

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "data_signatures", "torch_signatures.json")
_P, _PK, _PV, _V, _K, _VK = "P", "PK", "PV", "V", "K", "VK"
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: _P, inspect.Parameter.POSITIONAL_OR_KEYWORD: _PK,
    inspect.Parameter.VAR_POSITIONAL: _V, inspect.Parameter.KEYWORD_ONLY: _K,
    inspect.Parameter.VAR_KEYWORD: _VK,
}

# Accepted differences, each with the reason it stays: {"namespace.name": {"param": why}}; "*"
# covers every parameter of the callable. Each must still occur (a stale entry fails).
_ONE_DEFINITION = ("one definition serves torch.split(tensor, split_size_or_sections) and "
                   "Tensor.split(split_size): each name defaults to None so that the other "
                   "may be given instead")
_FROM = ("'from' is a Python keyword, usable only as **{'from': v}; glasstorch names it from_ "
         "(positional calls are the same)")
_ALPHA = ("torch takes alpha positionally only when other is a Python number (its "
          "subtract.Scalar overload); sub and subtract share one definition where alpha is "
          "keyword-only")
ACCEPTED: dict[str, dict[str, str]] = {
    "torch.einsum": {"equation": "torch's einsum is (*args), to take both the (equation, "
                                 "*operands) and the sublist forms; glasstorch names the "
                                 "equation it requires"},
    "torch.isin": {"element": "torch names a Python-number operand element/test_element in "
                              "its scalar overloads; glasstorch takes numbers positionally as "
                              "elements/test_elements",
                   "test_element": "(see element)"},
    "torch.result_type": {"*": "torch's overloads name the operands by kind (tensor/other, "
                               "scalar, scalar1/scalar2); glasstorch's (tensor, other) takes "
                               "each of them positionally"},
    "torch.norm": {"out": "torch.norm's fifth positional argument is out but Tensor.norm's is "
                          "dtype; the one definition follows the method (both keyword forms "
                          "work)",
                   "dtype": "(see out)"},
    "torch.split": {"split_size_or_sections": _ONE_DEFINITION},
    "Tensor.split": {"split_size": _ONE_DEFINITION},
    "torch.subtract": {"alpha": _ALPHA},
    "Tensor.subtract": {"alpha": _ALPHA},
    "Tensor.uniform_": {"from": _FROM},
    "Tensor.repeat_interleave": {"repeats": "one definition serves torch.repeat_interleave("
                                            "counts), so repeats defaults to None and "
                                            "x.repeat_interleave() reads x as the counts "
                                            "instead of raising"},
}

# Differences not fixed yet, in files other work owns; listed so that they are seen (the test
# prints them) and nothing new slips in. Remove an entry when it is fixed.
KNOWN_GAPS: dict[str, dict[str, str]] = {
    "torch.compile": {"*": "glasstorch/compiler.py: torch 2.13 adds name=, recompile_limit=, "
                           "isolate_recompiles=, shapes_spec= and defaults backend to None"},
    "torch.detach": {"*": "glasstorch/_tensor.py: the flat form is the Tensor method, whose "
                          "parameter is self, so torch.detach(input=x) is refused"},
    "torch.detach_": {"*": "(see torch.detach)"},
    "torch.quantize_per_tensor": {"*": "glasstorch/_ops/quantized.py: the list overload "
                                       "(tensors=, scales=, zero_points=) is not implemented"},
    "torch.dequantize": {"*": "glasstorch/_ops/quantized.py: the list overload (tensors=) is "
                              "not implemented"},
}


def _namespaces():
    out = {"torch": gt, "Tensor": gt.Tensor, "nn.functional": gt.nn.functional}
    for name in ("linalg", "special", "fft"):
        mod = getattr(gt, name, None)
        if mod is not None:
            out[name] = mod
    return out


def _glasstorch_params(ns, obj, name):
    """glasstorch's parameters as [name, kind, default-or-None], or None if not comparable."""
    if ns == "Tensor":
        raw = inspect.getattr_static(obj, name, None)
        if raw is None or isinstance(raw, property) or not callable(getattr(obj, name)):
            return None
        fn, receiver = (raw.__func__, False) if isinstance(raw, staticmethod) else (raw, True)
    else:
        fn, receiver = getattr(obj, name, None), False
        if fn is None or inspect.ismodule(fn) or not callable(fn):
            return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [[p.name, _KINDS[p.kind], None if p.default is p.empty else _canon(p.default)]
              for p in sig.parameters.values()]
    if receiver:
        if not params or params[0][1] not in (_P, _PK):
            return None
        params = params[1:]
    return params


def _canon(value):
    """The table's text for a default (see generate.canon)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)) and all(
            v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return repr(tuple(value))
    if isinstance(value, gt.device):
        return f"device({str(value)!r})"
    text = repr(value)
    return text if text.startswith("torch.") else f"<{type(value).__name__}>"


def _value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _same_default(torch_text, type_, gt_text):
    if torch_text.startswith("<") or gt_text.startswith("<"):
        return True  # an object with no literal form: its presence is what is compared
    a, b = _value(torch_text), _value(gt_text)
    size = re.search(r"\[(\d+)\]", type_ or "")
    if isinstance(a, int) and not isinstance(a, bool) and size and "Int" in (type_ or ""):
        a_alts = [a, (a,) * int(size.group(1))]  # IntArrayRef[2] stride=1 means (1, 1)
    else:
        a_alts = [a]
    for x in a_alts:
        if isinstance(x, list):
            x = tuple(x)
        y = tuple(b) if isinstance(b, list) else b
        if isinstance(x, bool) != isinstance(y, bool):
            continue
        if x == y:
            return True
    return False


def compare(overloads, gparams, method=False):
    """Differences between torch's overloads and glasstorch's parameters:
    a list of (param, message)."""
    if not method:
        # torch's parser names the operand of a Python-number overload ``self``
        # (``bitwise_and(Scalar self, Tensor other)``, ``where(condition, Scalar self, ...)``):
        # a leftover of the ATen schema, compared as positional-only
        overloads = [[[p[0], _P if p[0] == "self" else p[1], p[2], p[3]] for p in o]
                     for o in overloads]
    issues = []
    gpos = [p for p in gparams if p[1] in (_P, _PK)]
    gvar = next((i for i, p in enumerate(gparams) if p[1] == _V), None)
    # *args sits after the positional parameters that precede it
    gvar_at = None if gvar is None else sum(1 for p in gparams[:gvar] if p[1] in (_P, _PK))
    gkw = {p[0]: p for p in gparams if p[1] in (_PK, _K)}
    gvarkw = any(p[1] == _VK for p in gparams)
    gany = {p[0]: p for p in gparams}

    # where each name is positional, per overload, and the names at each position
    pos_names: dict[int, set] = {}
    positional_somewhere: set = set()
    for o in overloads:
        for i, p in enumerate(q for q in o if q[1] in (_P, _PK, _PV)):
            pos_names.setdefault(i, set()).add(p[0])
            positional_somewhere.add(p[0])

    for o in overloads:
        names = {p[0] for p in o}
        if any(p[1] == _V for p in o) and gvar is None:
            issues.append(("*args", "torch takes *args; glasstorch does not"))
        if any(p[1] == _VK for p in o) and not gvarkw:
            issues.append(("**kwargs", "torch takes **kwargs; glasstorch does not"))
        i = -1
        for p in o:
            name, kind = p[0], p[1]
            if kind in (_V, _VK):
                continue
            if kind != _P and name not in gkw and not gvarkw:
                issues.append((name, f"missing: torch accepts {name}="))
            if kind in (_P, _PK, _PV):
                i += 1
                if kind == _PV and (gvar_at is None or gvar_at > i):
                    issues.append((name, f"kind: torch takes {name} as *args too "
                                         f"(f(2, 3)); glasstorch does not"))
                elif i >= len(gpos) and (gvar_at is None or gvar_at > i):
                    issues.append((name, f"kind: torch takes {name} positionally (argument "
                                         f"{i + 1}); glasstorch does not"))
                elif (i < len(gpos) and (gvar_at is None or gvar_at > i) and kind != _P
                      and gpos[i][0] != name and gpos[i][0] not in pos_names[i]):
                    issues.append((name, f"position: torch's argument {i + 1} is {name}, "
                                         f"glasstorch's is {gpos[i][0]}"))
            elif kind == _K and name in gkw and gkw[name][1] == _PK \
                    and name not in positional_somewhere:
                issues.append((name, f"kind: torch's {name} is keyword-only; glasstorch's is "
                                     f"positional"))
        # glasstorch must not require what this overload goes without (a positional-only
        # torch parameter at the same position fills it; a nameable one can be given by its
        # own name instead, leaving glasstorch's unfilled)
        opos = [p for p in o if p[1] in (_P, _PK, _PV)]
        for gp in gparams:
            if gp[2] is not None or gp[0] in names or gp[1] not in (_P, _PK, _K):
                continue
            j = gpos.index(gp) if gp[1] != _K else None
            # (a torch name glasstorch lacks is reported as missing already)
            if j is None or j >= len(opos) or (opos[j][1] != _P and opos[j][0] in gkw):
                issues.append((gp[0], f"extra: glasstorch requires {gp[0]}, which torch's "
                                      f"({', '.join(p[0] for p in o)}) does not take"))

    # defaults, over all overloads together
    for name in {p[0] for o in overloads for p in o if p[1] not in (_V, _VK, _P)}:
        g = gany.get(name)
        if g is None:
            continue
        present = [next((p for p in o if p[0] == name), None) for o in overloads]
        defaults = [(p[2], p[3]) for p in present if p is not None and p[2] is not None]
        if g[2] is None:
            # (an overload without the name at all is the 'extra' check's business)
            if defaults:
                issues.append((name, f"default: torch's {name} may be omitted (default "
                                     f"{defaults[0][0]}); glasstorch requires it"))
            continue
        if any(_same_default(d, t, g[2]) for d, t in defaults):
            continue
        if not defaults and None in present:
            continue  # torch has no default to match: some overloads go without the name
        if g[2] == "None" and defaults and (None in present or len(defaults) < len(present)):
            continue  # None tells apart torch's overloads with and without the name
        if g[2] == "None" and g[1] == _K and gvar_at is not None:
            continue  # f(*sizes, size=None): the value may come through *args instead
        if g[1] == _PK and any(sum(p[1] in (_P, _PK, _PV) for p in o) <= gpos.index(g)
                               for o in overloads):
            continue  # arange(end) beside arange(start, end): glasstorch's end needs a default
        if not defaults:
            issues.append((name, f"default: torch requires {name}; glasstorch defaults it to "
                                 f"{g[2]}"))
        else:
            issues.append((name, f"default: torch's {name} defaults to "
                                 f"{' or '.join(sorted({d for d, _ in defaults}))}, "
                                 f"glasstorch's to {g[2]}"))
    # one report per (param, message)
    return list(dict.fromkeys(issues))


def report():
    """(compared, names_ok, fully_ok, issues) over every callable both libraries have."""
    with open(TABLE) as f:
        table = json.load(f)["namespaces"]
    compared = names_ok = fully_ok = 0
    issues = []
    for ns, obj in _namespaces().items():
        for name, entry in sorted(table.get(ns, {}).items()):
            if not entry["confirmed"]:
                continue
            gparams = _glasstorch_params(ns, obj, name)
            if gparams is None:
                continue
            compared += 1
            found = [(f"{ns}.{name}", p, m)
                     for p, m in compare(entry["overloads"], gparams, ns == "Tensor")]
            names_ok += not any(m.startswith("missing") for _, _, m in found)
            fully_ok += not found
            issues.extend(found)
    return compared, names_ok, fully_ok, issues


def _split(issues):
    """(open issues, known gaps that occur, stale exception entries)."""
    used, open_issues, gaps = set(), [], []
    for qual, param, msg in issues:
        for table in (ACCEPTED, KNOWN_GAPS):
            entry = table.get(qual, {})
            key = param if param in entry else ("*" if "*" in entry else None)
            if key is not None:
                used.add((qual, key))
                if table is KNOWN_GAPS:
                    gaps.append(f"{qual}: {msg}")
                break
        else:
            open_issues.append(f"{qual}: {msg}")
    stale = [f"{q}[{p!r}]" for table in (ACCEPTED, KNOWN_GAPS) for q, ps in table.items()
             for p in ps if (q, p) not in used]
    return open_issues, gaps, stale


def test_signatures_match_torch():
    compared, names_ok, fully_ok, issues = report()
    open_issues, gaps, stale = _split(issues)
    print(f"\nsignatures: {compared} callables compared with torch 2.13; {names_ok} "
          f"({100 * names_ok / compared:.1f}%) accept all of torch's parameter names, "
          f"{fully_ok} ({100 * fully_ok / compared:.1f}%) match names, kinds and defaults; "
          f"{len(gaps)} known gaps:\n  " + "\n  ".join(gaps))
    assert compared > 900, f"only {compared} callables compared: the table or the lookup broke"
    assert not open_issues, (f"{len(open_issues)} signature differences from torch:\n"
                             + "\n".join(open_issues))
    assert not stale, "accepted exceptions that no longer occur: " + ", ".join(stale)


def test_table_matches_its_generator_format():
    with open(TABLE) as f:
        data = json.load(f)
    assert data["torch_version"] == "2.13.0"
    kinds = {_P, _PK, _PV, _V, _K, _VK}
    for ns, entries in data["namespaces"].items():
        for name, e in entries.items():
            assert e["source"] in ("python", "native", "pyi", "parser-listing"), (ns, name)
            for o in e["overloads"]:
                for p in o:
                    assert len(p) == 4 and p[1] in kinds, (ns, name, p)


def test_compare_reports_each_kind_of_difference():
    # torch: f(input, other, *, alpha=1, out=None); each glasstorch variant breaks one rule
    torch_sig = [[["input", _PK, None, "Tensor"], ["other", _PK, None, "Tensor"],
                  ["alpha", _K, "1", "Scalar"], ["out", _K, "None", "Tensor"]]]

    def g(*params):
        return [list(p) for p in params]
    same = g(("input", _PK, None), ("other", _PK, None), ("alpha", _K, "1"), ("out", _K, "None"))
    assert compare(torch_sig, same) == []
    renamed = g(("input", _PK, None), ("tensor", _PK, None), ("alpha", _K, "1"),
                ("out", _K, "None"))
    msgs = [m for _, m in compare(torch_sig, renamed)]
    assert any(m.startswith("missing: torch accepts other=") for m in msgs)
    assert any(m.startswith("position:") for m in msgs)
    no_out = g(("input", _PK, None), ("other", _PK, None), ("alpha", _K, "1"))
    assert [m for _, m in compare(torch_sig, no_out)] == ["missing: torch accepts out="]
    positional_alpha = g(("input", _PK, None), ("other", _PK, None), ("alpha", _PK, "1"),
                         ("out", _K, "None"))
    assert [p for p, _ in compare(torch_sig, positional_alpha)] == ["alpha"]
    wrong_default = g(("input", _PK, None), ("other", _PK, None), ("alpha", _K, "2"),
                      ("out", _K, "None"))
    assert [m for _, m in compare(torch_sig, wrong_default)] == [
        "default: torch's alpha defaults to 1, glasstorch's to 2"]
    keyword_other = g(("input", _PK, None), ("alpha", _K, "1"), ("other", _K, None),
                      ("out", _K, "None"))
    assert any(m.startswith("kind: torch takes other positionally")
               for _, m in compare(torch_sig, keyword_other))
    # a lone int list takes varargs in torch: zeros(2, 3)
    zeros = [[["size", _PV, None, "SymIntArrayRef"], ["dtype", _K, "None", "ScalarType?"]]]
    assert compare(zeros, g(("size", _PK, None), ("dtype", _K, "None")))
    assert compare(zeros, g(("sizes", _V, None), ("size", _K, "None"),
                            ("dtype", _K, "None"))) == []


# ---------------------------------------------------------------- the new keyword forms, run
# Calls that the signature fixes made possible, run in both libraries: the same values (or
# the same exception type). ``lib`` is the library, ``x`` a 3x4 float tensor, ``m`` a
# well-conditioned symmetric positive-definite 3x3 one.
CALLS = [
    "lib.max(x, other=x * 0.5)",
    "x.min(other=x * 2)",
    "lib.amax(x, dim=None)",
    "x.amin()",
    "lib.arange(end=4)",
    "lib.arange(1, 4)",
    "lib.range(0, 2)",
    "lib.range(3)",
    "lib.tensor_split(x, sections=2, dim=1)",
    "lib.tensor_split(x, indices=[1, 3], dim=1)",
    "lib.tensor_split(x, tensor_indices_or_sections=lib.tensor([1]), dim=1)",
    "lib.tensor_split(x, indices_or_sections=2)",
    "x.hsplit(1, 3)",
    "lib.hsplit(x, sections=2)",
    "lib.vsplit(x, indices=[1])",
    "lib.swapaxes(x, axis0=0, axis1=1)",
    "x.swapaxes(axis0=1, axis1=0)",
    "lib.split(tensor=x, split_size_or_sections=2)",
    "x.squeeze(0, 1)",
    "x[None].squeeze(0, 1)",
    "x.count_nonzero(0, 1)",
    "x[0].broadcast_to(2, 4)",
    "x.expand(2, 3, 4, implicit=True)",
    "x.clone().resize_(size=(2, 6))",
    "x.clone().resize_(2, 6, memory_format=lib.channels_last)",
    "x.clone().resize_(1, 2, 3, 2, memory_format=lib.channels_last).stride()",
    "x.t().cpu(memory_format=lib.contiguous_format).stride()",
    "x.t().contiguous().stride()",
    "x.contiguous(lib.contiguous_format)",
    "x.is_contiguous(memory_format=lib.channels_last)",
    "str(x.type(lib.float64, memory_format=lib.preserve_format).dtype)",
    "x.clone().copy_(other=x * 2)",
    "x.t().to(memory_format=lib.contiguous_format).stride()",
    "x.reshape(1, 3, 2, 2).to(memory_format=lib.channels_last).stride()",
    "lib.nan_to_num(x / 0, nan=None)",
    "lib.as_tensor([1, 2], lib.float64)",
    "lib.as_tensor([1, 2], dtype=lib.float64)",
    "lib.scalar_tensor(2, layout=lib.strided)",
    "lib.tril_indices(3, 3, pin_memory=False, requires_grad=False)",
    "lib.triu_indices(3, 3, requires_grad=True)",
    "lib.repeat_interleave(repeats=lib.tensor([1, 2]))",
    "lib.sparse_coo_tensor((2, 3)).to_dense()",
    "lib.sparse_coo_tensor(size=(2,), dtype=lib.float64).to_dense()",
    "lib.mm(x, x.t(), lib.float32)",
    "lib.bmm(x[None], x.t()[None], out_dtype=lib.float32)",
    "lib.softmax(x, 1, out=lib.empty(0))",
    "lib.log_softmax(x, dim=0, out=lib.empty(0))",
    "lib.nn.functional.gelu(x, approximate='tanh', out=lib.empty(0))",
    "lib.nn.functional.gelu(x, 'tanh')",
    "lib.nn.functional.softplus(x, 2, out=lib.empty(0))",
    "lib.nn.functional.logsigmoid(x, out=lib.empty(0))",
    "lib.nn.functional.hardshrink(x, 0.3, out=lib.empty(0))",
    "lib.threshold(x, 0.5, 0., out=lib.empty(0))",
    "lib.nn.functional.linear(x, x, out=lib.empty(0))",
    "lib.isposinf(x / 0, out=lib.empty(0, dtype=lib.bool))",
    "lib.nn.functional.avg_pool2d(x[None], 2, out=lib.empty(0))",
    "lib.diff(x, out=lib.empty(0))",
    "lib.argsort(x, stable=True, dim=0, out=lib.empty(0, dtype=lib.int64))",
    "lib.narrow_copy(x, 1, 1, 2, out=lib.empty(0))",
    "lib.nn.functional.one_hot(input=lib.tensor([0, 2]))",
    "lib.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None], None, "
    "0.0, False, 2.0)",
    "lib.relu_(input=x.clone())",
    "lib.kl_div(x.log(), x)",
    "lib.kl_div(x.log(), x, 1, True)",
    "lib.linalg.det(A=m)",
    "lib.linalg.inv(A=m)",
    "lib.det(input=m)",
    "lib.linalg.vector_norm(input=x)",
    "lib.linalg.norm(input=x)",
    "lib.linalg.matrix_norm(input=x)",
    "lib.linalg.cholesky(input=x[:, :3] @ x[:, :3].t() + lib.eye(3))",
    "lib.linalg.eigh(input=m, out=(lib.empty(0), lib.empty(0)))[0]",
    "lib.linalg.eigvalsh(input=m)",
    "lib.linalg.lstsq(input=m, b=x[:, :2]).solution",
    "lib.linalg.pinv(x, 1e-3, False)",
    "lib.linalg.pinv(x, 0.1, atol=0.1)",
    "lib.linalg.matrix_rank(x, 0.5, False)",
    "lib.linalg.matrix_power(x[:, :3], 2, out=lib.empty(0))",
    "lib.slogdet(m, out=(lib.empty(0), lib.empty(0)))",
    "lib.linalg.cond(input=m)",
    "lib.linalg.slogdet(A=m, out=(lib.empty(0), lib.empty(0)))",
    "lib.linalg.solve_triangular(input=x[:, :3].triu() + lib.eye(3), B=x[:, :2], upper=True)",
    "lib.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5, "
    "out=(lib.empty(0), lib.empty(0), lib.empty(0)))[1]",
    "lib.batch_norm(x, None, None, None, None, True, 0.1, 1e-5)",
]


def _run(code, lib):
    x = lib.arange(1.0, 13.0).reshape(3, 4)
    m = x[:, :3] @ x[:, :3].t() / 100 + lib.eye(3)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(code, {"lib": lib, "x": x, "m": m})  # noqa: S307 - the calls listed above
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__
    outs = out if isinstance(out, tuple) else (out,)
    return [o.tolist() if hasattr(o, "tolist") else o for o in outs]


def _close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-4 * max(1.0, abs(b)) or (a != a and b != b)
    return a == b


def test_keyword_forms_run_like_torch():
    torch = pytest.importorskip("torch")
    bad = []
    for code in CALLS:
        ours, theirs = _run(code, gt), _run(code, torch)
        if not _close(ours, theirs):
            bad.append(f"{code}\n    glasstorch: {str(ours)[:200]}\n    torch: {str(theirs)[:200]}")
    assert not bad, "\n".join(bad)


if __name__ == "__main__":
    c, n, f, found = report()
    for q, _, m in found:
        print(f"{q}: {m}")
    print(f"{c} compared, {n} accept all names, {f} match fully; {len(found)} differences")
