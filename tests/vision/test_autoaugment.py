"""AutoAugment policies, RandAugment, TrivialAugmentWide and AugMix against torchvision.

Reference data was recorded once from torchvision 0.29.1 by fixtures/record_augment.py: the
policy tables and magnitude bins, and outputs for fixed random choices (AutoAugment's
sub-policy/probabilities/signs, AugMix's Dirichlet weights and logged op chains), which the
tests replay here.
"""
import json
import os

import numpy as np
import pytest

import glasstorch
import glasstorch.vision.transforms as T
import glasstorch.vision.transforms.functional as F
from glasstorch.vision.transforms import v2

Image = pytest.importorskip("PIL.Image")

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
with open(os.path.join(FIX, "augment_tables.json")) as _f:
    META = json.load(_f)
OUT = dict(np.load(os.path.join(FIX, "augment_outputs.npz")))
U8 = glasstorch.from_numpy(OUT["input"])
H, W = U8.shape[-2:]
POLICIES = ["IMAGENET", "CIFAR10", "SVHN"]


def n(x):
    return np.asarray(x) if isinstance(x, Image.Image) else np.asarray(x.numpy())


def inputs(kind):
    if kind == "pil":
        return F.to_pil_image(U8)
    return U8 if kind == "u8" else F.convert_image_dtype(U8, glasstorch.float32)


def assert_image_close(got, want, kind, bilinear=False):
    if kind == "f32":
        np.testing.assert_allclose(n(got), want, rtol=0, atol=1e-6)
    elif bilinear:
        # glasstorch's grid_sample rounds its float32 sums differently from torch's fused
        # multiply-adds in the last bit; a rounded uint8 pixel can then land one level off
        # (amplified by a later Posterize), so a few pixels may differ
        diff = np.abs(n(got).astype(int) - want.astype(int))
        assert np.count_nonzero(diff) <= 2 and diff.max() <= 16
    else:
        np.testing.assert_array_equal(n(got), want)


def space_as_lists(space):
    return [[k, v, s] for k, (v, s) in space.items()]


@pytest.mark.parametrize("policy", POLICIES)
def test_policy_tables_match_torchvision(policy):
    ours = T.AutoAugment(T.AutoAugmentPolicy[policy]).policies
    assert [[list(step) for step in sub] for sub in ours] == META["policy_" + policy]
    assert T.AutoAugmentPolicy[policy].value == policy.lower()


def test_magnitude_bins_match_torchvision():
    # same op order (random picks index into it) and bit-identical float32 magnitudes
    assert space_as_lists(T.AutoAugment._augmentation_space(10, (H, W))) == \
        META["space_AutoAugment"]
    assert space_as_lists(T.RandAugment._augmentation_space(31, (H, W))) == \
        META["space_RandAugment"]
    assert space_as_lists(T.TrivialAugmentWide._augmentation_space(31)) == \
        META["space_TrivialAugmentWide"]
    assert space_as_lists(T.AugMix()._augmentation_space(10, (H, W))) == META["space_AugMix"]
    assert space_as_lists(T.AugMix(all_ops=False)._augmentation_space(10, (H, W))) == \
        META["space_AugMix_partial"]


def fixed_autoaugment(policy, monkeypatch, k):
    probs, signs = META["fixed_params"][k]
    monkeypatch.setattr(T.AutoAugment, "get_params", staticmethod(lambda num: (k, probs, signs)))
    return T.AutoAugment(T.AutoAugmentPolicy[policy])


@pytest.mark.parametrize("kind", ["u8", "pil", "f32"])
@pytest.mark.parametrize("policy", POLICIES)
def test_autoaugment_sub_policies_match_torchvision(policy, kind, monkeypatch):
    img = inputs(kind)
    want = OUT[f"aa_{kind}_{policy}"]
    for k in range(25):
        got = fixed_autoaugment(policy, monkeypatch, k)(img)
        assert type(got) is type(img)
        if kind != "pil":
            assert got.dtype == img.dtype and got.shape == img.shape
        assert_image_close(got, want[k], kind)


def test_autoaugment_batch_is_each_image(monkeypatch):
    batch = glasstorch.stack([U8, U8.flip(-1), U8.flip(-2)]).reshape(3, 1, 3, H, W)
    for k in (0, 3, 18):
        aug = fixed_autoaugment("SVHN", monkeypatch, k)
        out = aug(batch)
        assert out.shape == batch.shape and out.dtype == glasstorch.uint8
        for i in range(3):
            np.testing.assert_array_equal(n(out[i, 0]), n(aug(batch[i, 0])))


class ReplayAugMix(T.AugMix):
    """AugMix with torchvision's recorded weights and op chains instead of random draws."""

    def __init__(self, chains, mix_rows, chain_rows, **kw):
        super().__init__(chain_depth=2, **kw)
        self.chains, self.rows = list(chains), {2: mix_rows, self.mixture_width: chain_rows}

    def _sample_dirichlet(self, params):
        rows = self.rows[params.shape[-1]]
        assert params.shape[0] == len(rows)
        return glasstorch.tensor(rows, dtype=glasstorch.float32)

    def _sample_chain(self, space):
        chain, self.chains = self.chains[:2], self.chains[2:]
        assert all(op in space for op, _ in chain)
        return chain


