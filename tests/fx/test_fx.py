"""torch.fx in glasstorch against torch: the same modules traced in both give the same nodes
(op, name, printed target, arguments), the same generated code, and GraphModules,
Interpreter, Transformer, replace_pattern and ShapeProp that compute what eager code does."""

import copy
import math
import operator
import pickle
import sys
import types

import numpy as np
import pytest

import glasstorch
import glasstorch.fx as gfx
from glasstorch.fx.passes.shape_prop import ShapeProp as GShapeProp

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp as TShapeProp  # noqa: E402

LIBS = {"g": (glasstorch, gfx), "t": (torch, tfx)}


def target_str(node):
    if isinstance(node.target, str):
        return node.target
    # torch prints its C++ nn builtins as torch._C._nn.x; glasstorch's live in nn.functional
    return type(node)._pretty_print_target(node.target).replace("torch._C._nn.",
                                                               "torch.nn.functional.")


def arg_str(a):
    if type(a).__name__ == "Node":
        return "%" + a.name
    if isinstance(a, (tuple, list)):
        return type(a).__name__[:1] + "(" + ", ".join(arg_str(e) for e in a) + ")"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {arg_str(v)}" for k, v in a.items()) + "}"
    return repr(a).replace("glasstorch.", "torch.")


def nodes_of(gm):
    return [(n.op, n.name, target_str(n), arg_str(n.args), arg_str(n.kwargs),
             sorted(u.name for u in n.users)) for n in gm.graph.nodes]


def both(build, *args, trace=None):
    """Build the module with each library, trace it, return {lib: (module, gm)}."""
    out = {}
    for key, (lib, fx) in LIBS.items():
        lib.manual_seed(0)
        m = build(lib)
        gm = trace(fx, m) if trace else fx.symbolic_trace(m)
        out[key] = (m, gm)
    return out


def same_graphs(res):
    g, t = res["g"][1], res["t"][1]
    assert nodes_of(g) == nodes_of(t)
    assert g.code == torch_text(t.code)
    assert str(g.graph) == torch_text(str(t.graph))


def torch_text(s):
    # torch's C++ nn builtins print as torch._C._nn.x; glasstorch's as torch.nn.functional.x
    return s.replace("torch._C._nn.", "torch.nn.functional.")


def to_torch(x):
    return torch.from_numpy(np.array(x.detach().numpy()))


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol,
                               atol=tol)


# ---------------------------------------------------------------- models

def mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            h = self.act(self.fc1(x))
            h = lib.add(h, 1) * 2 - h.mean(dim=-1, keepdim=True)
            return F.relu(self.fc2(h), inplace=False)
    return MLP()


def cnn(lib):
    nn = lib.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.seq = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2))
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = self.seq(self.bn(self.conv(x)))
            x = lib.flatten(x, 1)
            y = lib.cat([x, x], dim=1).chunk(2, dim=1)[0]
            return self.fc(y).softmax(-1)
    return CNN().eval()


def containers(lib):
    nn = lib.nn

    class Containers(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(5, 5) for _ in range(2)])
            self.heads = nn.ModuleDict({"a": nn.Linear(5, 2), "b": nn.Tanh()})
            self.register_buffer("buf", lib.ones(5))
            self.scale = nn.Parameter(lib.full((5,), 0.5))
            self.const = lib.arange(5.0)

        def forward(self, x, y=2, *rest, flag=None, **extra):
            for layer in self.layers:
                x = layer(x) + self.buf
            x = self.buf + x * self.scale * self.const
            n, c = x.shape
            v = x.view(n, -1)[:, 1:3]
            w = math.sqrt(2) * v
            return {"a": self.heads["a"](x), "b": [self.heads["b"](-w), x.size(1), n]}
    return Containers()


@pytest.mark.parametrize("build,shape", [(mlp, (2, 4)), (cnn, (2, 3, 8, 8)),
                                         (containers, (3, 5))])
