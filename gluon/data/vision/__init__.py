"""Vision data (MXNet 1.9's ``gluon.data.vision``): MNIST, FashionMNIST, CIFAR10 and
CIFAR100 read from local files (never downloaded), ``ImageRecordDataset`` and
``ImageFolderDataset``, and image ``transforms``.

Example:
    >>> from gluon.data.vision import transforms
    >>> t = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.5, 0.5)])
    >>> len(t)
    2
"""
from . import datasets, transforms
from .datasets import (
                       CIFAR10,
                       CIFAR100,
                       MNIST,
                       FashionMNIST,
                       ImageFolderDataset,
                       ImageRecordDataset,
)

__all__ = ["CIFAR10", "CIFAR100", "MNIST", "FashionMNIST", "ImageFolderDataset",
           "ImageRecordDataset", "datasets", "transforms"]
