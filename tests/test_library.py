"""torch.library and torch.ops behave as torch's: schemas, custom ops, kernels, autograd
formulas, errors, and torch.ops.aten mapped onto glasstorch's operators."""

import itertools
import typing
from typing import Optional

import numpy as np
import pytest

import glasstorch
from tests._compare import both

torch = pytest.importorskip("torch")

_ids = itertools.count()
# re-registering a kernel warns in both libraries; the tests do it on purpose
pytestmark = pytest.mark.filterwarnings("ignore:.*previously registered kernel")


def fresh_ns():
    """A namespace no earlier test used, so both registries start clean."""
    return f"gtlib{next(_ids)}"


def raised(fn):
    try:
        fn()
    except Exception as e:
        return type(e)
    return None


# ---------------------------------------------------------------------------- infer_schema
def _prototypes(L):
    T = L.Tensor
    protos = {}

    def add(src):
        ns = {"Tensor": T, "Optional": Optional, "typing": typing, "L": L}
        exec(src, ns)
        protos[src] = ns["f"]

    add("def f(x: Tensor, y: float) -> Tensor: ...")
    add("def f(x: Tensor, out: Tensor) -> None: ...")
    add("def f(x: typing.List[Optional[Tensor]], z: typing.Sequence[float], w: list[bool]) "
        "-> Tensor: ...")
    add("def f(x: Optional[typing.List[int]], s: Optional[str], a: Optional[bool]) -> Tensor: ...")
    add("def f(x: L.dtype, y: Optional[L.dtype], d: L.device, o: Optional[L.device]) "
        "-> Tensor: ...")
    add("def f(x: Tensor, *, alpha: float = 2.0, n: Optional[int] = None, s: str = 'a b', "
        "b: bool = True) -> int: ...")
    add("def f(x: Tensor, y: float = -1.5, z: int = -3, d: L.dtype = L.float32) -> Tensor: ...")
    add("def f(x: Tensor) -> tuple[Tensor, list[Tensor]]: ...")
    add("def f(x: Tensor) -> typing.Tuple[()]: ...")
    add("def f(x: Tensor, y: int | float | bool) -> bool: ...")
    add("def f(x: Tensor, y: Tensor = None, d: float = 1e-05) -> float: ...")
    # errors
    add("def f(x) -> Tensor: ...")
    add("def f(x: dict) -> Tensor: ...")
    add("def f(x: Tensor): ...")
    add("def f(*x: Tensor) -> Tensor: ...")
    add("def f(x: Tensor) -> dict: ...")
    add("def f(x: Tensor, d: typing.List[int] = [1, 2]) -> Tensor: ...")
    add("def f(x: Tensor) -> Optional[Tensor]: ...")
    return protos


@pytest.mark.parametrize("mutates", [(), ("out",), "unknown"])
def test_infer_schema_matches_torch(mutates):
    def run(L):
        out = []
        for src, fn in _prototypes(L).items():
            margs = mutates if (mutates == "unknown" or "out" in src) else ()
            try:
                out.append(L.library.infer_schema(fn, mutates_args=margs))
            except ValueError as e:
                msg = str(e).split(" Got func")[0].split(" The valid")[0]
                out.append(("ValueError", msg.replace("glasstorch._tensor.", "torch.")))
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_infer_schema_op_name_and_errors():
    def run(L):
        def f(x: L.Tensor, y: L.Tensor) -> L.Tensor: ...
        res = [L.library.infer_schema(f, mutates_args=["y"], op_name="ns::foo")]
        for margs in ({"nope"}, "all"):
            try:
                L.library.infer_schema(f, mutates_args=margs)
            except ValueError as e:
                res.append(str(e).split(" Got func")[0])

        def g(x: L.Tensor, y: int) -> None: ...
        try:
            L.library.infer_schema(g, mutates_args={"y"})
        except ValueError as e:
            res.append(str(e).split(" Got func")[0])
        return res
    mine, theirs = both(run)
    assert mine == theirs
    with pytest.raises(TypeError):
        glasstorch.library.infer_schema(lambda x: x)