def test_trace_matches_torch_and_eager(build, shape):
    res = both(build)
    same_graphs(res)
    x = glasstorch.randn(*shape)
    (gm_, ggm), (tm, _) = res["g"], res["t"]
    geager, ggraph = gm_(x), ggm(x)
    teager = tm(to_torch(x))
    flat_g = glasstorch.utils._pytree.tree_leaves(ggraph)
    flat_e = glasstorch.utils._pytree.tree_leaves(geager)
    flat_t = torch.utils._pytree.tree_leaves(teager)
    for a, b, c in zip(flat_g, flat_e, flat_t):
        if isinstance(a, glasstorch.Tensor):
            close(a, to_torch(b))
            close(a, c)
        else:
            assert a == b == c
    assert type(ggm).__name__ == type(gm_).__name__
    assert ggm.graph.owning_module is ggm


def test_signature_placeholders_and_defaults():
    res = both(containers)
    names = [(n.name, n.target, n.args) for n in res["g"][1].graph.nodes
             if n.op == "placeholder"]
    assert names == [("x", "x", ()), ("y", "y", (2,)), ("flag", "flag", (None,)),
                     ("_rest", "*rest", ()), ("_extra", "**extra", ())]
    assert "def forward(self, x, y = 2, flag = None, *rest, **extra):" in res["g"][1].code


def test_function_with_kwargs():
    def build(lib):
        def fn(x, *, bias, scale=3.0):
            return lib.nn.functional.relu(x * scale + bias).sum(dim=0, keepdim=True)
        return fn
    res = both(build)
    same_graphs(res)
    out = res["g"][1](glasstorch.ones(2, 2), bias=glasstorch.ones(2))
    close(out, torch.full((1, 2), 8.0))


def test_leaf_modules_and_custom_tracer():
    def build(lib):
        nn = lib.nn

        class Block(nn.Module):
            def forward(self, x):
                return x.relu() + 1

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.inner = Block()
                self.lin = nn.Linear(3, 3)

            def forward(self, x):
                return self.inner(self.lin(self.block(x)))
        return Net()

    def trace(fx, m):
        class LeafBlocks(fx.Tracer):
            def is_leaf_module(self, mod, qualname):
                return qualname == "block" or super().is_leaf_module(mod, qualname)
        graph = LeafBlocks().trace(m)
        return fx.GraphModule(m, graph)
    res = both(build, trace=trace)
    same_graphs(res)
    ops = [(n.op, n.target) for n in res["g"][1].graph.nodes if n.op == "call_module"]
    assert ops == [("call_module", "block"), ("call_module", "lin")]
    # the inner Block was traced through
    assert [n.target for n in res["g"][1].graph.nodes if n.op == "call_method"] == ["relu"]


def test_tensor_method_and_torch_function_targets():
    def build(lib):
        def fn(x, y):
            a = lib.add(x, y)
            b = x.add(y)
            c = lib.ones(2) + a        # a tensor on the left: Tensor.add, a call_method
            d = lib.nn.functional.gelu(b).transpose(0, 1).contiguous()
            e = lib.matmul(d, c.t()) @ a
            return lib.stack([e, e]).max(dim=0).values, x.dtype, abs(-x), x[0, None, ...]
        return fn
    res = both(build)
    same_graphs(res)
    kinds = {n.name: (n.op, target_str(n)) for n in res["g"][1].graph.nodes}
    assert kinds["add"] == ("call_function", "torch.add")
    assert kinds["add_1"] == ("call_method", "add")
    assert kinds["add_2"] == ("call_method", "add")
    assert kinds["gelu"] == ("call_function", "torch.nn.functional.gelu")
    assert kinds["matmul_1"] == ("call_function", "operator.matmul")
    assert kinds["getattr_1"] == ("call_function", "builtins.getattr")
    assert kinds["abs_1"] == ("call_function", "operator.abs")


