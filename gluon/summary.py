"""The table printed by :meth:`Block.summary`: each layer's output shape and parameter
count, with totals (MXNet Gluon 1.9's ``Block.summary``)."""
from __future__ import annotations

from collections import OrderedDict

import numpy

from core.ndarray import NDArray

__all__ = ["print_summary"]


def print_summary(net, *inputs) -> None:
    """Run ``net`` once on ``inputs`` and print its layers' output shapes and parameter
    counts, with totals (see :meth:`gluon.Block.summary`).

    Args:
        net: an initialized Block, not hybridized.
        *inputs: its inputs.

    Raises:
        AssertionError: a block of ``net`` is hybridized (MXNet's check).
    """
    from .containers import HybridSequential, Sequential  # containers import gluon.block

    rows = OrderedDict()
    seen = set()
    handles = []
    rows["Input"] = {"output_shape": _shape_str(inputs), "n_params": 0, "trainable": 0,
                     "shared": 0}

    def hook(block, _, outputs):
        key = f"{type(block).__name__}-{len(rows)}"
        row = {"output_shape": _shape_str(outputs), "n_params": 0, "trainable": 0,
               "shared": 0}
        for p in block._own_params():
            size = int(numpy.prod(p.shape)) if p.shape is not None else 0
            row["n_params"] += size
            if p.grad_req != "null":
                row["trainable"] += size
            if id(p) in seen:
                row["shared"] += size
            else:
                seen.add(id(p))
        rows[key] = row

    def register(block):
        if getattr(block, "_active", False):
            # MXNet's summary asserts this: a hybridized block's children run inside its
            # graph, so their hooks would never fire
            raise AssertionError(f'"{block.name}" must not be hybridized to print summary '
                                 "(call hybridize(False) first)")
        if not isinstance(block, (Sequential, HybridSequential)):
            handles.append(block.register_forward_hook(hook))

    try:
        net.apply(register)
        net(*inputs)
        fmt = "{:>20}  {:>42} {:>15}"
        lines = ["-" * 80, fmt.format("Layer (type)", "Output Shape", "Param #"), "=" * 80]
        total = trainable = shared = 0
        for name, row in rows.items():
            lines.append(fmt.format(name, row["output_shape"], row["n_params"]))
            total += row["n_params"]
            trainable += row["trainable"]
            shared += row["shared"]
        lines += ["=" * 80,
                  "Parameters in forward computation graph, duplicate included",
                  f"   Total params: {total}",
                  f"   Trainable params: {trainable}",
                  f"   Non-trainable params: {total - trainable}",
                  f"Shared params in forward computation graph: {shared}",
                  f"Unique parameters in model: {total - shared}",
                  "-" * 80]
        print("\n".join(lines))
    finally:
        for h in handles:
            h.detach()


def _shape_str(args) -> str:
    def shapes(a):
        if isinstance(a, (list, tuple)):
            return [shapes(x) for x in a]
        return tuple(a.shape) if isinstance(a, NDArray) else a

    s = shapes(args)
    return str(s)[1:-1] if isinstance(s, list) else str(s)
