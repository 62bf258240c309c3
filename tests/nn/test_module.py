"""nn.Module, Parameter and containers against torch, with modules built from tensor ops."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import glasstorch
import glasstorch.nn  # noqa: F401

torch = pytest.importorskip("torch")


def build(L):
    """The same small model in either library (custom layers only: no library layers)."""
    nn = L.nn

    class Affine(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(L.ones(n_out, n_in) * 0.1)
            self.bias = nn.Parameter(L.zeros(n_out))
            self.register_buffer("calls", L.zeros(1))
            self.register_buffer("scratch", L.zeros(2), persistent=False)

        def forward(self, x):
            return x @ self.weight.t() + self.bias

        def extra_repr(self):
            return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Affine(3, 4)
            self.blocks = nn.ModuleList([Affine(4, 4) for _ in range(2)])
            self.heads = nn.ModuleDict({"a": Affine(4, 2), "b": Affine(4, 1)})
            self.seq = nn.Sequential(OrderedDict(pre=Affine(4, 4), post=Affine(4, 4)))
            self.scale = nn.Parameter(L.ones(1))
            self.extras = nn.ParameterList([nn.Parameter(L.zeros(2, 2))])
            self.tied = self.first  # shared module

        def forward(self, x):
            h = self.first(x)
            for b in self.blocks:
                h = b(h)
            h = self.seq(h)
            return self.heads["a"](h) * self.scale, self.heads["b"](h)

    return Net()


def test_registration_names_and_repr_match_torch():
    g, t = build(glasstorch), build(torch)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert [n for n, _ in g.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in g.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in g.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in g.named_modules(remove_duplicate=False)] == \
        [n for n, _ in t.named_modules(remove_duplicate=False)]
    assert list(g.state_dict()) == list(t.state_dict())
    assert repr(g) == repr(t)
    assert g.state_dict()._metadata == t.state_dict()._metadata


def test_forward_backward_and_state_dict_roundtrip():
    g, t = build(glasstorch), build(torch)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    for gp, tp in zip(g.parameters(), t.parameters()):
        with torch.no_grad():
            tp.normal_()
        gp.data = glasstorch.from_numpy(tp.detach().numpy().copy())
    (ga, gb), (ta, tb) = g(glasstorch.from_numpy(x)), t(torch.from_numpy(x))
    np.testing.assert_allclose(ga.detach().numpy(), ta.detach().numpy(), rtol=1e-5, atol=1e-5)
    (ga.sum() + gb.sum()).backward()
    (ta.sum() + tb.sum()).backward()
    for (name, gp), (_, tp) in zip(g.named_parameters(), t.named_parameters()):
        assert (gp.grad is None) == (tp.grad is None), name
        if tp.grad is not None:
            np.testing.assert_allclose(gp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5,
                                       err_msg=name)
    g.zero_grad()
    assert all(p.grad is None for p in g.parameters())
    fresh = build(glasstorch)
    result = fresh.load_state_dict(g.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy())
               for a, b in zip(fresh.parameters(), g.parameters()))


def test_load_state_dict_errors_match_torch():
    g, t = build(glasstorch), build(torch)
    bad_g = g.state_dict()
    bad_t = t.state_dict()
    for sd, L in ((bad_g, glasstorch), (bad_t, torch)):
        sd["first.weight"] = L.zeros(9, 3)
        del sd["scale"]
        sd["unknown"] = L.zeros(1)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(bad_t)
    with pytest.raises(RuntimeError) as ge:
        g.load_state_dict(bad_g)
    assert str(ge.value) == str(te.value)
    r_g = g.load_state_dict({k: v for k, v in g.state_dict().items() if k != "scale"},
                            strict=False)
    r_t = t.load_state_dict({k: v for k, v in t.state_dict().items() if k != "scale"},
                            strict=False)
    assert r_g.missing_keys == r_t.missing_keys and r_g.unexpected_keys == r_t.unexpected_keys


def test_parameter_and_buffer_semantics():
    for L in (glasstorch, torch):
        p = L.nn.Parameter(L.ones(2))
        assert isinstance(p, L.Tensor) and p.requires_grad and p.is_leaf
        assert repr(p).startswith("Parameter containing:\ntensor([1., 1.], requires_grad=True)")
        assert not isinstance(p * 2, L.nn.Parameter)
    g, t = build(glasstorch), build(torch)
    for m, L in ((g, glasstorch), (t, torch)):
        m.first.newbuf = L.nn.Buffer(L.ones(3), persistent=False)
        assert "newbuf" in m.first._buffers and "first.newbuf" not in m.state_dict()
        with pytest.raises(TypeError):
            m.first.weight = L.ones(4, 3)
        with pytest.raises(KeyError):
            m.register_parameter("a.b", None)


def test_modes_apply_to_and_requires_grad():
    g = build(glasstorch)
    assert g.training and g.eval() is g and not g.blocks[0].training
    g.train()
    assert g.heads["a"].training
    seen = []
    g.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net"
    g.double()
    assert g.first.weight.dtype is glasstorch.float64 and g.first.calls.dtype is glasstorch.float64
    g.to(glasstorch.float32)
    assert g.scale.dtype is glasstorch.float32 and isinstance(g.scale, glasstorch.nn.Parameter)
    g.requires_grad_(False)
    assert not any(p.requires_grad for p in g.parameters())


def test_containers_behave_like_torch():
    for L in (glasstorch, torch):
        nn = L.nn
        s = nn.Sequential(nn.Module(), nn.Module(), nn.Module())
        assert len(s) == 3 and isinstance(s[0:2], nn.Sequential) and len(s[1:]) == 2
        s.append(nn.Module())
        s.insert(0, nn.Module())
        del s[1]
        assert list(s._modules) == ["0", "1", "2", "3"]
        ml = nn.ModuleList([nn.Module()])
        ml.extend([nn.Module(), nn.Module()])
        ml.insert(1, nn.Module())
        assert len(ml) == 4 and isinstance(ml[-1], nn.Module)
        md = nn.ModuleDict({"x": nn.Module()})
        md["y"] = nn.Module()
        assert list(md.keys()) == ["x", "y"] and "x" in md
        pl = nn.ParameterList([L.zeros(2)])
        pl.append(nn.Parameter(L.ones(3)))
        assert isinstance(pl[0], nn.Parameter) and len(pl) == 2
        pd = nn.ParameterDict({"w": L.zeros(2)})
        assert isinstance(pd["w"], nn.Parameter)
    g_pl = glasstorch.nn.ParameterList([glasstorch.zeros(2, 3)])
    t_pl = torch.nn.ParameterList([torch.zeros(2, 3)])
    assert repr(g_pl) == repr(t_pl)
    g_ml = glasstorch.nn.ModuleList([glasstorch.nn.Module() for _ in range(3)])
    t_ml = torch.nn.ModuleList([torch.nn.Module() for _ in range(3)])
    assert repr(g_ml) == repr(t_ml)


def test_forward_hooks_pre_hooks_and_kwargs():
    def scenario(L):
        m = build(L).first
        log = []
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(sorted(kwargs)),
                                with_kwargs=True, prepend=True)
        out1 = m(L.ones(1, 3))
        h1.remove()
        out2 = m(L.ones(1, 3))
        return out1.detach().numpy(), out2.detach().numpy(), log
    g, t = scenario(glasstorch), scenario(torch)
    np.testing.assert_allclose(g[0], t[0])
    np.testing.assert_allclose(g[1], t[1])
    assert g[2] == t[2]


def test_full_backward_hooks():
    def scenario(L):
        m = build(L).first
        seen = []
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        m.register_full_backward_hook(lambda mod, gi, go: seen.append(
            (gi[0].detach().numpy().copy(), go[0].detach().numpy().copy())))
        x = L.ones(2, 3, requires_grad=True)
        m(x).sum().backward()
        return seen, x.grad.numpy(), m.weight.grad.numpy()
    g, t = scenario(glasstorch), scenario(torch)
    assert len(g[0]) == len(t[0]) == 1
    np.testing.assert_allclose(g[0][0][0], t[0][0][0])
    np.testing.assert_allclose(g[0][0][1], t[0][0][1])
    np.testing.assert_allclose(g[1], t[1])
    np.testing.assert_allclose(g[2], t[2])


def test_state_dict_hooks_and_submodule_access():
    g = build(glasstorch)
    g.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.__setitem__("extra", 1))
    assert g.state_dict()["extra"] == 1
    assert g.get_submodule("seq.post") is g.seq.post
    assert g.get_parameter("seq.post.bias") is g.seq.post.bias
    assert g.get_buffer("first.calls") is g.first.calls
    with pytest.raises(AttributeError):
        g.get_submodule("nope")
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        _ = g.missing


def test_copy_deepcopy_pickle_keep_parameters():
    g = build(glasstorch)
    clone = copy.deepcopy(g)
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in g.named_parameters()]
    assert isinstance(clone.scale, glasstorch.nn.Parameter)
    assert clone.first.weight.data_ptr() != g.first.weight.data_ptr()
    assert clone.tied is clone.first
    nn = glasstorch.nn
    box = nn.ModuleDict({"p": nn.ParameterList([nn.Parameter(glasstorch.ones(2))])})
    back = pickle.loads(pickle.dumps(box))
    assert isinstance(back["p"][0], nn.Parameter) and back["p"][0].tolist() == [1.0, 1.0]


def test_init_functions_statistics_match_torch():
    for name, args in [("uniform_", (-2.0, 3.0)), ("normal_", (1.0, 2.0)),
                       ("xavier_uniform_", ()), ("xavier_normal_", ()),
                       ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
                       ("trunc_normal_", (0.0, 1.0, -1.0, 1.5))]:
        g = glasstorch.empty(400, 300)
        t = torch.empty(400, 300)
        getattr(glasstorch.nn.init, name)(g, *args)
        getattr(torch.nn.init, name)(t, *args)
        gn, tn = g.numpy(), t.numpy()
        assert abs(gn.mean() - tn.mean()) < 0.02 * (tn.std() + 1e-3), name
        assert abs(gn.std() - tn.std()) < 0.02 * tn.std(), name
        assert gn.min() >= tn.min() - 0.05 * tn.std() - 1e-6 or name.endswith("normal_"), name
    w = glasstorch.empty(6, 4)
    glasstorch.nn.init.orthogonal_(w)
    np.testing.assert_allclose(w.numpy().T @ w.numpy(), np.eye(4), atol=1e-5)
    assert glasstorch.nn.init.calculate_gain("leaky_relu", 0.2) == \
        torch.nn.init.calculate_gain("leaky_relu", 0.2)
    c = glasstorch.zeros(4, 4, 3, 3)
    glasstorch.nn.init.dirac_(c)
    tc = torch.zeros(4, 4, 3, 3)
    torch.nn.init.dirac_(tc)
    np.testing.assert_array_equal(c.numpy(), tc.numpy())


@pytest.mark.parametrize("lib", [glasstorch, torch], ids=["glasstorch", "torch"])
def test_load_state_dict_pre_hook_receives_the_module(lib):
    inner = lib.nn.Linear(2, 2)
    seen = []
    inner.register_load_state_dict_pre_hook(
        lambda *args: seen.append((args[0] is inner, len(args), args[2])))
    outer = lib.nn.Sequential(inner)
    outer.load_state_dict(outer.state_dict())
    assert seen == [(True, 8, "0.")]