def _module_with_wrap(lib, fx, decorator):
    mod = types.ModuleType(f"fx_wrap_{decorator}")
    mod.__dict__.update(lib=lib, fx=fx)
    src = ("def helper(x, k):\n    return x * k\n")
    src = ("@fx.wrap\n" + src) if decorator else (src + "fx.wrap('helper')\n")
    src += ("def forward(x):\n    return helper(x, 2) + 1\n")
    exec(compile(src, mod.__name__, "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("decorator", [False, True])
def test_wrap(decorator, monkeypatch):
    res = {}
    mods = {}
    for key, (lib, fx) in LIBS.items():
        mods[key] = _module_with_wrap(lib, fx, decorator)
        res[key] = (None, fx.symbolic_trace(mods[key].forward))
    # importable, so that pickling can name the wrapped function
    monkeypatch.setitem(sys.modules, mods["g"].__name__, mods["g"])
    same_graphs(res)
    gm = res["g"][1]
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function",
                                               "call_function", "output"]
    assert f'torch.fx._symbolic_trace.wrap("fx_wrap_{decorator}_helper")' in gm.code
    close(gm(glasstorch.ones(2)), torch.full((2,), 3.0))
    # the wrap survives pickling through the generated code
    close(pickle.loads(pickle.dumps(gm))(glasstorch.ones(2)), torch.full((2,), 3.0))


def test_wrap_outside_module_level_raises():
    with pytest.raises(NotImplementedError, match="top level of a module"):
        gfx.wrap("len")
    with pytest.raises(RuntimeError, match="Unsupported type"):
        exec("fx.wrap(3)", {"fx": gfx})


def test_autowrap_math_and_functions():
    def build(lib):
        def fn(x):
            return x * math.sqrt(x.dim()) + math.floor(2.5)
        return fn
    res = both(build)
    same_graphs(res)
    assert "math_sqrt" in res["g"][1].code

    for _, fx in LIBS.values():
        g = fx.Tracer(autowrap_functions=(scaled_by_three,)).trace(calls_scaled)
        assert [n.name for n in g.nodes] == ["x", "scaled_by_three", "add", "output"]
        # without it the function is traced through
        g = fx.Tracer().trace(calls_scaled)
        assert [n.name for n in g.nodes] == ["x", "mul", "add", "output"]


def scaled_by_three(x):
    return x * 3


def calls_scaled(x):
    return scaled_by_three(x) + 1


def test_is_fx_tracing():
    seen = []

    def fn(x):
        seen.append(glasstorch.fx._symbolic_trace.is_fx_tracing())
        return x + 1
    gfx.symbolic_trace(fn)
    assert seen == [True] and not glasstorch.fx._symbolic_trace.is_fx_tracing()


@pytest.mark.parametrize("body,exc_name", [
    ("if x.sum() > 0:\n        return x\n    return -x", "TraceError"),
    ("return [v for v in x]", "TraceError"),
    ("return len(x)", "RuntimeError"),
    ("return int(x.sum() > 0) if bool(x) else x", "TraceError"),
])
def test_control_flow_errors_match_torch(body, exc_name):
    src = f"def fn(x):\n    {body}\n"
    messages = {}
    for key, (_lib, fx) in LIBS.items():
        scope = {}
        exec(src, scope)
        with pytest.raises(Exception) as info:
            fx.symbolic_trace(scope["fn"])
        assert type(info.value).__name__ == exc_name
        messages[key] = str(info.value)
    assert messages["g"] == messages["t"]
    assert issubclass(gfx.proxy.TraceError, ValueError)


def test_unpacking_a_proxy_by_count():
    def build(lib):
        def fn(x):
            a, b = x.chunk(2)
            return a * b
        return fn
    res = both(build)
    same_graphs(res)
    assert [n.name for n in res["g"][1].graph.nodes][:4] == ["x", "chunk", "getitem",
                                                             "getitem_1"]


def test_concrete_args_none():
    def build(lib):
        def fn(x, y=None):
            return x if y is None else x + y
        return fn
    res = {}
    for key, (lib, fx) in LIBS.items():
        res[key] = (None, fx.symbolic_trace(build(lib), concrete_args={"y": None}))
    same_graphs(res)
    with pytest.raises(AssertionError, match="specialized to have value None"):
        res["g"][1](glasstorch.ones(1), glasstorch.ones(1))


# ---------------------------------------------------------------- Graph and Node API

def build_graph(fx, lib):
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=3)
    a = g.call_function(operator.add, (x, y))
    b = g.call_function(lib.add, (a, 1), {"alpha": 2})
    s = g.call_method("sum", (b,), {"dim": 0})
    s2 = g.call_function(builtins_sum, ([a, a],))
    ga = g.call_function(getattr, (s, "shape"))
    g.output((s, s2, ga))
    return g


