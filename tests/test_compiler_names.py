"""torch._dynamo and torch.compiler names behave as torch's do for eager code."""

import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch._dynamo
from tests._compare import both, outcome

torch = pytest.importorskip("torch")
pytest.importorskip("torch._dynamo")

# torch's own compiler modules warn about their deprecated TorchScript pieces while loading
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")


def test_probes_and_marker_decorators_match_torch():
    def run(L):
        d = L._dynamo

        def g(x):
            return x + 1
        out = [d.is_compiling(), L.compiler.is_compiling(), L.compiler.is_dynamo_compiling(),
               L.compiler.is_exporting(), d.reset(), L.compiler.reset(), d.graph_break("x")]
        out += [d.allow_in_graph(g) is g, L.compiler.allow_in_graph(g) is g,
                d.allow_in_graph([g, g]) == [g, g], d.disallow_in_graph(g) is g,
                d.forbid_in_graph(g) is g]
        for marker in (d.allow_in_graph, d.disallow_in_graph, d.forbid_in_graph):
            out.append(outcome(lambda: marker(3)))

        def h(x):
            return x
        out.append(d.assume_constant_result(h) is h)
        out.append(vars(h))
        out.append(L.compiler.assume_constant_result(h) is h)
        n = d.nonstrict_trace(g)
        out += [n is g, n(1), n.__wrapped__ is g, outcome(lambda: d.nonstrict_trace(3))]
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_disable_wrapper_matches_torch():
    def run(L):
        def g(x):
            return x * 2
        w = L._dynamo.disable(g, reason="why")
        attrs = {k: v for k, v in vars(w).items() if k not in ("__wrapped__",
                                                                "_torchdynamo_wrapper_id")}
        out = [w is g, w(3), w.__wrapped__ is g, w.__name__,
               attrs.pop("_torchdynamo_orig_callable") is g, attrs]
        out.append(L._dynamo.disable(w)._torchdynamo_orig_callable is g)
        nonrec = L._dynamo.disable(g, recursive=False)
        out += [nonrec is g, nonrec._torchdynamo_disable_recursive, nonrec(2)]
        out.append(outcome(lambda: L._dynamo.disable(3)))
        out.append(L._dynamo.disable(L.nn.Linear) is L.nn.Linear)
        deco = L.compiler.disable()
        out.append(deco(g)(5))
        out.append(L.compiler.disable(g, reason="r")._torchdynamo_disable_msg)

        def use_as_context():
            with L._dynamo.disable():
                return 1
        out.append(outcome(use_as_context))
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_disable_module_gives_an_optimized_module_like_torch():
    def run(L):
        L.manual_seed(0)
        m = L.nn.Linear(2, 2)
        o = L._dynamo.disable(m)
        out = [type(o).__name__, isinstance(o, L._dynamo.OptimizedModule), repr(o),
               list(o.state_dict().keys()), o._orig_mod is m, o.weight is m.weight,
               [n for n, _ in o.named_parameters()]]
        o.eval()
        out.append(m.training)
        o.foo = 3
        out.append(getattr(m, "foo", None))
        x = L.ones(1, 2)
        out.append(L.equal(o(x), m(x)))
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_shape_markers_record_what_torch_records():
    def run(L):
        d = L._dynamo
        out = []
        x = L.ones(2, 3)
        d.mark_dynamic(x, 0)
        out.append(sorted(vars(x)))
        out.append((x._dynamo_dynamic_indices, x._specialize_on, x._dynamo_hint_overrides))
        y = L.ones(2, 3)
        d.mark_dynamic(y, [0, 1], min=2, max=10)
        out.append(sorted((r.dim, r.min, r.max) for r in y._dynamo_dynamic_range))
        z = L.ones(2, 3)
        d.mark_dynamic(z, 1, hint_override=4)
        out.append(z._dynamo_hint_overrides)
        w = L.ones(2, 3)
        d.maybe_mark_dynamic(w, [0, 1])
        out.append(vars(w))
        s = L.ones(2, 3)
        d.mark_static(s)
        out.append(vars(s))
        s1 = L.ones(2, 3)
        d.mark_static(s1, 1)
        out.append(vars(s1))

        class M(L.nn.Module):
            pass
        out.append(d.mark_static(M) is M and M._dynamo_marked_static)
        out.append(outcome(lambda: d.mark_static(3)))
        a = L.ones(2)
        d.mark_static_address(a)
        b = L.ones(2)
        d.mark_static_address(b, guard=True)
        out += [vars(a), vars(b), outcome(lambda: d.mark_static_address(3)),
                outcome(lambda: d.mark_dynamic(L.ones(2), "a"))]
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_config_fields_patch_and_errors_match_torch():
    fields = ["cache_size_limit", "accumulated_cache_size_limit", "recompile_limit",
              "accumulated_recompile_limit", "suppress_errors", "capture_scalar_outputs",
              "capture_dynamic_output_shape_ops", "verbose", "optimize_ddp",
              "automatic_dynamic_shapes", "assume_static_by_default", "specialize_int",
              "specialize_float", "dynamic_shapes", "guard_nn_modules", "allow_rnn",
              "error_on_recompile", "numpy_default_float", "use_numpy_random_stream",
              "compiled_autograd", "disable", "skip_fwd_side_effects_in_bwd_under_checkpoint",
              "force_parameter_static_shapes", "raise_on_ctx_manager_usage"]

    def run(L):
        c = L._dynamo.config
        out = [getattr(c, f) for f in fields]
        out.append(outcome(lambda: c.nonexistent_field))

        def set_unknown():
            c.nonexistent_field = 1
        out.append(outcome(set_unknown))
        old = c.cache_size_limit
        c.cache_size_limit = 16
        out.append((c.cache_size_limit, c.recompile_limit))
        c.recompile_limit = old
        with c.patch(suppress_errors=True):
            out.append(c.suppress_errors)
        out.append(c.suppress_errors)
        with c.patch({"verbose": True}):
            out.append(c.verbose)
        with c.patch("verbose", True):
            out.append(c.verbose)

        @c.patch(capture_scalar_outputs=True)
        def f():
            return c.capture_scalar_outputs
        def enter_unknown():
            with c.patch(nope=1):
                pass
        out += [f(), c.capture_scalar_outputs, outcome(enter_unknown)]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.append(c.inline_inbuilt_nn_modules)
            out.append([x.category for x in w])
        copy = c.get_config_copy()
        out.append(all(copy[k] == getattr(c, k) for k in fields if k in copy))
        return out
    mine, theirs = both(run)
    assert mine == theirs
    import sys
    assert sys.modules["glasstorch._dynamo.config"] is glasstorch._dynamo.config


