"""Write ``torch_signatures.json``: the parameters torch 2.13 accepts on every public callable
of the namespaces tests/test_signatures.py compares (torch, Tensor methods, nn.functional,
linalg, special, fft).

Run with the oracle installed: ``.venv/bin/python tests/data_signatures/generate.py``.

Where the signatures come from, per callable:

- ``python``: torch defines it in Python; ``inspect.signature`` is exact (a
  ``boolean_dispatch`` pair, e.g. ``F.max_pool2d``, is read from its ``if_false`` function).
- ``native``: a builtin generated from ``native_functions.yaml``. Its argument-parser
  signatures are rebuilt with the ``torchgen`` that ships in the torch wheel (the code that
  generated this build's bindings), deprecated overloads left out. ``get_testing_overrides()``
  lambdas are not used: their names are approximations (``isfinite``'s says ``tensor``).
- ``pyi``: a hand-written builtin (``nonzero``, ``Tensor.size``, ...): the stubs in
  ``torch/_C``, corrected by what torch's parser says when called: how many arguments it
  takes positionally, the names it reports missing or unexpected.
- ``parser-listing``: a builtin whose overloads torch prints in an error message (an unknown
  keyword, or too many arguments): that printed list (``Tensor.to``, ``Tensor.copy_``).

Every builtin is then confirmed by calling torch: each overload is called with all its
parameters passed BY KEYWORD (small valid values), and the entry is marked ``confirmed`` only
if torch's argument parser accepted the call (a kernel error after parsing still confirms the
names). Where torch lists its overloads in an error message, that list must equal the rebuilt
one. The script prints what it could not confirm; the test uses confirmed entries only.
Defaults are not observable that way; they are the parser's (read as its C++ reads them, see
``_PARSER_DEFAULTS``) or the stubs'.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import sys
import warnings

import torch
import torch._jit_internal as _jit_internal

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "torch_signatures.json")
NAMESPACES = {
    "torch": torch, "Tensor": torch.Tensor, "nn.functional": torch.nn.functional,
    "linalg": torch.linalg, "special": torch.special, "fft": torch.fft,
}
# torchgen's python_module for the builtins of each C module (their names keep the prefix:
# torch.linalg.norm is linalg_norm)
_C_MODULES = {"torch._C._nn": "nn", "torch._C._linalg": "linalg", "torch._C._special": "special",
              "torch._C._fft": "fft"}
# Values the confirmation step passes instead of its samples: these builtins change the
# process (the same thread counts it already has) or crash on the samples
# (native_batch_norm without running stats needs training=True).
_SAFE_VALUES = {
    "set_num_threads": {"num": torch.get_num_threads()},
    "set_num_interop_threads": {"num": torch.get_num_interop_threads()},
    "set_flush_denormal": {"mode": False}, "native_batch_norm": {"training": True},
}


# ---------------------------------------------------------------- defaults, canonical
def canon(value):
    """A default as a string both sides can be compared by (a Python literal where one exists)."""
    if value is inspect.Parameter.empty:
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)) and all(
            v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return repr(tuple(value))
    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
        return str(value)
    if isinstance(value, torch.device):
        return f"device({str(value)!r})"
    return f"<{type(value).__name__}>"


# torch's parser reads an int default with atol(), so the schema's ``at::Reduction::Mean`` of
# torch.kl_div, torch.ctc_loss, ... is 0 ('none') at run time: torch.kl_div(a, b) is unreduced.
_PARSER_DEFAULTS = {"None": "None", "True": "True", "False": "False", "at::Reduction::Mean": "0"}


def _parser_default(text):
    if text in _PARSER_DEFAULTS:
        return _PARSER_DEFAULTS[text]
    if text.startswith("{") and text.endswith("}"):
        return repr(tuple(ast.literal_eval("[" + text[1:-1] + "]")))
    return repr(ast.literal_eval(text))


# ---------------------------------------------------------------- python signatures
def _param(name, kind, default=None, type_=None):
    p = {"name": name, "kind": kind}
    if default is not None:
        p["default"] = default
    if type_ is not None:
        p["type"] = type_
    return p


_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "P", inspect.Parameter.POSITIONAL_OR_KEYWORD: "PK",
    inspect.Parameter.VAR_POSITIONAL: "V", inspect.Parameter.KEYWORD_ONLY: "K",
    inspect.Parameter.VAR_KEYWORD: "VK",
}


def _dispatched(fn):
    """The function a ``boolean_dispatch`` wrapper (``F.max_pool2d``, ``torch.unique``, which
    nests two) calls when its flag is false: same parameters, a readable signature."""
    while True:
        try:
            inner = _jit_internal.boolean_dispatched.get(fn)
        except TypeError:  # builtins take no weak references
            return fn
        if inner is None:
            return fn
        fn = inner["if_false"]


def python_params(fn, method):
    fn = _dispatched(fn)
    params = [_param(p.name, _KINDS[p.kind], canon(p.default))
              for p in inspect.signature(fn).parameters.values()]
    return params[1:] if method else params


def is_python(fn):
    f = inspect.unwrap(_dispatched(fn))
    return inspect.isfunction(f) or inspect.ismethod(f)


# ---------------------------------------------------------------- native (torchgen)
def _torchgen_groups():
    import torchgen
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd import gen_python_functions as gpf

    root = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
    natives = parse_native_yaml(os.path.join(root, "ATen/native/native_functions.yaml"),
                                os.path.join(root, "ATen/native/tags.yaml")).native_functions
    natives = [f for f in natives if gpf.should_generate_py_binding(f)]
    deprecated = os.path.join(root, "autograd/deprecated.yaml")
    methods = gpf.load_signatures(natives, deprecated, method=True, skip_deprecated=True)
    functions = gpf.load_signatures(natives, deprecated, method=False, skip_deprecated=True)
    preds = {"method": (methods, gpf.is_py_variable_method),
             None: (functions, gpf.is_py_torch_function),
             "nn": (functions, gpf.is_py_nn_function),
             "linalg": (functions, gpf.is_py_linalg_function),
             "special": (functions, gpf.is_py_special_function),
             "fft": (functions, gpf.is_py_fft_function)}
    groups = {}
    for key, (pairs, pred) in preds.items():
        for name, overloads in gpf.group_filter_overloads(pairs, pred).items():
            groups[(key, str(name))] = [g.signature.signature_str()
                                        for g in gpf.group_overloads(overloads)]
    return groups


def _split_top(text):
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            cur += ch
            if ch == quote and not cur.endswith("\\" + quote):
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{(<":
            depth += 1
        elif ch in "]})>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_parser_signature(sig):
    """``add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)`` -> params.

    torch's parser takes every parameter by keyword; those after ``*`` only by keyword. A
    lone positional int list (``zeros(size)``, ``Tensor.view(size)``) also takes varargs
    (``zeros(2, 3)``): kind ``PV``."""
    body = sig[sig.index("(") + 1: sig.rindex(")")]
    params, kw_only = [], False
    for tok in _split_top(body):
        if tok == "*":
            kw_only = True
            continue
        decl, _, default = tok.partition("=")
        type_, name = decl.strip().rsplit(" ", 1)
        params.append(_param(name, "K" if kw_only else "PK",
                             _parser_default(default.strip()) if default else None, type_))
    positional = [p for p in params if p["kind"] == "PK"]
    if len(positional) == 1 and re.fullmatch(r"(Sym)?IntArrayRef(\[\d+\])?", positional[0]["type"]):
        positional[0]["kind"] = "PV"
    return params


# ---------------------------------------------------------------- pyi (hand-written builtins)
def _pyi_defs():
    base = os.path.join(os.path.dirname(torch.__file__), "_C")
    defs = {}
    for fname, key in [("_VariableFunctions.pyi", None), ("_nn.pyi", "nn")]:
        tree = ast.parse(open(os.path.join(base, fname)).read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                defs.setdefault((key, node.name), []).append(node)
    tree = ast.parse(open(os.path.join(base, "__init__.pyi")).read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "TensorBase":
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    defs.setdefault(("method", item.name), []).append(item)
    return defs


def _pyi_params(node, method):
    a = node.args
    out = []
    defaults = [None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults)) + a.defaults

    def d(expr):
        if expr is None:
            return None
        text = ast.unparse(expr)
        if text == "...":
            return "<unknown>"
        try:
            return canon(ast.literal_eval(expr))
        except ValueError:
            return text  # torch.preserve_format, ...
    for i, arg in enumerate(a.posonlyargs + a.args):
        kind = "P" if i < len(a.posonlyargs) else "PK"
        out.append(_param(arg.arg, kind, d(defaults[i]), ast.unparse(arg.annotation)
                          if arg.annotation else None))
    if a.vararg:
        out.append(_param(a.vararg.arg, "V"))
    for arg, dflt in zip(a.kwonlyargs, a.kw_defaults):
        out.append(_param(arg.arg, "K", d(dflt), ast.unparse(arg.annotation)
                          if arg.annotation else None))
    if a.kwarg:
        out.append(_param(a.kwarg.arg, "VK"))
    if method and out and out[0]["name"] == "self":
        out = out[1:]
    return out


# ---------------------------------------------------------------- confirmation by calling
def _sample(type_, name):
    t = (type_ or "").rstrip("?")
    t2 = torch.ones(2, 2)
    if name == "out" and t.startswith("TensorList"):
        return tuple(torch.empty(0) for _ in range(int(t[11:-1]) if "[" in t else 2))
    if t == "Tensor":
        return t2.clone()
    if t.startswith("TensorList") or t.startswith("c10::List"):
        return [t2.clone(), t2.clone()]
    if t in ("Scalar", "double"):
        return 1.0 if t == "double" else 1
    if t in ("int64_t", "SymInt", "int"):
        return 1
    if t == "bool":
        return False
    if re.fullmatch(r"(Sym)?IntArrayRef(\[(\d+)\])?", t):
        m = re.search(r"\[(\d+)\]", t)
        return [1] * (int(m.group(1)) if m else 1)
    if t == "ArrayRef<double>":
        return [1.0]
    if t == "ScalarType":
        return torch.float32
    if t == "Layout":
        return torch.strided
    if t == "Device":
        return "cpu"
    if t == "MemoryFormat":
        return torch.contiguous_format
    if t == "c10::string_view":
        return "sum"
    if t == "ScalarList":
        return [1.0]
    return _NO_SAMPLE


_NO_SAMPLE = object()
_PARSER_ERRORS = ("unexpected keyword", "invalid combination of arguments", "must be",
                  "missing", "takes", "multiple values", "needs an argument")


def confirm_native(ns, fn, name, overload):
    """True when torch's parser accepts ``overload`` with every parameter given by keyword."""
    if os.environ.get("SIGS_DEBUG"):
        print("call", ns, name, file=sys.stderr, flush=True)
    kwargs = {}
    for p in overload:
        if (p["type"] or "").endswith("?"):
            kwargs[p["name"]] = None
            continue
        value = _sample(p["type"], p["name"])
        if value is _NO_SAMPLE:
            if "default" in p:
                continue  # confirmed through the others; the type has no sample here
            return False
        kwargs[p["name"]] = value
    kwargs.update(_SAFE_VALUES.get(name, {}))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if ns == "Tensor":
                fn(torch.ones(2, 2), **kwargs)
            else:
                fn(**kwargs)
    except TypeError as e:
        return not any(m in str(e) for m in _PARSER_ERRORS)
    except Exception:  # noqa: BLE001 - a kernel error means the parser accepted the names
        return True
    return True