builtins_sum = sum


def test_graph_building_names_and_printing():
    gg, tg = build_graph(gfx, glasstorch), build_graph(tfx, torch)
    assert [n.name for n in gg.nodes] == [n.name for n in tg.nodes] == \
        ["x", "y", "add", "add_1", "sum_1", "sum_2", "getattr_1", "output"]
    assert str(gg) == str(tg)
    ggm = gfx.GraphModule(glasstorch.nn.Module(), gg)
    tgm = tfx.GraphModule(torch.nn.Module(), tg)
    assert ggm.code == tgm.code
    out, ref = ggm(glasstorch.ones(2, 2)), tgm(torch.ones(2, 2))
    close(out[0], ref[0])
    close(out[1], ref[1])
    assert tuple(out[2]) == tuple(ref[2])


def test_node_editing():
    for fx, lib in ((gfx, glasstorch), (tfx, torch)):
        g = fx.Graph()
        x = g.placeholder("x")
        a = g.call_function(lib.relu, (x,))
        b = g.call_function(operator.mul, (a, a))
        out = g.output(b)
        assert list(a.users) == [b] and b.all_input_nodes == [a]
        with g.inserting_after(a):
            n = g.call_function(lib.neg, (a,))
        assert a.next is n and n.prev is a
        uses = a.replace_all_uses_with(n, delete_user_cb=lambda u: u is not n)
        assert uses == [b] and b.args == (n, n) and list(a.users) == [n]
        b.replace_input_with(n, x)
        assert b.args == (x, x)
        with pytest.raises(RuntimeError, match="still had 1 users"):
            g.erase_node(a)
        assert g.eliminate_dead_code()
        assert [m.name for m in g.nodes] == ["x", "mul", "output"]
        with g.inserting_before(out):
            c = g.call_method("exp", (b,))
        out.args = (c,)
        b.update_arg(1, 2.0)
        assert b.args == (x, 2.0)
        c.prepend(b)  # already just before it: order unchanged
        assert b.next is c
        g.lint()
        copy_g = fx.Graph()
        env = {}
        ret = copy_g.graph_copy(g, env)
        copy_g.output(ret)
        assert [m.name for m in copy_g.nodes] == [m.name for m in g.nodes]
        lst = g.call_function(operator.add, ([x], [x]))
        with pytest.raises(TypeError, match="does not support mutation"):
            lst.args[0].append(1)


def test_map_arg_and_aggregate():
    g = gfx.Graph()
    x = g.placeholder("x")
    got = gfx.node.map_arg((x, [x, 1], {"k": x}, slice(x, 2)), lambda n: n.name)
    assert got == ("x", ["x", 1], {"k": "x"}, slice("x", 2, None))
    assert isinstance(got[1], gfx.immutable_collections.immutable_list)
    agg = gfx.node.map_aggregate((1, [2, 3]), lambda v: v * 10)
    assert agg == (10, [20, 30])
    il = gfx.immutable_collections.immutable_list([1, 2])
    assert hash(il) == hash((1, 2)) and pickle.loads(pickle.dumps(il)) == il


def test_lint_catches_bad_order():
    g = gfx.Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.neg, (x,))
    b = g.call_function(operator.neg, (a,))
    g.output(b)
    b.append(a)  # move a after its user
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_print_tabular(capsys):
    gm = gfx.symbolic_trace(mlp(glasstorch))
    gm.graph.print_tabular()
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert set(text[1]) == {"-", " "}
    assert text[2].split()[:3] == ["placeholder", "x", "x"]
    assert any("call_function" in line and "torch.add" in line for line in text)


# ---------------------------------------------------------------- GraphModule

def test_print_readable_and_str_match_torch(capsys):
    res = both(cnn)
    g_out = res["g"][1].print_readable(print_output=False)
    t_out = res["t"][1].print_readable(print_output=False)
    assert g_out == t_out
    # str(): the module repr (glasstorch's own), then the code and torch's reminder
    assert str(res["g"][1]).endswith(res["t"][1].code + "\n# To see more debug info, please "
                                     "use `graph_module.print_readable()`")


