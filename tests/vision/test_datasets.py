"""glasstorch.vision.datasets: folders, FakeData, Digits, MNIST IDX files, CIFAR batches."""
import gzip
import os
import pickle

import numpy as np
import pytest

import glasstorch
import glasstorch.vision.transforms as T
from glasstorch.utils.data import DataLoader
from glasstorch.vision import datasets

Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def image_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("imgs")
    rng = np.random.RandomState(0)
    for ci, cls in enumerate(["cat", "dog", "emu"]):
        os.makedirs(root / cls / "sub")
        for k in range(12):
            arr = np.full((10, 12, 3), ci * 80, np.uint8) + rng.randint(0, 20, (10, 12, 3),
                                                                       dtype=np.uint8)
            where = root / cls / ("sub" if k % 4 == 0 else "") / f"{k:02d}.png"
            Image.fromarray(arr).save(where)
        (root / cls / "notes.txt").write_text("not an image")
    return root


def test_image_folder(image_tree):
    ds = datasets.ImageFolder(str(image_tree))
    assert ds.classes == ["cat", "dog", "emu"]
    assert ds.class_to_idx == {"cat": 0, "dog": 1, "emu": 2}
    assert len(ds) == 36 and ds.imgs is ds.samples
    assert ds.targets == [s[1] for s in ds.samples] == sorted(ds.targets)
    img, target = ds[13]
    assert img.mode == "RGB" and img.size == (12, 10) and target == 1
    assert np.asarray(img).min() >= 80
    tds = datasets.ImageFolder(str(image_tree), transform=T.ToTensor(),
                               target_transform=lambda t: t * 10)
    x, y = tds[30]
    assert tuple(x.shape) == (3, 10, 12) and y == 20
    only_sub = datasets.ImageFolder(str(image_tree), is_valid_file=lambda p: "sub" in p)
    assert len(only_sub) == 9
    texts = datasets.DatasetFolder(str(image_tree), loader=lambda p: open(p).read(),
                                   extensions=(".txt",))
    assert len(texts) == 3 and texts[2] == ("not an image", 2)
    with pytest.raises(ValueError):
        datasets.DatasetFolder(str(image_tree), loader=open)
    with pytest.raises(FileNotFoundError):
        datasets.DatasetFolder(str(image_tree), loader=open, extensions=(".xyz",))
    with pytest.raises(FileNotFoundError):
        datasets.ImageFolder(str(image_tree / "cat" / "sub"))


def test_image_folder_pipeline_with_workers(image_tree):
    tr = T.Compose([T.RandomResizedCrop(8, scale=(0.5, 1.0)), T.RandomHorizontalFlip(),
                    T.ToTensor(), T.Normalize([0.5] * 3, [0.25] * 3)])
    ds = datasets.ImageFolder(str(image_tree), transform=tr)
    glasstorch.manual_seed(0)
    loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=2)
    seen = 0
    model = glasstorch.nn.Sequential(glasstorch.nn.Flatten(), glasstorch.nn.Linear(192, 3))
    opt = glasstorch.optim.SGD(model.parameters(), lr=0.01)
    plain = datasets.ImageFolder(str(image_tree), transform=T.Compose(
        [T.Resize((8, 8)), T.ToTensor(), T.Normalize([0.5] * 3, [0.25] * 3)]))
    xs = glasstorch.stack([plain[i][0] for i in range(len(plain))])
    ys = glasstorch.tensor(plain.targets)

    def eval_loss():
        with glasstorch.no_grad():
            return float(glasstorch.nn.functional.cross_entropy(model(xs), ys))

    start = eval_loss()
    for _ in range(4):
        for x, y in loader:
            assert x.dtype == glasstorch.float32 and tuple(x.shape[1:]) == (3, 8, 8)
            assert y.dtype == glasstorch.int64
            loss = glasstorch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(y)
    assert seen == 4 * 36
    assert eval_loss() < 0.5 * start


