"""MXNet 1.9's ``gluon.contrib.data.sampler``: the ``IntervalSampler`` of :mod:`gluon.data`.

Example:
    >>> from gluon.contrib.data.sampler import IntervalSampler
    >>> len(IntervalSampler(10, 3, rollover=False))
    4
"""
from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]