def test_graphmodule_copy_pickle_recompile():
    m = cnn(glasstorch)
    gm = gfx.symbolic_trace(m)
    x = glasstorch.randn(2, 3, 8, 8)
    ref = m(x)
    for other in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm)), copy.copy(gm)):
        assert other.code == gm.code
        close(other(x), to_torch(ref))
    deep = copy.deepcopy(gm)
    assert deep.conv.weight is not gm.conv.weight
    # edit: relu after flatten, recompile
    for n in gm.graph.nodes:
        if n.target is glasstorch.flatten:
            with gm.graph.inserting_after(n):
                r = gm.graph.call_function(glasstorch.relu, (n,))
            n.replace_all_uses_with(r, delete_user_cb=lambda u: u is not r)
    gm.recompile()
    assert "relu = torch.relu(flatten)" in gm.code
    close(gm(x), to_torch(ref))  # values after maxpool(relu) are already >= 0
    assert gm.add_submodule("extra.act", glasstorch.nn.ReLU())
    assert isinstance(gm.extra.act, glasstorch.nn.ReLU)
    assert gm.delete_submodule("extra.act") and not gm.delete_submodule("nope")
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra")


def test_graphmodule_from_dict_root_and_errors():
    g = gfx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("sub.weight")
    g.output(g.call_function(glasstorch.mul, (x, w)))
    gm = gfx.GraphModule({"sub.weight": glasstorch.full((2,), 3.0)}, g)
    close(gm(glasstorch.ones(2)), torch.full((2,), 3.0))
    with pytest.raises(RuntimeError, match="was not provided in ``root``"):
        gfx.GraphModule({}, g)


def test_to_folder(tmp_path):
    import importlib
    import sys
    m = mlp(glasstorch)
    gm = gfx.symbolic_trace(m)
    gm.to_folder(tmp_path / "saved_mlp", "SavedMLP")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("saved_mlp")
        loaded = mod.SavedMLP()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("saved_mlp", None)
        sys.modules.pop("saved_mlp.module", None)
    x = glasstorch.randn(3, 4)
    close(loaded(x), to_torch(m(x)))


# ---------------------------------------------------------------- Interpreter, Transformer

def test_interpreter_and_transformer_match_torch():
    res = both(mlp)
    x = glasstorch.randn(2, 4)
    close(gfx.Interpreter(res["g"][1]).run(x), to_torch(res["g"][0](x)))

    def make(fx, lib):
        class NegRelu(fx.Transformer):
            def call_module(self, target, args, kwargs):
                if target == "act":
                    return self.call_function(lib.neg, args, kwargs)
                return super().call_module(target, args, kwargs)
        return NegRelu
    gt = make(gfx, glasstorch)(res["g"][1]).transform()
    tt = make(tfx, torch)(res["t"][1]).transform()
    assert nodes_of(gt) == nodes_of(tt) and gt.code == tt.code
    close(gt(x), tt(to_torch(x)))

    class Counting(gfx.Interpreter):
        def run_node(self, n):
            self.count = getattr(self, "count", 0) + 1
            return super().run_node(n)
    it = Counting(res["g"][1])
    it.run(x)
    assert it.count == len(res["g"][1].graph.nodes)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        gfx.Interpreter(res["g"][1]).run()


def test_replace_pattern_matches_torch():
    def build(lib):
        def fn(x, y):
            a = lib.relu(x + y)
            b = lib.relu(a + y) * 2
            return lib.relu(b + x)
        return fn

    res = both(build)
    matches = {}
    for key, (lib, fx) in LIBS.items():
        pattern, replacement = make_patterns(lib)
        matches[key] = fx.replace_pattern(res[key][1], pattern, replacement)
    assert len(matches["g"]) == len(matches["t"]) == 3
    assert [m.anchor.name for m in matches["g"]] == [m.anchor.name for m in matches["t"]]
    same_graphs(res)
    x, y = glasstorch.randn(3), glasstorch.randn(3)
    close(res["g"][1](x, y), res["t"][1](to_torch(x), to_torch(y)))


def make_patterns(lib):
    def pattern(a, b):
        return lib.relu(a + b)

    def replacement(a, b):
        return lib.sub(a, b).abs()
    return pattern, replacement


