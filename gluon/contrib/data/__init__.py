"""MXNet 1.9's ``gluon.contrib.data``: ``IntervalSampler``.

MXNet's ``contrib.data.text`` (WikiText-2/103) downloads its corpora and is not provided.

Example:
    >>> from gluon.contrib.data import IntervalSampler
    >>> list(IntervalSampler(5, 2))
    [0, 2, 4, 1, 3]
"""
from . import sampler
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler"]


def __getattr__(name: str):
    if name == "text":
        raise ModuleNotFoundError(
            "gluon.contrib.data.text (MXNet's WikiText2/WikiText103) downloads its corpora "
            "and has no counterpart here; read the files with gluon.data.SimpleDataset",
            name="gluon.contrib.data.text")
    raise AttributeError(f"module 'gluon.contrib.data' has no attribute {name!r}")
