"""grid_sampler (the kernel behind F.grid_sample)."""

from ..harness import OpInfo, S, make_array


def _samples(dtype, rng):
    for mode in (0, 1, 2):
        for padding in (0, 1, 2):
            for align in (False, True):
                grid = make_array(rng, (2, 3, 4, 2), dtype, -1.2, 1.2)
                yield S(make_array(rng, (2, 2, 4, 5), dtype), grid, mode, padding, align)
    yield S(make_array(rng, (1, 2, 3, 4, 5), dtype), make_array(rng, (1, 2, 2, 2, 3), dtype,
                                                                -1, 1), 0, 0, False)
    yield S(make_array(rng, (2, 2, 4, 5), dtype), make_array(rng, (3, 3, 4, 2), dtype), 0, 0,
            False)  # batch mismatch: RuntimeError


OPS = [
    OpInfo("grid_sampler", lambda lib, x, g, m, p, a: lib.grid_sampler(x, g, m, p, a), _samples,
           dtypes=("float32", "float64"), grad=True, gradcheck=False),
]
