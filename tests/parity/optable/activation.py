"""Activation, softmax, linear/bilinear, dropout, embedding and distance kernels."""

import importlib

import numpy as np

from ..harness import ALL, F32, FLOATS, REALS, E, OpInfo, S, T, make_array
from ..samples import unary

ACT_DTYPES = ("bool", "int64", "complex64") + FLOATS  # non-floats: the error type is checked


def _F(lib):
    # glasstorch.nn may not be imported by the package itself yet
    return importlib.import_module(lib.__name__ + ".nn.functional")


def _act(name, fn, dtypes=ACT_DTYPES, covers=(), grad=True, samples=unary):
    return OpInfo(name, fn, samples, dtypes=dtypes, covers=covers, grad=grad)


def _dim_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), 1)
    yield S(make_array(rng, (3, 4), dtype), 0)
    yield S(make_array(rng, (2, 3, 4), dtype), -1)
    yield S(T(make_array(rng, (4, 5), dtype)), 0)
    yield S(make_array(rng, (), dtype), 0)
    yield S(make_array(rng, (0, 3), dtype), 1)
    yield S(make_array(rng, (3, 4), dtype), 2)  # dim out of range


def _glu_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), -1)
    yield S(make_array(rng, (4, 3), dtype), 0)
    yield S(T(make_array(rng, (4, 6), dtype)), 1)
    yield S(make_array(rng, (3, 5), dtype), 1)  # odd size
    yield S(make_array(rng, (), dtype), 0)      # scalar


def _prelu_samples(dtype, rng):
    yield S(make_array(rng, (2, 3, 4), dtype), make_array(rng, (3,), dtype, 0, 1))
    yield S(make_array(rng, (2, 3), dtype), make_array(rng, (1,), dtype, 0, 1))
    yield S(make_array(rng, (5,), dtype), make_array(rng, (1,), dtype, 0, 1))
    yield S(T(make_array(rng, (3, 4), dtype)), make_array(rng, (4,), dtype, 0, 1))
    yield S(make_array(rng, (2, 3), dtype), make_array(rng, (2,), dtype))  # count mismatch


def _linear_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (5, 4), dtype),
            make_array(rng, (5,), dtype))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (5, 4), dtype))
    yield S(make_array(rng, (2, 3, 4), dtype), make_array(rng, (5, 4), dtype),
            make_array(rng, (5,), dtype))
    yield S(make_array(rng, (2, 3, 4), dtype), make_array(rng, (5, 4), dtype))
    yield S(make_array(rng, (4,), dtype), make_array(rng, (5, 4), dtype),
            make_array(rng, (5,), dtype))
    yield S(T(make_array(rng, (4, 3), dtype)), T(make_array(rng, (4, 5), dtype)),
            E(make_array(rng, (1,), dtype), (5,)))
    yield S(make_array(rng, (0, 4), dtype), make_array(rng, (5, 4), dtype),
            make_array(rng, (5,), dtype))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (5, 3), dtype))  # mismatch


def _bilinear_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 2), dtype),
            make_array(rng, (5, 4, 2), dtype), make_array(rng, (5,), dtype))
    yield S(make_array(rng, (2, 3, 4), dtype), make_array(rng, (2, 3, 2), dtype),
            make_array(rng, (5, 4, 2), dtype))
    yield S(T(make_array(rng, (4, 3), dtype)), make_array(rng, (3, 2), dtype),
            make_array(rng, (1, 4, 2), dtype), make_array(rng, (1,), dtype))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (2, 2), dtype),
            make_array(rng, (5, 4, 2), dtype))  # batch mismatch
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 2), dtype),
            make_array(rng, (5, 3, 2), dtype))  # weight mismatch


def _embedding_samples(dtype, rng):
    w = make_array(rng, (6, 3), dtype)
    yield S(w, rng.integers(0, 6, (4,)))
    yield S(T(make_array(rng, (3, 6), dtype)), rng.integers(0, 6, (2, 2)).astype(np.int32))
    yield S(w, np.array(3))
    yield S(w, np.array([0, 6]))          # out of range
    yield S(w, np.array([0.0, 1.0]))      # float indices


