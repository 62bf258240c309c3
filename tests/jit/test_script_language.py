"""torch.jit.script of the language features model libraries rely on (timm, einops), each
scripted by glasstorch and by real torch from the same source: None attributes deciding
branches at compile time, tuple-to-list conversions, named-tuple results, classes,
NamedTuple, Enum, Union, Sequential subclasses, and loops over submodules."""

import enum
import warnings

import pytest

import glasstorch

from ._twin import close, copy_weights, load, to_torch

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SOURCE = '''
from enum import Enum
from typing import NamedTuple, Union


class Fmt(str, Enum):
    NCHW = "NCHW"
    NHWC = "NHWC"


class Recipe:
    def __init__(self, dims: List[int], names: Dict[str, int], first: int):
        self.dims = dims
        self.names: Dict[str, int] = names
        self.first = first
        self.calls = 0

    def size(self, name: str) -> int:
        self.calls = self.calls + 1
        return self.dims[self.names[name]]

    def rest(self) -> List[int]:
        return list(range(self.first, len(self.dims)))


class Pair(NamedTuple):
    value: torch.Tensor
    count: int


def pad_shape(x, old: Optional[List[int]] = None):
    if old is None:
        hw = x.size(0)
        old = hw, hw
    return old


def takes_list(x, size: List[int]):
    return x.reshape(size)


def passes_tuple(x):
    return takes_list(x, (2, -1))


def passes_one(x, t: Tuple[int]):
    return takes_list(x, t)


def sum_dims(r: Recipe, axes: List[Tuple[str, int]]) -> int:
    total = 0
    for name, k in axes:
        total += r.size(name) * k
    return total


class RecipeLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.recipes = {2: Recipe([3, 5], {"a": 0, "b": 1}, 0)}
        self.axes = (("b", 2),)

    def forward(self, x):
        r = self.recipes[x.dim()]
        return x * sum_dims(r, self.axes)


def reduce_max(x):
    r = x.max(dim=1, keepdim=True)
    return r.values, r.indices, x.sort(dim=0).values


def retyped(x):
    n = 0
    n = x * 2
    axes = {str(i): i for i in range(3)}
    for axis in ["a", "b"]:
        n = n + len(axis)
    for axis in [1, 2]:
        n = n + axis
    known: Dict[int, int] = {k: v * 2 for k, v in [(1, 2), (3, 4)]}
    return n, axes, known, list(range(1, 4))


def never_falls_off(x, k: int) -> torch.Tensor:
    if k > 0:
        return x + k
    else:
        assert False, "k must be positive"


def use_recipe(r: Recipe, x):
    y = x * r.size("b")
    for i in r.rest():
        y = y + i
    r2 = Recipe([1, 2], {"a": 1}, 0)
    return y, r2.size("a"), r.calls


def make_pair(x) -> Pair:
    return Pair(x * 2, 3)


def read_pair(p: Pair):
    return p.value + p.count, p[1]


def to_fmt(x, fmt: Fmt):
    if fmt == Fmt.NHWC:
        x = x.permute(0, 2, 3, 1)
    return x, fmt.value


def either(x, y: Union[int, List[int]]) -> Union[torch.Tensor, List[torch.Tensor]]:
    if isinstance(y, int):
        return x + y
    return [x * v for v in y]


class Gated(nn.Module):
    fmt: Fmt

    def __init__(self, with_norm: bool, gamma: Optional[float]):
        super().__init__()
        self.norm = nn.LayerNorm(4) if with_norm else None
        self.gamma = gamma
        self.checkpointing = False
        self.fmt = Fmt.NHWC

    def forward(self, x):
        if self.norm is not None:
            x = self.norm(x)
        if self.gamma is not None:
            x = x.pow(1.0 / self.gamma)
        if self.checkpointing and not torch.jit.is_scripting():
            x = python_only(x)
        return x, self.fmt == Fmt.NHWC


def python_only(x):
    def inner(y):
        return y
    return inner(x)


class AppendList(nn.Sequential):
    def forward(self, x, acc: List[torch.Tensor]) -> torch.Tensor:
        for i, module in enumerate(self):
            if i == 0:
                acc.append(module(x))
            else:
                acc.append(module(acc[-1]))
        return torch.cat(acc, dim=1)


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()),
                                    nn.Sequential(nn.Linear(4, 4)))
        self.head = nn.Sequential(OrderedDict([("pool", nn.Identity()), ("fc", nn.Linear(4, 2))]))
        self.fusion = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
        self.revert = nn.ModuleList([nn.Tanh(), nn.Sigmoid()])
        self.append = AppendList(nn.Linear(4, 4), nn.ReLU())
        self.extra = nn.ModuleList([nn.Identity()])

    def forward(self, x, flag: bool):
        x = self.stages(x)
        outs = []
        for i, (f, r) in enumerate(zip(self.fusion, self.revert)):
            outs.append(r(f(x)) + i)
        if flag:
            for blk in self.extra:
                x = blk(x)
        y = self.append(x, outs)
        for m in self.children():
            pass
        return self.head.fc(self.head.pool(x)), y
'''