def test_fakedata():
    ds = datasets.FakeData(size=5, image_size=(3, 6, 7), num_classes=4, transform=T.ToTensor())
    glasstorch.manual_seed(0)
    before = glasstorch.rand(3)
    a, ta = ds[2]
    glasstorch.manual_seed(0)
    b, tb = ds[2]
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ta == tb and 0 <= ta < 4 and tuple(a.shape) == (3, 6, 7)
    glasstorch.manual_seed(0)
    np.testing.assert_array_equal(glasstorch.rand(3).numpy(), before.numpy())  # rng untouched
    assert not np.array_equal(ds[1][0].numpy(), a.numpy())
    assert len(ds) == 5
    with pytest.raises(IndexError):
        ds[5]


def test_digits():
    ds = datasets.Digits()
    assert len(ds) == 1797
    x, y = ds[0]
    assert tuple(x.shape) == (1, 8, 8) and x.dtype == glasstorch.float32
    raw = np.load(os.path.join(os.path.dirname(glasstorch.__file__), "examples", "data",
                               "digits.npz"))
    np.testing.assert_allclose(x.numpy()[0], raw["images"][0] / 16.0)
    assert y == int(raw["labels"][0])
    assert len(datasets.Digits(train=True)) + len(datasets.Digits(train=False)) == 1797
    counts = np.bincount(ds.targets.numpy())
    assert counts.sum() == 1797 and (counts > 150).all()
    d2 = datasets.Digits(transform=T.Resize(16), target_transform=lambda t: -t)
    assert tuple(d2[3][0].shape) == (1, 16, 16) and d2[3][1] == -ds[3][1]


def _write_idx(path, arr, gz):
    codes = {np.dtype(np.uint8): 0x08}
    header = bytes([0, 0, codes[arr.dtype], arr.ndim])
    header += b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    opener = gzip.open if gz else open
    with opener(path + (".gz" if gz else ""), "wb") as f:
        f.write(header + arr.tobytes())


@pytest.mark.parametrize("cls,gz", [(datasets.MNIST, False), (datasets.FashionMNIST, True),
                                    (datasets.KMNIST, True)])
def test_mnist_family(tmp_path, cls, gz):
    raw = tmp_path / cls.__name__ / "raw"
    os.makedirs(raw)
    rng = np.random.RandomState(1)
    imgs = rng.randint(0, 256, (5, 28, 28)).astype(np.uint8)
    labels = np.array([3, 1, 4, 1, 5], np.uint8)
    _write_idx(str(raw / "t10k-images-idx3-ubyte"), imgs, gz)
    _write_idx(str(raw / "t10k-labels-idx1-ubyte"), labels, gz)
    ds = cls(str(tmp_path), train=False, transform=T.PILToTensor())
    assert len(ds) == 5 and len(ds.classes) == 10
    x, y = ds[2]
    np.testing.assert_array_equal(x.numpy()[0], imgs[2])
    assert y == 4 and ds.targets.dtype == glasstorch.int64
    with pytest.raises(RuntimeError, match="train-images-idx3-ubyte"):
        cls(str(tmp_path), train=True)
    with pytest.raises(RuntimeError, match="download"):
        cls(str(tmp_path), train=True, download=True)


@pytest.mark.parametrize("cls", [datasets.CIFAR10, datasets.CIFAR100])
def test_cifar(tmp_path, cls):
    folder = tmp_path / cls.base_folder
    os.makedirs(folder)
    rng = np.random.RandomState(2)
    data = rng.randint(0, 256, (4, 3072)).astype(np.uint8)
    labels = [0, 2, 1, 2]
    with open(folder / cls.test_list[0], "wb") as f:
        pickle.dump({"data": data, cls.label_key: labels}, f)
    with open(folder / cls.meta["filename"], "wb") as f:
        pickle.dump({cls.meta["key"]: ["a", "b", "c"]}, f)
    ds = cls(str(tmp_path), train=False)
    img, y = ds[1]
    assert img.mode == "RGB" and img.size == (32, 32) and y == 2
    np.testing.assert_array_equal(np.asarray(img), data[1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert ds.classes == ["a", "b", "c"] and ds.class_to_idx["c"] == 2
    with pytest.raises(RuntimeError, match=cls.train_list[0]):
        cls(str(tmp_path), train=True)
    with pytest.raises(RuntimeError, match="download"):
        cls(str(tmp_path / "none"), download=True)