_LISTING = re.compile(r"^ \* \((.*)\)$|but expected \((.*)\)$", re.M)


def listed_overloads(ns, fn, positional=False):
    """The overloads torch prints for an unknown keyword or for too many positional
    arguments (multi-overload builtins, and a few single ones)."""
    args, kwargs = ([object()] * 9, {}) if positional else ((), {"__probe__": 0})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if ns == "Tensor":
                fn(torch.ones(2, 2), *args, **kwargs)
            else:
                fn(*args, **kwargs)
    except TypeError as e:
        found = [a or b for a, b in _LISTING.findall(str(e))]
        return found or None
    except Exception:  # noqa: BLE001
        return None
    return None


# ---------------------------------------------------------------- main
def build():
    groups = _torchgen_groups()
    pyi = _pyi_defs()
    table, unconfirmed = {}, []
    for ns, obj in NAMESPACES.items():
        entries = {}
        for name in sorted(dir(obj)):
            if name.startswith("_"):
                continue
            fn = (inspect.getattr_static(obj, name, None) if ns == "Tensor"
                  else getattr(obj, name, None))
            if ns == "Tensor" and isinstance(fn, (staticmethod, classmethod)):
                fn = getattr(obj, name)
            if fn is None or inspect.isclass(fn) or inspect.ismodule(fn) or not callable(fn):
                continue
            if isinstance(fn, (property, type(torch.Tensor.grad))):
                continue
            method = ns == "Tensor"
            entry = None
            if is_python(fn):
                try:
                    entry = {"source": "python", "overloads": [python_params(fn, method)],
                             "confirmed": True}
                except (TypeError, ValueError):
                    entry = None
            else:
                cname = getattr(fn, "__name__", name)
                self_mod = getattr(getattr(fn, "__self__", None), "__name__", None)
                key = "method" if method else _C_MODULES.get(self_mod)
                native = groups.get((key, cname))
                if native is not None:
                    overloads = [parse_parser_signature(s) for s in native]
                    entry = {"source": "native", "overloads": overloads}
                elif (key, cname) in pyi:
                    overloads = [_pyi_params(n, method) for n in pyi[(key, cname)]]
                    entry = {"source": "pyi", "overloads": overloads}
                if entry is not None:
                    entry["confirmed"] = _confirm(ns, fn, name, entry)
                    if not entry["confirmed"]:
                        unconfirmed.append(f"{ns}.{name}")
            if entry is not None:
                entries[name] = entry
        table[ns] = entries
    return table, unconfirmed


