"""Helpers of the ONNX export tests: export, check, run with onnxruntime, compare."""
from __future__ import annotations

import numpy
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from core import nd
from core.onnx import export_graph


def run_onnx(model, feeds: dict) -> list:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def ours(symbol, params: dict, feeds: dict) -> list:
    """Our forward of ``symbol`` in inference mode."""
    args = {k: nd.array(v) for k, v in feeds.items()}
    args.update({k: (v if hasattr(v, "asnumpy") else nd.array(v)) for k, v in params.items()})
    return _eval(symbol, args)


def _eval(symbol, args):
    from core.symbol.graph import evaluate

    outs, _ = evaluate(symbol.graph, args, is_train=False)
    return [o.asnumpy() for o in outs]


def check(symbol, params, feeds: dict, rtol=1e-5, atol=1e-5, ref_only=None, **kw):
    """Export, check, run in onnxruntime and compare with our forward; returns the model.

    ``ref_only``: values our forward needs that are no graph inputs (loss labels)."""
    shapes = {k: v.shape for k, v in feeds.items()}
    types = {k: v.dtype for k, v in feeds.items()}
    model = export_graph(symbol, params, shapes, types, **kw)
    onnx.checker.check_model(model, full_check=True)  # with ONNX's type and shape checks
    got = run_onnx(model, {i.name: feeds[i.name] for i in model.graph.input})
    want = ours(symbol, params, {**feeds, **(ref_only or {})})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        numpy.testing.assert_allclose(g, w.astype(g.dtype), rtol=rtol, atol=atol)
    return model


def block_params(block) -> dict:
    return {name: p.data() for name, p in block.collect_params().items()}


def rand(*shape, seed=0, dtype=numpy.float32):
    return numpy.random.default_rng(seed).standard_normal(shape).astype(dtype)