def test_shape_prop_matches_torch():
    res = both(cnn)
    x = glasstorch.randn(2, 3, 8, 8)
    GShapeProp(res["g"][1]).propagate(x)
    TShapeProp(res["t"][1]).propagate(to_torch(x))
    for gn, tn in zip(res["g"][1].graph.nodes, res["t"][1].graph.nodes):
        gm_, tm_ = gn.meta.get("tensor_meta"), tn.meta.get("tensor_meta")
        assert (gm_ is None) == (tm_ is None), gn.name
        if gm_ is None:
            continue
        gl = gm_ if isinstance(gm_, tuple) and not hasattr(gm_, "_fields") else [gm_]
        tl = tm_ if isinstance(tm_, tuple) and not hasattr(tm_, "_fields") else [tm_]
        for a, b in zip(gl, tl):
            assert tuple(a.shape) == tuple(b.shape)
            assert str(a.dtype) == str(b.dtype)
            assert tuple(a.stride) == tuple(b.stride)
            assert str(a.memory_format) == str(b.memory_format)
            assert a.requires_grad == b.requires_grad


def test_proxy_on_plain_graph():
    g = gfx.Graph()
    p = gfx.Proxy(g.placeholder("x"))
    out = glasstorch.relu(p) + p.shape[0]
    g.output(out.node)
    assert [n.name for n in g.nodes] == ["x", "relu", "getattr_1", "getitem", "add",
                                         "output"]
    assert repr(p) == "Proxy(x)"


def test_tracing_leaves_dispatch_off():
    from glasstorch import overrides
    before = overrides._get_current_function_mode_stack()
    seen = []

    def fn(x):
        seen.append(len(overrides._get_current_function_mode_stack()) - len(before))
        return glasstorch.relu(x) + 1
    gm = gfx.symbolic_trace(fn)
    assert seen == [1]  # one mode while tracing, none after
    assert overrides._get_current_function_mode_stack() == before
    assert gfx.proxy._tracing_depth == 0
    assert [n.target for n in gm.graph.nodes][1] is glasstorch.relu


def test_interpreter_error_names_the_node():
    def fn(x):
        return x.view(7)
    gm = gfx.symbolic_trace(fn)
    with pytest.raises(RuntimeError, match=r"While executing %view : \[num_users=1\] = "
                                           r"call_method\[target=view\]"):
        gfx.Interpreter(gm).run(glasstorch.ones(2))


def test_compatibility_decorator_and_docstrings():
    @gfx.compatibility(is_backward_compatible=False)
    def experimental():
        """Does a thing."""
    assert "NOT* backward-compatible" in experimental.__doc__
    import inspect
    mods = [gfx, gfx.graph, gfx.node, gfx.proxy, gfx.graph_module, gfx.interpreter,
            gfx.subgraph_rewriter, gfx._symbolic_trace, gfx.passes.shape_prop]
    for mod in mods:
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                assert (obj.__doc__ or "").strip(), f"{mod.__name__}.{name}"


def test_record_stack_traces_in_print_readable():
    class M(glasstorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = glasstorch.nn.Linear(2, 2)

        def forward(self, x):
            y = self.lin(x)
            return glasstorch.relu(y) + 1
    tracer = gfx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(M())
    gm = gfx.GraphModule(tracer.root, graph)
    text = gm.print_readable(print_output=False)
    assert "in forward, code: y = self.lin(x)" in text
    assert "in forward, code: return glasstorch.relu(y) + 1" in text
    assert "test_fx.py" in gm.graph.find_nodes(op="call_module")[0].stack_trace


def test_torch_assert_is_recorded_like_torch_and_asserts_eagerly():
    import torch.fx as tfx

    def module(L):
        class M(L.nn.Module):
            def forward(self, x):
                L._assert(x.shape[0] == 2, "batch must be 2")
                return x + 1
        return M()

    codes = []
    for L, fx in ((glasstorch, gfx), (torch, tfx)):
        codes.append(fx.symbolic_trace(module(L)).code)
        with pytest.raises(AssertionError, match="batch must be 2"):
            module(L)(L.ones(3))
    assert codes[0] == codes[1]
