"""glasstorch.vision.utils: make_grid, save_image, draw_bounding_boxes."""
import numpy as np
import pytest

import glasstorch
from glasstorch.vision import utils

Image = pytest.importorskip("PIL.Image")


def test_make_grid_layout():
    rng = np.random.RandomState(0)
    imgs = rng.rand(5, 3, 4, 6).astype(np.float32)
    g = utils.make_grid(glasstorch.from_numpy(imgs), nrow=2, padding=1, pad_value=0.5).numpy()
    assert g.shape == (3, 3 * 5 + 1, 2 * 7 + 1)
    for k in range(5):
        r, c = divmod(k, 2)
        np.testing.assert_array_equal(g[:, 1 + 5 * r:5 + 5 * r, 1 + 7 * c:7 + 7 * c], imgs[k])
    assert (g[:, 0] == 0.5).all() and (g[:, 11:, 8:] == 0.5).all()
    one = utils.make_grid(glasstorch.from_numpy(imgs[:1]))
    np.testing.assert_array_equal(one.numpy(), imgs[0])
    gray = utils.make_grid([glasstorch.ones(1, 2, 2)] * 3, padding=0)
    assert tuple(gray.shape) == (3, 2, 6)
    norm = utils.make_grid(glasstorch.from_numpy(imgs * 4 - 1), normalize=True, padding=0)
    assert abs(float(norm.min())) < 1e-6 and abs(float(norm.max()) - 1) < 1e-6
    ranged = utils.make_grid(glasstorch.from_numpy(imgs[:1] * 4 - 1), normalize=True,
                             value_range=(-1.0, 1.0))
    np.testing.assert_allclose(ranged.numpy(), np.clip(imgs[0] * 4 - 1, -1, 1) / 2 + 0.5,
                               atol=1e-6)


def test_save_image_roundtrip(tmp_path):
    rng = np.random.RandomState(1)
    x = rng.randint(0, 256, (3, 5, 7)).astype(np.float32) / 255
    path = tmp_path / "img.png"
    utils.save_image(glasstorch.from_numpy(x), str(path))
    back = np.asarray(Image.open(path))
    np.testing.assert_array_equal(back, np.round(x * 255).astype(np.uint8).transpose(1, 2, 0))
    utils.save_image(glasstorch.rand(4, 3, 5, 5), str(tmp_path / "grid.png"), nrow=2)
    assert Image.open(tmp_path / "grid.png").size == (2 * 7 + 2, 2 * 7 + 2)


def test_draw_bounding_boxes():
    img = glasstorch.zeros(3, 20, 20, dtype=glasstorch.uint8)
    boxes = glasstorch.tensor([[2.0, 3.0, 10.0, 12.0], [12, 12, 18, 18]])
    out = utils.draw_bounding_boxes(img, boxes, colors=["red", (0, 0, 255)]).numpy()
    assert out.dtype == np.uint8 and out.shape == (3, 20, 20)
    assert tuple(out[:, 3, 5]) == (255, 0, 0)  # top edge of box 0
    assert tuple(out[:, 7, 2]) == (255, 0, 0)  # left edge
    assert tuple(out[:, 7, 6]) == (0, 0, 0)  # inside, not filled
    assert tuple(out[:, 15, 18]) == (0, 0, 255)
    assert img.sum() == 0  # input untouched
    filled = utils.draw_bounding_boxes(img, boxes[:1], fill=True, colors="green").numpy()
    assert filled[1, 7, 6] > 0 and filled[0, 7, 6] == 0
    gray = utils.draw_bounding_boxes(glasstorch.zeros(1, 20, 20, dtype=glasstorch.uint8), boxes,
                                     labels=["a", "b"])
    assert tuple(gray.shape) == (1, 20, 20) and gray.numpy()[0, 3, 5] > 0
    with pytest.raises(ValueError):
        utils.draw_bounding_boxes(img.float(), boxes)
    with pytest.raises(ValueError):
        utils.draw_bounding_boxes(img, glasstorch.tensor([[5.0, 5, 1, 1]]))
    with pytest.raises(ValueError):
        utils.draw_bounding_boxes(img, boxes, labels=["a"])