@pytest.fixture(scope="module")
def mods(tmp_path_factory):
    gt, th = load(tmp_path_factory.mktemp("jit_lang"), "jit_lang",
                  "from collections import OrderedDict\n" + SOURCE)
    return gt, th


def _both(mods, name):
    gt, th = mods
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return glasstorch.jit.script(getattr(gt, name)), torch.jit.script(getattr(th, name))


X = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]


@pytest.mark.parametrize("name,args", [
    ("pad_shape", lambda T: (T(X),)),
    ("passes_tuple", lambda T: (T(X),)),
    ("reduce_max", lambda T: (T(X),)),
    ("passes_one", lambda T: (T(X), (6,))),
    ("retyped", lambda T: (T(X),)),
    ("never_falls_off", lambda T: (T(X), 2)),
    ("make_pair", lambda T: (T(X),)),
    ("either", lambda T: (T(X), 2)),
    ("either", lambda T: (T(X), [1, 3])),
])
def test_function_matches_torch(mods, name, args):
    g, t = _both(mods, name)
    got = g(*args(glasstorch.tensor))
    want = t(*args(torch.tensor))
    assert close(got, want), (got, want)
    assert str(g.schema).replace("jit_lang_gt", "jit_lang_th") == str(t.schema)


def test_named_tuple_results_and_tuple_to_list_in_graph(mods):
    g, t = _both(mods, "passes_tuple")
    assert "prim::ListConstruct" in str(g.graph) and "prim::ListConstruct" in str(t.graph)
    g, _ = _both(mods, "make_pair")
    out = g(glasstorch.ones(2))
    assert type(out).__name__ == "Pair" and out.count == 3
    assert "NamedTuple(value : Tensor, count : int)" in str(g.graph)
    gr, tr = _both(mods, "read_pair")
    got = gr(mods[0].Pair(glasstorch.ones(2), 4))
    want = tr(mods[1].Pair(torch.ones(2), 4))
    assert close(got, want)


def test_assert_false_ends_the_path(mods):
    g, _ = _both(mods, "never_falls_off")
    with pytest.raises(glasstorch.jit.Error, match="k must be positive"):
        g(glasstorch.ones(1), 0)


def test_class_instances_shared_with_python(mods):
    gt, th = mods
    g, t = _both(mods, "use_recipe")
    rg = gt.Recipe([3, 5, 7], {"a": 0, "b": 1}, 1)
    rt = th.Recipe([3, 5, 7], {"a": 0, "b": 1}, 1)
    got, want = g(rg, glasstorch.ones(2)), t(rt, torch.ones(2))
    assert close(got, want), (got, want)
    assert rg.calls == 1          # the compiled method set the Python object's attribute
    assert "prim::CreateObject" in str(g.graph) and "__torch__." in str(g.graph)
    assert glasstorch.jit.script(gt.Recipe) is gt.Recipe