def _confirm(ns, fn, name, entry):
    listing = listed_overloads(ns, fn)
    if entry["source"] == "native":
        if listing is not None:
            # torch's printed list drops the receiver of a method; compare names and '*'
            ours = sorted((tuple(p["name"] for p in o),
                           tuple(p["name"] for p in o if p["kind"] == "K"))
                          for o in entry["overloads"])
            theirs = sorted(_listing_key(parse_listing(t)) for t in listing)
            if ours != theirs:
                print(f"listing differs: {ns}.{name}\n  ours   {ours}\n  theirs {theirs}",
                      file=sys.stderr)
                return False
        return all(confirm_native(ns, fn, name, o) for o in entry["overloads"])
    # A hand-written builtin: the stubs are a guide, torch's parser is the truth.
    if listing is None:
        listing = listed_overloads(ns, fn, positional=True)
    if listing is not None:
        entry["overloads"] = [parse_listing(t) for t in listing]
        entry["source"] = "parser-listing"
        return True
    most = _max_positional(ns, fn)
    if most is None:
        return False
    for o in entry["overloads"]:
        pos = [p for p in o if p["kind"] in ("P", "PK")]
        if most == -1:
            if len(o) != 1 or len(pos) != 1:
                return False
            pos[0]["kind"] = "P"
            return True
        for p in pos[most:]:
            p["kind"] = "K"  # the stubs call it positional; torch's parser does not
    if most == 0 and all(not o for o in entry["overloads"]):
        return True  # takes no arguments, as the stubs say
    for o in entry["overloads"]:
        ok, err = confirm_pyi(ns, fn, o, name)
        if not ok:
            listing = [a or b for a, b in _LISTING.findall(err)]
            if not listing:
                return False
            # torch printed its overloads while refusing the stubs' keywords: use them
            entry["overloads"] = [parse_listing(t) for t in listing]
            entry["source"] = "parser-listing"
            return True
    return True


