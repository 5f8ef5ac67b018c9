"""MXNet 1.9's ``gluon.contrib.data``: ``IntervalSampler`` and ``text`` (WikiText-2/103,
read from local files: nothing is downloaded).

Example:
    >>> from gluon.contrib.data import IntervalSampler
    >>> list(IntervalSampler(5, 2))
    [0, 2, 4, 1, 3]
"""
from . import sampler, text
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler", "text"]