def test_config_save_and_load_round_trip():
    c = glasstorch._dynamo.config
    blob = c.save_config()
    c.verbose = True
    c.load_config(blob)
    assert c.verbose is False


def test_backend_registry_matches_torch():
    def run(L):
        d = L._dynamo
        out = [d.list_backends(exclude_tags=()) and "eager" in d.list_backends(exclude_tags=()),
               "eager" in d.list_backends(), callable(d.lookup_backend("eager"))]

        def mybk_gt_test(gm, example_inputs):
            return gm.forward
        out.append(d.register_backend(mybk_gt_test, tags=("debug",)) is mybk_gt_test)
        out += ["mybk_gt_test" in d.list_backends(),
                "mybk_gt_test" in d.list_backends(exclude_tags=()),
                d.lookup_backend("mybk_gt_test") is mybk_gt_test,
                d.lookup_backend(mybk_gt_test) is mybk_gt_test, mybk_gt_test._tags,
                outcome(lambda: d.register_backend(mybk_gt_test)).__name__]
        deco = d.register_backend(name="named_gt_test")
        out.append(deco(lambda gm, ex: gm) is not None and "named_gt_test" in d.list_backends())
        try:
            d.lookup_backend("nope")
        except Exception as e:
            out += [type(e).__name__, isinstance(e, RuntimeError), str(e)]
        return out
    mine, theirs = both(run)
    assert mine == theirs
    assert glasstorch.compiler.list_backends(exclude_tags=()) == ["aot_eager", "eager", "inductor",
                                                                  "mybk_gt_test",
                                                                  "named_gt_test"]


def test_set_stance_matches_torch():
    def run(L):
        out = []
        s = L.compiler.set_stance("force_eager")
        out += [s.__enter__(), s.__exit__(None, None, None)]

        @L.compiler.set_stance("force_eager")
        def f():
            return 1
        out.append(f())
        out.append(outcome(lambda: L.compiler.set_stance("force_eager", force_backend="eager")))
        out.append(type(L._dynamo.set_stance("default")).__name__)
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_compiler_helpers_match_torch():
    def run(L):
        out = [L.compiler.cudagraph_mark_step_begin(), L.compiler.get_default_backend()]
        L.compiler.set_default_backend("eager")
        out.append(L.compiler.get_default_backend())
        L.compiler.set_default_backend("inductor")

        def f(a, b=None):
            return {"s": a * 2, "t": (a + 1, b)}
        wrapped = L.compiler.wrap_numpy(f)
        res = wrapped(L.ones(2), b=np.zeros(1))
        out += [type(res["s"]).__name__, res["s"].tolist(), res["t"][0].tolist(),
                res["t"][1].tolist()]

        def g(x):
            return x + 1
        region = L.compiler.nested_compile_region(g)
        out += [region(1), L.compiler.nested_compile_region()(g)(2)]
        out.append(L._dynamo.OptimizedModule.__name__)
        out.append(issubclass(L._dynamo.exc.InvalidBackend, L._dynamo.exc.TorchDynamoException))
        out.append(issubclass(L._dynamo.exc.Unsupported, RuntimeError))
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_compile_returns_an_optimized_module():
    # torch.compile(module) gives an OptimizedModule around it (accelerate unwraps _orig_mod)
    m = glasstorch.nn.Linear(2, 2)
    x = glasstorch.randn(3, 2)
    for compiled in (glasstorch.compile(m), glasstorch.compiler.compile(m)):
        assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is m
        assert glasstorch.equal(compiled(x), m(x))
    assert glasstorch.compile(m, disable=True) is m
