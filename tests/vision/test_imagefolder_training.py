"""End to end: PNG files on disk -> ImageFolder + transforms -> DataLoader workers -> resnet18.

The torchvision fine-tuning recipe (replace ``fc``, freeze the backbone, train briefly) on a
small synthetic three-class image set written with Pillow; plus the data-loading guarantees the
recipe relies on: augmentations differ between workers and replay under ``manual_seed``.
"""
import numpy as np
import pytest

import glasstorch
import glasstorch.vision.transforms as T
from glasstorch import nn
from glasstorch.utils.data import DataLoader, Subset
from glasstorch.vision import datasets, models

Image = pytest.importorskip("PIL.Image")
ImageDraw = pytest.importorskip("PIL.ImageDraw")

CLASSES = ("circle", "square", "triangle")
COLOURS = ((220, 60, 50), (60, 200, 70), (50, 80, 230))   # red circles, green squares...
PER_CLASS = {"train": 64, "val": 24}
SIZE = 32
MEAN, STD = [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]


def draw(shape, colour, rng):
    """A noisy background with one jittered, randomly placed shape."""
    img = Image.fromarray(rng.randint(0, 90, (SIZE, SIZE, 3)).astype(np.uint8))
    r = rng.randint(7, 12)
    cx, cy = rng.randint(r, SIZE - r, 2)
    fill = tuple(int(np.clip(c + rng.randint(-30, 31), 0, 255)) for c in colour)
    box = [cx - r, cy - r, cx + r, cy + r]
    pen = ImageDraw.Draw(img)
    if shape == "circle":
        pen.ellipse(box, fill=fill)
    elif shape == "square":
        pen.rectangle(box, fill=fill)
    else:
        pen.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fill)
    return img


@pytest.fixture(scope="module")
def image_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("shapes")
    rng = np.random.RandomState(0)
    for split, count in PER_CLASS.items():
        for shape, colour in zip(CLASSES, COLOURS):
            (root / split / shape).mkdir(parents=True)
            for k in range(count):
                draw(shape, colour, rng).save(root / split / shape / f"{k:03d}.png")
    return root


def train_transform():
    return T.Compose([T.RandomResizedCrop(SIZE, scale=(0.6, 1.0)), T.RandomHorizontalFlip(),
                      T.ToTensor(), T.Normalize(MEAN, STD)])


def finetunable_resnet18():
    model = models.resnet18()
    for p in model.parameters():
        p.requires_grad_(False)
    model.fc = nn.Linear(model.fc.in_features, len(CLASSES))
    return model


def accuracy(model, loader):
    right = total = 0
    with glasstorch.no_grad():
        for x, y in loader:
            right += int((model(x).argmax(1) == y).sum())
            total += len(y)
    return right / total


def test_finetune_resnet18_on_image_folder(image_root):
    glasstorch.manual_seed(0)
    train = datasets.ImageFolder(str(image_root / "train"), transform=train_transform())
    assert train.classes == sorted(CLASSES) and len(train) == 3 * PER_CLASS["train"]
    loader = DataLoader(train, batch_size=32, shuffle=True, num_workers=2)
    model = finetunable_resnet18()
    assert [n for n, p in model.named_parameters() if p.requires_grad] == ["fc.weight",
                                                                           "fc.bias"]
    opt = glasstorch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.003)
    losses = []
    # a frozen backbone is a fixed feature extractor: its BatchNorm layers keep their
    # running statistics (eval mode), so training and evaluation see the same features
    model.eval()
    for _ in range(3):
        for x, y in loader:
            assert x.shape[1:] == (3, SIZE, SIZE) and x.dtype == glasstorch.float32
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    val = datasets.ImageFolder(str(image_root / "val"), transform=T.Compose(
        [T.ToTensor(), T.Normalize(MEAN, STD)]))
    acc = accuracy(model, DataLoader(val, batch_size=72))
    assert acc > 0.6, f"accuracy {acc:.2f} does not beat chance (0.33) clearly"


def augmented_copies(root, seed, num_workers=2):
    """The same image fetched 6 times through the random pipeline, alternating workers."""
    glasstorch.manual_seed(seed)
    folder = datasets.ImageFolder(str(root / "train"), transform=train_transform())
    same = Subset(folder, [5] * 6)
    loader = DataLoader(same, batch_size=1, shuffle=True, num_workers=num_workers)
    return [x[0].numpy() for x, _ in loader]


def test_augmentations_differ_across_workers_and_replay_under_seed(image_root):
    first = augmented_copies(image_root, 3)
    again = augmented_copies(image_root, 3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    # items 0 and 1 come from different workers (round robin), whose generators differ
    assert not np.array_equal(first[0], first[1])
    assert len({a.tobytes() for a in first}) == len(first)
    other = augmented_copies(image_root, 4)
    assert not any(np.array_equal(a, b) for a, b in zip(first, other))