def _bag_samples(dtype, rng):
    w = make_array(rng, (6, 3), dtype)
    idx, off = np.array([0, 2, 2, 5, 1, 3, 4]), np.array([0, 2, 2, 5])
    for mode in (0, 1, 2):
        yield S(w, idx, off, False, mode)
        yield S(w, idx, off, False, mode, False, None, False, 2)  # padding_idx
    yield S(w, idx, off, False, 0, False, make_array(rng, (7,), dtype))
    yield S(w, idx, np.array([0, 3, 7]), False, 1, False, None, True)


def _cos_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (1, 4), dtype), 1)
    yield S(make_array(rng, (2, 3, 4), dtype), make_array(rng, (2, 3, 4), dtype), -1)
    yield S(T(make_array(rng, (4, 3), dtype)), make_array(rng, (3, 4), dtype), 0)
    yield S(make_array(rng, (4,), dtype), make_array(rng, (4,), dtype), 0)


def _pd_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (4,), dtype), 1.0)
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype), 3.0, 1e-6, True)
    yield S(T(make_array(rng, (4, 3), dtype)), make_array(rng, (3, 4), dtype), float("inf"))


def _pdist_samples(dtype, rng):
    yield S(make_array(rng, (5, 3), dtype))
    yield S(make_array(rng, (5, 3), dtype), 1.0)
    yield S(make_array(rng, (4, 3), dtype), 3.0)
    yield S(T(make_array(rng, (3, 4), dtype)), float("inf"))
    yield S(make_array(rng, (1, 3), dtype))
    yield S(make_array(rng, (2, 3, 4), dtype))  # not 2-D


def _dropout_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), 0.5, False)
    yield S(make_array(rng, (3, 4), dtype), 0.0, True)
    yield S(make_array(rng, (2, 3, 4), dtype), 1.0, True)
    yield S(make_array(rng, (3, 4), dtype), 1.5, True)  # bad p


def _random_dropout_samples(dtype, rng):
    yield S(make_array(rng, (3, 4, 2), dtype), 0.3, True)
    yield S(make_array(rng, (0, 4), dtype), 0.3, True)


