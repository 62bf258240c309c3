"""FakeData: random images, reproducible per index."""
import glasstorch

from ..transforms import functional as F
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """``size`` random PIL images of ``image_size`` (C, H, W) with random targets.

    Sample ``i`` is drawn from a generator seeded with ``i + random_offset``, so it is the same
    every time and the global generator is left untouched."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes = size, num_classes
        self.image_size, self.random_offset = image_size, random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        g = glasstorch.Generator().manual_seed(index + self.random_offset)
        img = glasstorch.randn(*self.image_size, generator=g)
        target = int(glasstorch.randint(0, self.num_classes, size=(1,), generator=g).item())
        img = F.to_pil_image(img)  # as torchvision: x*255 wraps into uint8, noise-like pixels
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.size
