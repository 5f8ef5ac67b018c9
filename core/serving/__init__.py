"""A model server for exported graphs on the Open Inference Protocol (KServe v2 REST).

``kbackend-serve --model digits=/models/digits`` (or ``python -m core.serving``) loads
``digits-symbol.json`` and its ``.params`` and answers the protocol's endpoints
(``/v2/health/ready``, ``/v2/models/digits``, ``POST /v2/models/digits/infer``, ...)
with dynamic batching and Prometheus metrics at ``/metrics``. See docs/serving.md.

The pieces, one job each: :mod:`.datatypes` (protocol datatypes and binary tensors),
:mod:`.signature` (per-sample input shapes), :mod:`.model` (one loaded model and its
executors), :mod:`.codec` (request and response bodies), :mod:`.batcher` (dynamic
batching), :mod:`.metrics` (the Prometheus text), :mod:`.app` (the ASGI app: needs
starlette), :mod:`.cli` (the command: needs uvicorn). Only ``app`` and ``cli`` need the
``[serve]`` extra, and they import it when they are used.
"""
from __future__ import annotations

from .model import ServedModel, load_model, parse_model_spec
from .signature import read_signature, write_signature

__all__ = ["ServedModel", "create_app", "load_model", "parse_model_spec", "read_signature",
           "write_signature"]


def create_app(*args, **kwargs):
    """:func:`core.serving.app.create_app` (imported on use: it needs starlette)."""
    from .app import create_app as _create

    return _create(*args, **kwargs)
