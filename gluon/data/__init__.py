"""Data loading (MXNet 1.9's ``gluon.data``): datasets, samplers, ``DataLoader``, and
``vision`` (MNIST, FashionMNIST, CIFAR-10/100 from local files; image transforms).

Example:
    >>> import numpy as np
    >>> from gluon.data import ArrayDataset, DataLoader
    >>> ds = ArrayDataset(np.random.rand(6, 3).astype('float32'), np.arange(6))
    >>> for data, label in DataLoader(ds, batch_size=4, last_batch='discard'):
    ...     print(data.shape, label.dtype)
    (4, 3) int64
"""
from . import batchify, dataloader, dataset, sampler, vision
from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import (
                      BatchSampler,
                      FilterSampler,
                      IntervalSampler,
                      RandomSampler,
                      Sampler,
                      SequentialSampler,
                      SplitSampler,
)

__all__ = [
    "ArrayDataset",
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "FilterSampler",
    "IntervalSampler",
    "RandomSampler",
    "RecordFileDataset",
    "Sampler",
    "SequentialSampler",
    "SimpleDataset",
    "SplitSampler",
    "batchify",
    "dataloader",
    "dataset",
    "default_batchify_fn",
    "default_mp_batchify_fn",
    "sampler",
    "vision",
]
