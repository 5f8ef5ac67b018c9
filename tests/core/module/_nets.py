"""Small networks and data shared by the Module tests."""
from __future__ import annotations

import numpy as np

from core import nd, sym


def mlp(batchnorm: bool = False, hidden: int = 16, classes: int = 3):
    """data -> fc1 -> relu -> [bn] -> fc2 -> SoftmaxOutput."""
    h = sym.Activation(sym.FullyConnected(sym.var("data"), num_hidden=hidden, name="fc1"),
                       act_type="relu", name="relu1")
    if batchnorm:
        h = sym.BatchNorm(h, fix_gamma=False, name="bn")
    return sym.SoftmaxOutput(sym.FullyConnected(h, num_hidden=classes, name="fc2"),
                             name="softmax")


def data(n: int = 60, dim: int = 6, classes: int = 3, seed: int = 0):
    """A learnable classification problem: the class is the argmax of 3 features."""
    rs = np.random.RandomState(seed)
    x = rs.rand(n, dim).astype("float32")
    y = x[:, :classes].argmax(axis=1).astype("float32")
    return x, y


def init_params(shapes: dict, seed: int = 1) -> dict:
    """Deterministic parameters for ``{name: shape}``."""
    rs = np.random.RandomState(seed)
    return {k: (rs.randn(*s) * 0.3).astype("float32") for k, s in sorted(shapes.items())}


def as_nd(arrays: dict) -> dict:
    return {k: nd.array(v) for k, v in arrays.items()}
