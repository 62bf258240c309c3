"""Datasets (torchvision.datasets): folder trees, FakeData, MNIST family, CIFAR, Digits."""
from .cifar import CIFAR10, CIFAR100
from .digits import Digits
from .fakedata import FakeData
from .folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from .mnist import KMNIST, MNIST, FashionMNIST
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "Digits", "FakeData", "DatasetFolder", "ImageFolder",
           "IMG_EXTENSIONS", "default_loader", "pil_loader", "MNIST", "FashionMNIST", "KMNIST",
           "VisionDataset"]