def test_module_attribute_holding_class_instances(mods):
    gt, th = mods
    mg, mt = gt.RecipeLayer(), th.RecipeLayer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sg, st = glasstorch.jit.script(mg), torch.jit.script(mt)
    got, want = sg(glasstorch.ones(2, 2)), st(torch.ones(2, 2))
    assert close(got, want) and close(got, mg(glasstorch.ones(2, 2)))


def test_class_attribute_errors_name_the_attribute(tmp_path):
    src = ('class Bad:\n    def __init__(self, a: int):\n        self.a = a\n\n'
           '    def get(self) -> int:\n        return self.b\n')
    gt, _ = load(tmp_path, "jit_bad_cls", src)
    with pytest.raises(RuntimeError, match="nonexistent attribute or method 'b'"):
        glasstorch.jit.script(gt.Bad)


def test_enum_constants_and_values(mods):
    gt, th = mods
    g, t = _both(mods, "to_fmt")
    x = [[[[1.0, 2.0]]]]
    got = g(glasstorch.tensor(x), gt.Fmt.NHWC)
    want = t(torch.tensor(x), th.Fmt.NHWC)
    assert close(got[0], want[0]) and got[1] == want[1] == "NHWC"
    assert "Enum<__torch__." in str(g.graph)
    assert issubclass(gt.Fmt, enum.Enum)


@pytest.mark.parametrize("with_norm,gamma", [(False, None), (True, 0.5)])
def test_none_attributes_decide_branches_at_compile_time(mods, with_norm, gamma):
    gt, th = mods
    mg, mt = gt.Gated(with_norm, gamma), th.Gated(with_norm, gamma)
    copy_weights(mg, mt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sg, st = glasstorch.jit.script(mg), torch.jit.script(mt)
    x = [[1.0, 2.0, 3.0, 5.0]]
    got, want = sg(glasstorch.tensor(x)), st(torch.tensor(x))
    assert close(got, want), (got, want)
    assert ("norm" in sg.code) == ("norm" in st.code) == with_norm
    assert "python_only" not in sg.code         # its branch is statically dead


def test_nested_sequentials_zip_and_sequential_subclass(mods):
    gt, th = mods
    glasstorch.manual_seed(0)
    mg, mt = gt.Blocks(), th.Blocks()
    copy_weights(mg, mt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sg, st = glasstorch.jit.script(mg), torch.jit.script(mt)
    x = glasstorch.randn(3, 4)
    for flag in (False, True):
        got, want = sg(x, flag), st(to_torch(x), flag)
        assert close(got, want, 1e-4), (got, want)
        assert close(got, mg(x, flag), 1e-5)


def test_nested_def_is_refused_like_torch(mods):
    gt, th = mods
    with pytest.raises(glasstorch.jit.frontend.UnsupportedNodeError) as eg:
        glasstorch.jit.script(gt.python_only)
    with pytest.raises(torch.jit.frontend.UnsupportedNodeError) as et:
        torch.jit.script(th.python_only)
    assert str(eg.value).split(":")[0] == str(et.value).split(":")[0] == \
        "function definitions aren't supported"
    assert "~~~ <--- HERE" in str(eg.value)


def test_one_element_unpack_in_code_and_archive(mods, tmp_path):
    g, t = _both(mods, "passes_one")
    assert ", = " in g.code
    path = tmp_path / "one.pt"
    g.save(str(path))
    x = glasstorch.tensor(X)
    assert close(glasstorch.jit.load(str(path))(x, (6,)), t(to_torch(x), (6,)))
    assert close(torch.jit.load(str(path))(to_torch(x), (6,)), t(to_torch(x), (6,)))