SCHEMAS = [
    "f(Tensor x, float y=1.0, float z=1e-05, float w=2.5, float v=1e20, float u=-0.5) -> Tensor",
    'f(Tensor x, str d="a b", ScalarType t=float32, Device dev="cpu", SymInt? n=None, '
    "bool b=True, int[] l=[1, 2], int[2] k=1, Scalar s=2) -> Tensor",
    "f.ov(Tensor(a!) x, Tensor(b) y, *, Tensor? z=None) -> (Tensor(a!), Tensor)",
    "f(Tensor x) -> (Tensor a, Tensor b)",
    "f(Tensor[] xs, Tensor?[] ys, Tensor(a!)[] zs) -> Tensor[]",
    "f(Tensor x, *, float eps=1e-6, float m=0.1, float g=100.0, float i=1.23456789) -> ()",
    "ns::f(Tensor self, SymInt[1] dim=[], float[]? f=None, int? x=-2) -> Tensor",
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_parse_schema_prints_like_torch(schema):
    mine = glasstorch.library.parse_schema(schema)
    theirs = torch._C.parse_schema(schema)
    assert str(mine) == str(theirs)
    assert mine.name == theirs.name and mine.overload_name == theirs.overload_name
    assert [a.name for a in mine.arguments] == [a.name for a in theirs.arguments]
    assert [a.kwarg_only for a in mine.arguments] == [a.kwarg_only for a in theirs.arguments]
    assert [a.is_write for a in mine.arguments] == [a.is_write for a in theirs.arguments]
    assert mine.is_mutable == theirs.is_mutable
    assert glasstorch._C.parse_schema is glasstorch.library.parse_schema


@pytest.mark.parametrize("bad", ["k(Tensor x -> Tensor", "k(Tensorx x) -> Tensor"])
def test_malformed_schemas_raise_runtime_error(bad):
    assert raised(lambda: torch._C.parse_schema(bad)) is RuntimeError
    with pytest.raises(RuntimeError, match="HERE"):
        glasstorch.library.parse_schema(bad)


# ---------------------------------------------------------------------------- custom_op
def custom_op_scenario(L):
    ns = fresh_ns()
    out = []

    @L.library.custom_op(f"{ns}::sin2", mutates_args=())
    def sin2(x: L.Tensor, y: float = 1.0) -> L.Tensor:
        return L.sin(x) * y

    out.append(repr(sin2).replace(ns, "NS"))
    packet = getattr(L.ops, ns).sin2
    out += [str(packet).replace(ns, "NS"), repr(packet).replace(ns, "NS"),
            repr(packet.default).replace(ns, "NS"), packet.overloads(),
            str(packet.default._schema).replace(ns, "NS"), packet.default.name().replace(ns, "NS"),
            packet.default.__name__, sin2._schema, sin2._qualname.replace(ns, "NS")]
    x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = sin2(x)
    out += [y.requires_grad, type(y.grad_fn).__name__.replace(ns, "NS")]
    try:
        y.sum().backward()
    except RuntimeError as e:
        out.append(str(e).replace(ns, "NS"))

    def setup(ctx, inputs, output):
        xx, scale = inputs
        ctx.save_for_backward(xx)
        ctx.scale = scale
        ctx.seen = ctx.needs_input_grad

    def backward(ctx, g):
        (xx,) = ctx.saved_tensors
        return g * L.cos(xx) * ctx.scale, None

    sin2.register_autograd(backward, setup_context=setup)
    for call in (lambda: sin2(x, 2.0), lambda: packet(x, 2.0), lambda: packet.default(x, y=2.0)):
        x.grad = None
        y = call()
        y.sum().backward()
        out.append(np.round(x.grad.detach().numpy(), 4).tolist())
        out.append(y.grad_fn.seen)
    out.append(sin2(L.ones(2), 3.0).requires_grad)
    with L.no_grad():
        out.append(sin2(x).requires_grad)
    return out


def test_custom_op_call_autograd_and_names_match_torch():
    mine, theirs = both(custom_op_scenario)
    assert mine == theirs


def argument_errors_scenario(L):
    ns = fresh_ns()

    @L.library.custom_op(f"{ns}::kw", mutates_args=())
    def kw(x: L.Tensor, n: int, *, a: float = 1.0) -> L.Tensor:
        return x * a * n

    calls = [lambda: kw(L.ones(2), 2, a=3.0), lambda: kw(L.ones(2), n=2),
             lambda: kw(L.ones(2), 2, 3.0), lambda: kw("a", 2), lambda: kw(L.ones(2), 2.5),
             lambda: kw(L.ones(2)), lambda: kw(L.ones(2), 2, b=1),
             lambda: kw(L.ones(2), 2, x=L.ones(2))]
    out = []
    for c in calls:
        try:
            out.append(c().tolist())
        except RuntimeError as e:
            out.append(str(e).split("\n")[0].replace(ns, "NS"))
    return out


def test_argument_binding_errors_match_torch():
    mine, theirs = both(argument_errors_scenario)
    assert mine[:2] == theirs[:2]
    for m, t in zip(mine[2:], theirs[2:]):
        # same error, same first line up to the printed declaration
        assert m.split("Declaration")[0].split("Schema")[0] == \
            t.split("Declaration")[0].split("Schema")[0]


def mutation_and_alias_scenario(L):
    ns = fresh_ns()

    @L.library.custom_op(f"{ns}::add_", mutates_args={"x"})
    def add_(x: L.Tensor, y: L.Tensor) -> None:
        x.add_(y)

    a = L.zeros(2)
    v = a._version
    out = [add_(a, L.ones(2)), a.tolist(), a._version - v,
           str(getattr(L.ops, ns).add_.default._schema).replace(ns, "NS")]
    out.append(raised(lambda: add_.register_autograd(lambda ctx, g: g)))

    @L.library.custom_op(f"{ns}::retx", mutates_args=())
    def retx(x: L.Tensor) -> L.Tensor:
        return x

    @L.library.custom_op(f"{ns}::view", mutates_args=())
    def view(x: L.Tensor) -> L.Tensor:
        return x[:1]

    @L.library.custom_op(f"{ns}::notensor", mutates_args=())
    def notensor(x: L.Tensor) -> L.Tensor:
        return 3

    @L.library.custom_op(f"{ns}::count", mutates_args=())
    def count(x: L.Tensor) -> int:
        return int(x.numel())

    @L.library.custom_op(f"{ns}::two", mutates_args=())
    def two(x: L.Tensor) -> tuple[L.Tensor, L.Tensor]:
        return x * 2, x * 3

    out += [raised(lambda: retx(L.ones(2))), raised(lambda: view(L.ones(2))),
            raised(lambda: notensor(L.ones(2))), count(L.ones(3)), type(two(L.ones(1))).__name__]
    two.register_autograd(lambda ctx, g1, g2: g1 * 2 + g2 * 3)
    x = L.ones(2, requires_grad=True)
    p, q = two(x)
    (p.sum() + q.sum()).backward()
    out.append(x.grad.tolist())
    return out


def test_mutation_aliasing_and_returns_match_torch():
    mine, theirs = both(mutation_and_alias_scenario)
    assert mine == theirs


def tensor_list_and_kwonly_scenario(L):
    ns = fresh_ns()

    @L.library.custom_op(f"{ns}::wsum", mutates_args=())
    def wsum(xs: list[L.Tensor], w: float, *, bias: float = 0.0) -> L.Tensor:
        return sum(xs) * w + bias

    seen = {}

    def setup(ctx, inputs, output, keyword_only_inputs):
        seen["n_inputs"] = len(inputs)
        seen["kw"] = keyword_only_inputs
        seen["needs"] = ctx.needs_input_grad
        ctx.w = inputs[1]

    def backward(ctx, g):
        return [g * ctx.w, g * ctx.w], None

    wsum.register_autograd(backward, setup_context=setup)
    a, b = L.ones(2, requires_grad=True), L.ones(2)
    out = wsum([a, b], 3.0, bias=1.0)
    out.sum().backward()
    res = [out.tolist(), a.grad.tolist(), seen, type(out.grad_fn).__name__.replace(ns, "NS")]

    for wrong in (lambda ctx, g: [g, g], lambda ctx, g: ([g, g], None, None)):
        wsum.register_autograd(wrong, setup_context=setup)
        res.append(raised(lambda: wsum([a, b], 3.0, bias=1.0).sum().backward()))
    return res


def test_tensor_list_inputs_and_keyword_only_inputs_match_torch():
    mine, theirs = both(tensor_list_and_kwonly_scenario)
    assert mine == theirs


def test_custom_op_kernels_and_validation_match_torch():
    def run(L):
        ns = fresh_ns()
        out = []

        @L.library.custom_op(f"{ns}::cuda_only", mutates_args=(), device_types="cuda")
        def cuda_only(x: L.Tensor) -> L.Tensor:
            return x.clone()

        out.append(raised(lambda: cuda_only(L.ones(1))))
        out.append(raised(lambda: cuda_only.register_kernel("tpu", lambda x: x)))

        @cuda_only.register_kernel("cpu")
        def _(x):
            return x + 1
        out.append(cuda_only(L.ones(1)).tolist())
        L.library.register_kernel(f"{ns}::cuda_only", "cpu", lambda x: x + 2)
        out.append(cuda_only(L.ones(1)).tolist())
        out.append(cuda_only.register_fake(lambda x: L.empty_like(x)) is not None)
        out.append(raised(lambda: L.library.custom_op("nonamespace", mutates_args=())(
            lambda x: x)))
        out.append(raised(lambda: L.library.custom_op(f"{ns}::noann", mutates_args=())(
            lambda x: x)))

        def kwtensor(x: L.Tensor, *, w: L.Tensor) -> L.Tensor: ...
        out.append(raised(lambda: L.library.custom_op(f"{ns}::kwt", mutates_args=())(kwtensor)))

        @L.library.custom_op(f"{ns}::redefined", mutates_args=())
        def first(x: L.Tensor) -> L.Tensor:
            return x + 1

        @L.library.custom_op(f"{ns}::redefined", mutates_args=())
        def second(x: L.Tensor) -> L.Tensor:
            return x + 100
        out += [getattr(L.ops, ns).redefined(L.ones(1)).tolist(), first(L.ones(1)).tolist()]
        ws = L.library.custom_op(f"{ns}::ws", lambda x: x * 2, mutates_args=(),
                                 schema="(Tensor x) -> Tensor")
        out += [ws(L.ones(2)).tolist(), str(getattr(L.ops, ns).ws.default._schema)
                .replace(ns, "NS")]
        return out
    mine, theirs = both(run)
    assert mine == theirs


# ---------------------------------------------------------------------------- Library
def library_scenario(L):
    ns = fresh_ns()
    out = []
    lib = L.library.Library(ns, "DEF")
    out.append(repr(lib).replace(ns, "NS"))
    out.append(lib.define("foo(Tensor x, Scalar alpha=1) -> Tensor"))
    seen = []

    def foo_cpu(*args, **kwargs):
        seen.append((len(args), sorted(kwargs)))
        return args[0] * (args[1] if len(args) > 1 else 1)
    lib.impl("foo", foo_cpu, "CPU")
    op = getattr(L.ops, ns).foo
    out += [op(L.ones(2), 3).tolist(), op(x=L.ones(2)).tolist(), seen]
    x = L.ones(2, requires_grad=True)
    y = op(x, 3)
    out.append(y.requires_grad)        # no autograd kernel: the kernel's own ops record
    lib.define("bar(Tensor x) -> Tensor")
    out.append(raised(lambda: getattr(L.ops, ns).bar(L.ones(1))))
    out.append(raised(lambda: L.library.Library(ns, "DEF")))
    out.append(raised(lambda: L.library.Library(ns, "BLAH")))
    out.append(raised(lambda: L.library.Library("prim", "DEF")))
    out.append(raised(lambda: L.library.Library("aten", "DEF")))
    out.append(raised(lambda: lib.define("foo(Tensor x) -> Tensor")))
    out.append(raised(lambda: lib.define(f"other{ns}::m(Tensor x) -> Tensor")))
    frag = L.library.Library(ns, "FRAGMENT")
    frag.define("baz(Tensor x) -> Tensor")
    frag.impl("baz", lambda t: t + 1, "CompositeExplicitAutograd")
    out.append(getattr(L.ops, ns).baz(L.ones(1)).tolist())
    impl_lib = L.library.Library(ns, "IMPL")
    out.append(raised(lambda: impl_lib.define("h(Tensor x) -> Tensor")))
    keyed = L.library.Library(ns, "IMPL", "CPU")
    keyed.impl("bar", lambda t: t + 7)
    out.append(getattr(L.ops, ns).bar(L.ones(1)).tolist())
    out.append(raised(lambda: keyed.impl("bar", lambda t: t, "CUDA")))
    lib.define("multi(Tensor x) -> (Tensor, Tensor)")
    lib.define("multi.ov(Tensor x, int n) -> Tensor")
    lib.impl("multi", lambda t: (t, t * 2), "CPU")
    lib.impl("multi.ov", lambda t, n: t * n, "CPU")
    multi = getattr(L.ops, ns).multi
    out += [[v.tolist() for v in multi(L.ones(1))], multi(L.ones(1), 3).tolist(),
            multi.overloads(), repr(multi.ov).replace(ns, "NS")]
    try:
        multi(L.ones(1), "a")
    except RuntimeError as e:
        out.append(str(e).split("\n")[0])
    out.append(raised(lambda: getattr(L.ops, ns).nope))
    out.append(raised(lambda: multi.nope))
    for lib_ in (keyed, impl_lib, frag, lib):
        lib_._destroy()
    out.append(raised(lambda: getattr(L.ops, ns).foo))
    return out


def test_library_define_impl_destroy_match_torch():
    mine, theirs = both(library_scenario)
    assert mine == theirs


def module_functions_scenario(L):
    ns = fresh_ns()
    out = []
    L.library.define(f"{ns}::qux", "(Tensor x) -> Tensor")
    out.append(raised(lambda: L.library.define("qux", "(Tensor x) -> Tensor")))

    @L.library.impl(f"{ns}::qux", "cpu")
    def qux(x):
        return x * 10
    out.append(getattr(L.ops, ns).qux(L.ones(1)).tolist())
    L.library.impl(f"{ns}::qux", ["cpu", "cuda"], lambda x: x * 9)
    out.append(getattr(L.ops, ns).qux(L.ones(1)).tolist())
    out.append(raised(lambda: L.library.impl(f"{ns}::qux", "tpu", lambda x: x)))

    @L.library.register_fake(f"{ns}::qux")
    def _(x):
        return L.empty_like(x)
    out.append(raised(lambda: L.library.register_fake(f"{ns}::zzz", lambda x: x)))
    L.library.register_autograd(f"{ns}::qux", lambda ctx, g: g * 9)
    y = L.ones(1, requires_grad=True)
    getattr(L.ops, ns).qux(y).sum().backward()
    out.append(y.grad.tolist())
    return out


def test_module_level_define_impl_and_autograd_match_torch():
    mine, theirs = both(module_functions_scenario)
    assert mine == theirs


# ---------------------------------------------------------------------------- torch.ops.aten
ATEN_CALLS = [
    ("add", "Tensor", lambda L: (L.ones(2), L.full((2,), 2.0)), {"alpha": 3}),
    ("add", "Scalar", lambda L: (L.ones(2), 2), {}),
    ("mul", "Tensor", lambda L: (L.arange(3.0), L.arange(3.0)), {}),
    ("mm", "default", lambda L: (L.ones(2, 3), L.ones(3, 2)), {}),
    ("relu", "default", lambda L: (L.tensor([-1.0, 2.0]),), {}),
    ("sum", "dim_IntList", lambda L: (L.ones(2, 3), [0]), {}),
    ("add_", "Tensor", lambda L: (L.ones(2), L.ones(2)), {}),
]


@pytest.mark.parametrize("name,overload,make,kwargs", ATEN_CALLS)
def test_aten_ops_resolve_to_glasstorch_implementations(name, overload, make, kwargs):
    def run(L):
        packet = getattr(L.ops.aten, name)
        return (getattr(packet, overload)(*make(L), **kwargs).tolist(),
                packet(*make(L), **kwargs).tolist(), str(packet), repr(getattr(packet, overload)),
                sorted(packet.overloads()), getattr(packet, overload).name())
    mine, theirs = both(run)
    assert mine == theirs
    assert glasstorch.ops.aten.add.Tensor is glasstorch.ops.aten.add.Tensor


def test_aten_gradients_flow_and_unknown_names_raise():
    x = glasstorch.ones(2, requires_grad=True)
    glasstorch.ops.aten.mul.Tensor(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    for L in (glasstorch, torch):
        with pytest.raises(AttributeError, match="no attribute 'nonexistent_op'"):
            _ = L.ops.aten.nonexistent_op
        with pytest.raises(AttributeError, match="has no overload name 'nope'"):
            _ = L.ops.aten.add.nope
    assert repr(glasstorch.ops.aten) == repr(torch.ops.aten)
    assert repr(glasstorch.ops) == repr(torch.ops)
    with pytest.raises(NotImplementedError, match="does not dispatch through"):
        glasstorch.library.Library("aten", "IMPL").impl("relu", lambda x: x, "CPU")


def test_ops_and_library_exist_after_import_and_serve_import_torch():
    import importlib
    import sys
    assert isinstance(glasstorch.ops, type(sys))
    assert importlib.import_module("glasstorch.ops") is glasstorch.ops
    assert glasstorch.library.OpOverloadPacket.__name__ == type(torch.ops.aten.add).__name__
    assert glasstorch.library.OpOverload.__name__ == type(torch.ops.aten.add.Tensor).__name__


def test_impl_abstract_is_the_deprecated_register_fake():
    def run(L):
        ns = fresh_ns()
        L.library.define(f"{ns}::f", "(Tensor x) -> Tensor")
        with pytest.warns(FutureWarning, match="renamed to `torch.library.register_fake`"):
            L.library.impl_abstract(f"{ns}::f", lambda x: L.empty_like(x))
        return True
    assert both(run) == (True, True)
