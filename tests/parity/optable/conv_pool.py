"""Convolution, pooling and vision kernels exposed as ``torch.xxx``."""


from ..harness import FLOATS, OpInfo, S, T, make_array

F32 = ("float32", "float64")
LOOSE = {"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-9), "float16": (1e-2, 1e-2),
         "bfloat16": (6e-2, 6e-2)}


def _a(rng, shape, dtype):
    return make_array(rng, shape, dtype, -2, 2)


def conv2d_samples(dt, rng):
    x, w, b = _a(rng, (2, 4, 5, 4), dt), _a(rng, (4, 2, 3, 2), dt), _a(rng, (4,), dt)
    yield S(x, w, b, 1, 1, 1, 2)
    yield S(T(x), w, None, (2, 1), 0, (1, 2), 2)
    yield S(x, _a(rng, (4, 4, 3, 3), dt), b, padding="same")
    yield S(x[0], _a(rng, (3, 4, 3, 3), dt), None, 2, 1)          # unbatched
    yield S(_a(rng, (0, 4, 5, 5), dt), _a(rng, (3, 4, 3, 3), dt))  # empty batch
    yield S(x, _a(rng, (4, 3, 3, 3), dt))                         # channel mismatch
    yield S(x, _a(rng, (6, 4, 9, 9), dt))                         # kernel too large


def conv1d_samples(dt, rng):
    x = _a(rng, (2, 4, 7), dt)
    yield S(x, _a(rng, (4, 4, 3), dt), _a(rng, (4,), dt), 2, 1, 2)
    yield S(x, _a(rng, (4, 2, 4), dt), None, 1, "same", 1, 2)
    yield S(T(x), _a(rng, (3, 4, 2), dt), None, 1, "valid")


def conv3d_samples(dt, rng):
    yield S(_a(rng, (1, 2, 4, 3, 3), dt), _a(rng, (2, 2, 2, 3, 2), dt), _a(rng, (2,), dt), 1, 1)


def conv_t2d_samples(dt, rng):
    x = _a(rng, (1, 4, 3, 3), dt)
    yield S(x, _a(rng, (4, 2, 3, 2), dt), _a(rng, (4,), dt), 2, 1, 1, 2)
    yield S(x, _a(rng, (4, 2, 3, 3), dt), None, 1, 0, 0, 1, 2)
    yield S(x, _a(rng, (4, 2, 3, 3), dt), None, 1, 0, 1)          # output_padding too big


def conv_t1d_samples(dt, rng):
    yield S(_a(rng, (2, 4, 5), dt), _a(rng, (4, 3, 3), dt), _a(rng, (3,), dt), 3, 1, 2)


def conv_t3d_samples(dt, rng):
    yield S(_a(rng, (1, 2, 3, 2, 3), dt), _a(rng, (2, 3, 2, 2, 2), dt), None, 2)


def convolution_samples(dt, rng):
    x = _a(rng, (1, 4, 5, 4), dt)
    yield S(x, _a(rng, (4, 2, 3, 3), dt), _a(rng, (4,), dt), [2, 1], [1, 0], [1, 1], False,
            [0, 0], 2)
    yield S(x, _a(rng, (4, 3, 2, 2), dt), None, [2, 2], [0, 1], [1, 1], True, [1, 0], 1)


def maxpool_samples(nd):
    def gen(dt, rng):
        x = _a(rng, (2, 2) + (7, 6, 5)[:nd], dt) if nd == 2 else \
            _a(rng, (1, 2, 5, 4, 5), dt)
        yield S(x, 2)
        yield S(x, 3, 2, 1, 1, True)
        yield S(T(x), 2, 1, 0, 2)
        yield S(x[0], 2)
        yield S(x, 2, 2, 2)                                         # pad too big
    return gen


def pool1d_samples(dt, rng):
    x = _a(rng, (2, 3, 9), dt)
    yield S(x, 3, 2, 1)
    yield S(x[0], 2)
    yield S(x, 2, 1, ceil_mode=True)


def adaptive1d_samples(dt, rng):
    x = _a(rng, (2, 3, 9), dt)
    yield S(x, 4)
    yield S(x, 1)
    yield S(T(x[0]), 5)