def _listing_key(params):
    return (tuple(p["name"] for p in params),
            tuple(p["name"] for p in params if p["kind"] == "K"))


def parse_listing(text):
    """Params of one overload as torch prints it: 'Tensor input, *, Number alpha = 1'."""
    params, star = [], False
    for tok in _split_top(text):
        if tok == "*":
            star = True
            continue
        decl, _, default = tok.partition(" = ")
        type_, name = decl.strip().rsplit(" ", 1) if " " in decl.strip() else ("", decl)
        dflt = None
        if default:
            try:
                dflt = _parser_default(default.strip())
            except (ValueError, SyntaxError):
                dflt = default.strip()  # torch.contiguous_format, ...
        params.append(_param(name, "K" if star else "PK", dflt, type_))
    return params


_TAKES = re.compile(r"takes (?:from \d+ to )?(\d+) positional argument")


def _max_positional(ns, fn):
    """How many positional arguments torch's parser takes, from its own error message."""
    args = [object()] * 9
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(torch.ones(2, 2), *args) if ns == "Tensor" else fn(*args)
    except TypeError as e:
        if "takes no arguments" in str(e):
            return 0
        if "takes exactly one argument" in str(e):
            return -1  # a METH_O builtin: one positional-only parameter
        m = _TAKES.search(str(e))
        return int(m.group(1)) if m else None
    except Exception:  # noqa: BLE001
        return None
    return None