AUGMIX_RUNS = {"u8": ("u8", {}), "pil": ("pil", {}), "f32": ("f32", {}),
               "u8_partial_nearest": ("u8", dict(all_ops=False, severity=10,
                                                  interpolation=F.InterpolationMode.NEAREST))}


@pytest.mark.parametrize("label", sorted(AUGMIX_RUNS))
def test_augmix_matches_torchvision(label):
    kind, kw = AUGMIX_RUNS[label]
    img = inputs(kind)
    for chains, want in zip(META["augmix_chains_" + label], OUT["augmix_" + label]):
        aug = ReplayAugMix(chains, [META["mix_weights"]], [META["chain_weights"]], **kw)
        got = aug(img)
        assert not aug.chains and type(got) is type(img)
        if kind == "pil":
            assert got.mode == img.mode and got.size == img.size
        else:
            assert got.dtype == img.dtype and got.shape == img.shape
        assert_image_close(got, want, kind, bilinear=aug.interpolation.value == "bilinear")


def test_augmix_batch_mixes_each_image_with_its_own_weights():
    chains = META["augmix_chains_u8"][1]
    mix_rows, chain_rows = [[0.2, 0.8], [0.9, 0.1]], [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]
    batch = glasstorch.stack([U8, U8.flip(-1)])
    out = ReplayAugMix(chains, mix_rows, chain_rows)(batch)
    assert out.shape == batch.shape and out.dtype == glasstorch.uint8
    for i in range(2):
        alone = ReplayAugMix(chains, mix_rows[i:i + 1], chain_rows[i:i + 1])(batch[i])
        np.testing.assert_array_equal(n(out[i]), n(alone))
    assert not np.array_equal(n(out[0]), n(out[1].flip(-1)))


AUGMENTS = [lambda: T.AutoAugment(T.AutoAugmentPolicy.CIFAR10),
            lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN, fill=128),
            lambda: T.AugMix(), lambda: T.AugMix(severity=10, chain_depth=3, all_ops=False),
            lambda: v2.AugMix(alpha=0.5)]


@pytest.mark.parametrize("make", AUGMENTS)
@pytest.mark.parametrize("kind", ["u8", "pil", "f32", "batch"])
def test_reproducible_and_types_preserved(make, kind):
    img = glasstorch.stack([U8, U8.flip(-1)]) if kind == "batch" else inputs(kind)

    def run(seed):
        glasstorch.manual_seed(seed)
        aug = make()
        return [aug(img) for _ in range(6)]

    first, again, other = run(3), run(3), run(4)
    for a, b in zip(first, again):
        assert type(a) is type(img)
        if kind == "pil":
            assert a.mode == img.mode and a.size == img.size
        else:
            assert a.dtype == img.dtype and a.shape == img.shape
        np.testing.assert_array_equal(n(a), n(b))
    assert any(not np.array_equal(n(a), n(b)) for a, b in zip(first, other))
    assert any(not np.array_equal(n(a), n(img)) for a in first)


def test_augmix_draws_mixing_weights_from_glasstorch_generator():
    got = []

    class Spy(T.AugMix):
        def _sample_dirichlet(self, params):
            w = super()._sample_dirichlet(params)
            got.append(n(w))
            return w

    glasstorch.manual_seed(0)
    Spy(mixture_width=4)(glasstorch.stack([U8] * 3))
    split, weights = got
    assert split.shape == (3, 2) and weights.shape == (3, 4) and split.dtype == np.float32
    np.testing.assert_allclose(split.sum(1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(weights.sum(1), 1.0, rtol=1e-6)
    assert not np.allclose(weights[0], weights[1])
    glasstorch.manual_seed(0)
    got.clear()
    Spy(mixture_width=4)(glasstorch.stack([U8] * 3))
    np.testing.assert_array_equal(got[1], weights)


def test_chain_depth_and_severity_limits():
    glasstorch.manual_seed(1)
    space = T.AugMix()._augmentation_space(10, (H, W))
    depths = {len(T.AugMix()._sample_chain(space)) for _ in range(60)}
    assert depths == {1, 2, 3}
    assert {len(T.AugMix(chain_depth=5)._sample_chain(space)) for _ in range(3)} == {5}
    low = {abs(m) for _ in range(60) for op, m in T.AugMix(severity=1)._sample_chain(space)
           if op in ("Rotate", "ShearX", "Brightness")}
    assert low == {0.0}
    rotations = [m for _ in range(80) for op, m in T.AugMix(severity=10)._sample_chain(space)
                 if op == "Rotate"]
    assert min(rotations) < 0 < max(rotations)
    assert all(m >= 0 for _ in range(40) for op, m in T.AugMix()._sample_chain(space)
               if op == "Solarize")
    with pytest.raises(ValueError, match="severity"):
        T.AugMix(severity=0)
    with pytest.raises(ValueError, match="severity"):
        T.AugMix(severity=11)
    with pytest.raises(ValueError, match="not recognized"):
        T.AutoAugment("cifar10")


def test_reprs_match_torchvision():
    ours = [T.AutoAugment(T.AutoAugmentPolicy.SVHN, fill=[1, 2, 3]), T.RandAugment(3, 5),
            T.TrivialAugmentWide(interpolation=F.InterpolationMode.BILINEAR),
            T.AugMix(severity=2, all_ops=False)]
    assert [repr(t) for t in ours] == META["reprs"]