def pixel_shuffle_samples(dt, rng):
    yield S(_a(rng, (2, 8, 3, 2), dt), 2)
    yield S(_a(rng, (3, 2, 9, 4, 4), dt), 3)
    yield S(_a(rng, (2, 7, 3, 2), dt), 2)                           # not divisible


def pixel_unshuffle_samples(dt, rng):
    yield S(_a(rng, (2, 2, 6, 4), dt), 2)
    yield S(_a(rng, (2, 2, 6, 5), dt), 2)


def channel_shuffle_samples(dt, rng):
    yield S(_a(rng, (2, 6, 3, 2), dt), 3)
    yield S(_a(rng, (2, 6, 3), dt), 2)


def pad_samples(dt, rng):
    x = _a(rng, (2, 3, 4, 5), dt)
    yield S(x, [1, 2])
    yield S(x, [1, 0, 2, 3], 1.5)
    yield S(T(x), [-1, 2, 0, 1, 1, 1])
    yield S(x, [1, 2, 3])                                           # odd length


def affine_grid_samples(dt, rng):
    yield S(_a(rng, (2, 2, 3), dt), [2, 3, 4, 5], False)
    yield S(_a(rng, (2, 2, 3), dt), [2, 3, 4, 5], True)
    yield S(_a(rng, (1, 3, 4), dt), [1, 1, 3, 2, 4], False)


def _conv(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


OPS = [
    OpInfo("conv2d", _conv("conv2d"), conv2d_samples, dtypes=FLOATS + ("int64",), tol=LOOSE,
           grad=True),
    OpInfo("conv1d", _conv("conv1d"), conv1d_samples, dtypes=F32, tol=LOOSE, grad=True),
    OpInfo("conv3d", _conv("conv3d"), conv3d_samples, dtypes=F32, tol=LOOSE, grad=True),
    OpInfo("conv_transpose2d", _conv("conv_transpose2d"), conv_t2d_samples, dtypes=FLOATS,
           tol=LOOSE, grad=True),
    OpInfo("conv_transpose1d", _conv("conv_transpose1d"), conv_t1d_samples, dtypes=F32,
           tol=LOOSE, grad=True),
    OpInfo("conv_transpose3d", _conv("conv_transpose3d"), conv_t3d_samples, dtypes=F32,
           tol=LOOSE, grad=True),
    OpInfo("convolution", _conv("convolution"), convolution_samples, dtypes=F32, tol=LOOSE,
           grad=True),
    OpInfo("max_pool2d", _conv("max_pool2d"), maxpool_samples(2),
           dtypes=FLOATS + ("int64", "uint8"), grad=True),
    OpInfo("max_pool3d", _conv("max_pool3d"), maxpool_samples(3), dtypes=F32, grad=True),
    OpInfo("max_pool1d", _conv("max_pool1d"), pool1d_samples, dtypes=F32, grad=True),
    OpInfo("max_pool1d_with_indices", _conv("max_pool1d_with_indices"), pool1d_samples,
           dtypes=F32, grad=True),
    OpInfo("avg_pool1d", _conv("avg_pool1d"), pool1d_samples, dtypes=FLOATS, grad=True),
    OpInfo("adaptive_avg_pool1d", _conv("adaptive_avg_pool1d"), adaptive1d_samples,
           dtypes=FLOATS, grad=True),
    OpInfo("adaptive_max_pool1d", _conv("adaptive_max_pool1d"), adaptive1d_samples,
           dtypes=FLOATS, grad=True),
    OpInfo("pixel_shuffle", _conv("pixel_shuffle"), pixel_shuffle_samples,
           dtypes=F32 + ("int64",), grad=True),
    OpInfo("pixel_unshuffle", _conv("pixel_unshuffle"), pixel_unshuffle_samples, dtypes=F32,
           grad=True),
    OpInfo("channel_shuffle", _conv("channel_shuffle"), channel_shuffle_samples, dtypes=F32,
           covers=("native_channel_shuffle",), grad=True),
    OpInfo("constant_pad_nd", _conv("constant_pad_nd"), pad_samples,
           dtypes=F32 + ("int64", "bool"), grad=True),
    OpInfo("affine_grid_generator", _conv("affine_grid_generator"), affine_grid_samples,
           dtypes=F32, grad=True),
]