def _pyi_sample(p):
    if "default" in p and p["default"] != "<unknown>":
        try:
            return eval(p["default"], {"torch": torch})  # noqa: S307 - our own table text
        except Exception:  # noqa: BLE001
            return _NO_SAMPLE
    ann = p.get("type") or ""
    if ann == "Tensor":
        return torch.ones(2, 2)
    if ann in ("_int", "int"):
        return 1
    if ann == "_bool":
        return False
    if ann in ("Number", "_float"):
        return 1
    if ann == "Any":
        return [1.0]
    if ann == "Callable":
        return lambda *a: 0
    if ann == "_dtype":
        return torch.float32
    if ann.startswith("Literal["):
        return ast.literal_eval(ann[8:-1])
    if ann == "type[S]":
        return torch.Tensor
    if ann == "Tensor | list":
        return [1.0]
    return _NO_SAMPLE


_MISSING = re.compile(r"missing \d+ required positional arguments?: (.*)$", re.M)
_UNEXPECTED = re.compile(r"unexpected keyword argument '(\w+)'")
# Names the stubs get wrong, corrected here and then confirmed by calling like the rest.
_STUB_RENAMES = {("Tensor", "requires_grad_"): {"mode": "requires_grad"}}


def confirm_pyi(ns, fn, overload, name=None):
    """True when torch accepts every parameter of a hand-written builtin by keyword. The
    stubs are corrected where torch's own error names what it expects: required parameters
    it calls otherwise, optional ones it does not take at all."""
    for p in overload:
        p["name"] = _STUB_RENAMES.get((ns, name), {}).get(p["name"], p["name"])
    for _ in range(4):
        ok, err = _call_pyi(ns, fn, overload, _SAFE_VALUES.get(name, {}))
        if ok:
            break
        missing, unexpected = _MISSING.search(err), _UNEXPECTED.search(err)
        if missing:
            names = re.findall(r'"(\w+)"', missing.group(1))
            required = [p for p in overload if "default" not in p and p["kind"] != "P"]
            if len(names) != len(required):
                break
            for p, n in zip(required, names):
                p["name"] = n
        elif unexpected and any(p["name"] == unexpected.group(1) and "default" in p
                                for p in overload):
            overload[:] = [p for p in overload if p["name"] != unexpected.group(1)]
        else:
            break
    if not ok and os.environ.get("SIGS_DEBUG"):
        print("unconfirmed", ns, getattr(fn, "__name__", fn), err, file=sys.stderr)
    return ok, err


def _call_pyi(ns, fn, overload, safe):
    kwargs = {}
    for p in overload:
        if p["kind"] in ("V", "VK"):
            continue
        value = _pyi_sample(p)
        if value is _NO_SAMPLE:
            return False, "no sample for " + p["name"]
        kwargs[p["name"]] = value
    kwargs.update(safe)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(torch.ones(2, 2), **kwargs) if ns == "Tensor" else fn(**kwargs)
    except TypeError as e:
        return not any(m in str(e) for m in _PARSER_ERRORS), str(e)
    except (RuntimeError, ValueError, NotImplementedError):  # the parser accepted the names
        return True, ""
    return True, ""


def main():
    table, unconfirmed = build()
    # a parameter is [name, kind, default or null, type or null]; one callable a line, so
    # that a regenerated table diffs readably
    for entries in table.values():
        for e in entries.values():
            e["overloads"] = [[[p["name"], p["kind"], p.get("default"), p.get("type")]
                               for p in o] for o in e["overloads"]]
    lines = ["{", f'"torch_version": {json.dumps(torch.__version__.split("+")[0])},',
             '"namespaces": {']
    for i, (ns, entries) in enumerate(sorted(table.items())):
        lines.append(f"{json.dumps(ns)}: {{")
        body = [f"{json.dumps(n)}: {json.dumps(e, sort_keys=True)}" for n, e in entries.items()]
        lines.append(",\n".join(body))
        lines.append("}" + ("," if i < len(table) - 1 else ""))
    lines += ["}", "}"]
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(len(v) for v in table.values())
    print(f"{total} callables written to {OUT}; {len(unconfirmed)} unconfirmed:")
    print("  " + " ".join(unconfirmed))


if __name__ == "__main__":
    main()