OPS = [
    _act("relu", lambda lib, a: lib.relu(a), dtypes=ALL,
         covers=("Tensor.relu", "nn.functional.relu")),
    OpInfo("relu_", lambda lib, a: lib.relu_(a.clone()), unary, dtypes=REALS,
           covers=("Tensor.relu_", "nn.functional.relu_")),
    _act("hardtanh", lambda lib, a: _F(lib).hardtanh(a, -2.0, 3.0), dtypes=REALS,
         covers=("nn.functional.hardtanh",)),
    _act("relu6", lambda lib, a: _F(lib).relu6(a), dtypes=REALS,
         covers=("nn.functional.relu6",)),
    _act("hardtanh_", lambda lib, a: _F(lib).hardtanh_(a.clone()), dtypes=FLOATS, grad=False,
         covers=("nn.functional.hardtanh_",)),
    _act("leaky_relu", lambda lib, a: _F(lib).leaky_relu(a, 0.2),
         covers=("nn.functional.leaky_relu", "nn.functional.leaky_relu_")),
    _act("elu", lambda lib, a: _F(lib).elu(a, 0.7), covers=("nn.functional.elu",)),
    _act("elu_", lambda lib, a: _F(lib).elu_(a.clone()), dtypes=FLOATS, grad=False,
         covers=("nn.functional.elu_",)),
    _act("selu", lambda lib, a: lib.selu(a), covers=("nn.functional.selu", "selu_")),
    _act("celu", lambda lib, a: lib.celu(a, 1.5), covers=("nn.functional.celu", "celu_")),
    _act("gelu", lambda lib, a: _F(lib).gelu(a), covers=("nn.functional.gelu",)),
    _act("gelu_tanh", lambda lib, a: _F(lib).gelu(a, approximate="tanh")),
    _act("silu", lambda lib, a: _F(lib).silu(a), dtypes=("bool", "int64") + FLOATS,
         covers=("nn.functional.silu",)),
    _act("mish", lambda lib, a: _F(lib).mish(a), covers=("nn.functional.mish",)),
    _act("logsigmoid", lambda lib, a: _F(lib).logsigmoid(a),
         covers=("nn.functional.logsigmoid",)),
    _act("softplus", lambda lib, a: _F(lib).softplus(a), covers=("nn.functional.softplus",)),
    _act("softplus_beta", lambda lib, a: _F(lib).softplus(a, beta=2.0, threshold=3.0)),
    _act("hardswish", lambda lib, a: _F(lib).hardswish(a),
         covers=("nn.functional.hardswish",)),
    _act("hardsigmoid", lambda lib, a: _F(lib).hardsigmoid(a),
         covers=("nn.functional.hardsigmoid",)),
    _act("hardshrink", lambda lib, a: lib.hardshrink(a, 1.5),
         covers=("Tensor.hardshrink", "nn.functional.hardshrink")),
    _act("softshrink", lambda lib, a: _F(lib).softshrink(a, 1.5),
         covers=("nn.functional.softshrink",)),
    _act("threshold", lambda lib, a: lib.threshold(a, 0.5, -2.0), dtypes=ALL,
         covers=("nn.functional.threshold", "threshold_", "nn.functional.threshold_")),
    _act("tanhshrink", lambda lib, a: _F(lib).tanhshrink(a), dtypes=F32,
         covers=("nn.functional.tanhshrink",)),
    _act("softsign", lambda lib, a: _F(lib).softsign(a), dtypes=F32,
         covers=("nn.functional.softsign",)),
    _act("rrelu_eval", lambda lib, a: lib.rrelu(a), covers=("rrelu", "nn.functional.rrelu")),
    OpInfo("rrelu_train", lambda lib, a: _F(lib).rrelu(a, training=True), unary, dtypes=F32,
           nondeterministic=True, covers=("rrelu_", "nn.functional.rrelu_")),
    OpInfo("prelu", lambda lib, a, w: lib.prelu(a, w), _prelu_samples,
           dtypes=("int64",) + FLOATS, covers=("Tensor.prelu", "nn.functional.prelu"),
           grad=True),
    OpInfo("glu", lambda lib, a, d: _F(lib).glu(a, d), _glu_samples, dtypes=("int64",) + FLOATS,
           covers=("nn.functional.glu",), grad=True),
    OpInfo("softmax", lambda lib, a, d: lib.softmax(a, d), _dim_samples,
           dtypes=("int64",) + FLOATS, covers=("Tensor.softmax", "nn.functional.softmax"),
           grad=True),
    OpInfo("softmax_dtype", lambda lib, a, d: lib.softmax(a, d, dtype=lib.float64),
           _dim_samples, dtypes=("int64", "float32")),
    OpInfo("log_softmax", lambda lib, a, d: lib.log_softmax(a, d), _dim_samples,
           dtypes=("int64",) + FLOATS,
           covers=("Tensor.log_softmax", "nn.functional.log_softmax"), grad=True),
    OpInfo("softmin", lambda lib, a, d: _F(lib).softmin(a, d), _dim_samples, dtypes=F32,
           covers=("nn.functional.softmin",), grad=True),
    OpInfo("linear", lambda lib, *a: _F(lib).linear(*a), _linear_samples,
           dtypes=("int64",) + FLOATS, covers=("nn.functional.linear",), grad=True),
    OpInfo("normalize_zero", lambda lib, a: _F(lib).normalize(a),
           lambda d, r: [S(np.zeros((2, 3), d))], dtypes=F32, grad=True, gradcheck=False),
    # padding_idx and scale_grad_by_freq gradients are not the derivative: no gradcheck
    OpInfo("embedding_pad_freq", lambda lib, w, i, *a: lib.embedding(w, i, *a),
           lambda d, r: [S(make_array(r, (6, 3), d), np.array([0, 1, 1, 5, 1]), -1, True),
                         S(make_array(r, (6, 3), d), np.array([[0, 2], [2, 4]]), 2),
                         S(make_array(r, (6, 3), d), np.array([0, 2, 2]), 2, True)],
           dtypes=F32, grad=True, gradcheck=False),
    OpInfo("bilinear", lambda lib, *a: lib.bilinear(*a), _bilinear_samples, dtypes=FLOATS,
           covers=("nn.functional.bilinear",), grad=True,
           tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}),
    OpInfo("embedding", lambda lib, *a: lib.embedding(*a), _embedding_samples, dtypes=FLOATS,
           covers=("nn.functional.embedding",), grad=True),
    OpInfo("embedding_bag", lambda lib, *a: lib.embedding_bag(*a)[0], _bag_samples,
           dtypes=F32, covers=("nn.functional.embedding_bag",), grad=True),
    OpInfo("cosine_similarity", lambda lib, *a: lib.cosine_similarity(*a), _cos_samples,
           dtypes=("int64",) + FLOATS, covers=("nn.functional.cosine_similarity",),
           grad=True, tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("pairwise_distance", lambda lib, *a: lib.pairwise_distance(*a), _pd_samples,
           dtypes=FLOATS, covers=("nn.functional.pairwise_distance",), grad=True,
           tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("pdist", lambda lib, *a: lib.pdist(*a), _pdist_samples, dtypes=F32,
           covers=("nn.functional.pdist",), grad=True),
    OpInfo("one_hot", lambda lib, a, n=-1: _F(lib).one_hot(a, n),
           lambda d, r: [S(r.integers(0, 5, (3, 4))), S(r.integers(0, 3, (4,)), 6),
                         S(np.array(2), 3), S(np.array([1, 7]), 3), S(np.array([1, -1])),
                         S(np.zeros(0, np.int64)), S(np.array([1.0]))],
           dtypes=("int64",), covers=("nn.functional.one_hot",)),
    OpInfo("normalize", lambda lib, a, *r: _F(lib).normalize(a, *r),
           lambda d, r: [S(make_array(r, (3, 4), d)), S(make_array(r, (3, 4), d), 1.0, 0),
                         S(T(make_array(r, (4, 3), d)), 3.0, -1)],
           dtypes=F32, covers=("nn.functional.normalize",), grad=True),
    OpInfo("dropout", lambda lib, a, p, t: lib.dropout(a, p, t), _dropout_samples,
           dtypes=FLOATS, covers=("nn.functional.dropout", "dropout_", "feature_dropout",
                                  "feature_dropout_"), grad=True),
    OpInfo("alpha_dropout", lambda lib, a, p, t: lib.alpha_dropout(a, p, t), _dropout_samples,
           dtypes=F32, covers=("nn.functional.alpha_dropout", "alpha_dropout_",
                               "feature_alpha_dropout", "feature_alpha_dropout_",
                               "nn.functional.feature_alpha_dropout"), grad=True),
    OpInfo("dropout_train", lambda lib, a, p, t: lib.dropout(a, p, t), _random_dropout_samples,
           dtypes=FLOATS, nondeterministic=True),
    OpInfo("feature_dropout_train", lambda lib, a, p, t: lib.feature_dropout(a, p, t),
           _random_dropout_samples, dtypes=F32, nondeterministic=True,
           covers=("nn.functional.dropout1d", "nn.functional.dropout2d",
                   "nn.functional.dropout3d")),
    OpInfo("native_dropout", lambda lib, a, p, t: lib.native_dropout(a, p, t),
           _random_dropout_samples, dtypes=F32, nondeterministic=True),
]
