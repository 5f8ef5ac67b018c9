"""The ASGI app (Starlette) serving models on the Open Inference Protocol (KServe v2).

Endpoints (every error is ``{"error": message}``; unknown models and versions 404):

==========================================  =========================================
``GET /v2``                                 server metadata (name, version, extensions)
``GET /v2/health/live``                     200 while the server runs
``GET /v2/health/ready``                    200 once every model is ready
``GET /v2/models/{name}[/versions/{v}]``    model metadata (inputs, outputs, ...)
``GET .../ready``                           200 when the model is ready
``GET .../config``                          the model as Triton's model configuration
``POST .../infer``                          inference (JSON or binary tensors)
``GET /metrics``                            Prometheus text metrics
==========================================  =========================================

Example:
    >>> import os, tempfile
    >>> from core import nd, sym, model
    >>> from core.serving import create_app, load_model
    >>> net = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    >>> prefix = os.path.join(tempfile.mkdtemp(), "net")
    >>> model.save_checkpoint(prefix, 0, net, {"fc_weight": nd.ones((2, 3)),
    ...                                       "fc_bias": nd.zeros((2,))}, {})
    >>> app = create_app([load_model("net", prefix)])
    >>> sorted({r.path for r in app.routes})[:3]
    ['/metrics', '/v2', '/v2/health/live']
"""
from __future__ import annotations

import contextlib
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from .batcher import Batcher
from .codec import (
    HEADER_LENGTH,
    body_too_large,
    decode_request,
    decompress,
    encode_response,
)
from .errors import InferenceError
from .metrics import Metrics

__all__ = ["SERVER_NAME", "create_app"]

_LOG = logging.getLogger(__name__)
SERVER_NAME = "kbackend"
EXTENSIONS = ["binary_tensor_data", "classification"]


def _starlette():
    try:
        import starlette  # noqa: F401
    except ImportError:
        raise ImportError("core.serving needs starlette and uvicorn: pip install "
                          "'kbackend[serve]'") from None
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.gzip import GZipMiddleware
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

    gzip = Middleware(GZipMiddleware, minimum_size=1024)
    return Starlette, HTTPException, JSONResponse, PlainTextResponse, Response, Route, gzip


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kbackend")
    except Exception:  # noqa: BLE001 - not installed (a source checkout)
        return "0.1.0"


def create_app(models, max_batch_size: int = 32, max_latency_ms: float = 5.0,
               workers: int = 1, metrics: Metrics | None = None,
               max_request_bytes: int = 64 << 20):
    """The Starlette app serving ``models``.

    Args:
        models: :class:`~core.serving.model.ServedModel` objects (names must differ).
        max_batch_size: most samples the batcher puts into one model run.
        max_latency_ms: longest a request waits for others to join its batch.
        workers: inference threads (each model runs up to this many batches at once).
        metrics: a :class:`~core.serving.metrics.Metrics` (default: a new one).
        max_request_bytes: the largest request body (decompressed) accepted; larger
            ones get 413.

    Returns:
        A Starlette application; its thread pool and batchers start with its lifespan.
    """
    (Starlette, HTTPException, JSONResponse, PlainTextResponse, Response, Route,
     gzip) = _starlette()
    by_name = {}
    for m in models:
        if m.name in by_name:
            raise ValueError(f"create_app: two models are named {m.name!r}")
        by_name[m.name] = m
    metrics = metrics if metrics is not None else Metrics(max_batch_size)
    state = {"ready": False, "batchers": {}}

    def error(status: int, message: str):
        return JSONResponse({"error": message}, status_code=status)

    def lookup(request):
        name = request.path_params["name"]
        m = by_name.get(name)
        if m is None:
            raise InferenceError(404, f"unknown model {name!r}; served models: "
                                      f"{', '.join(sorted(by_name)) or 'none'}")
        version = request.path_params.get("version")
        if version is not None and version != m.version:
            raise InferenceError(404, f"model {name!r} has no version {version!r}; its "
                                      f"versions: {m.version}")
        return m

    async def server_metadata(request):
        return JSONResponse({"name": SERVER_NAME, "version": _version(),
                             "extensions": EXTENSIONS})

    async def live(request):
        return Response(status_code=200)

    async def ready(request):
        return Response(status_code=200 if state["ready"] else 503)

    async def model_metadata(request):
        try:
            m = lookup(request)
        except InferenceError as e:
            metrics.request("", "metadata", e.status)
            return error(e.status, e.message)
        metrics.request(m.name, "metadata", 200)
        return JSONResponse(m.metadata())

    async def model_config(request):
        try:
            m = lookup(request)
        except InferenceError as e:
            return error(e.status, e.message)
        return JSONResponse(m.triton_config(max_batch_size, max_latency_ms))

    async def model_ready(request):
        try:
            m = lookup(request)
        except InferenceError as e:
            return error(e.status, e.message)
        return Response(status_code=200 if m.name in state["batchers"] else 503)

    async def read_body(request, name: str) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_request_bytes:
            raise body_too_large(name, max_request_bytes)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_request_bytes:
                raise body_too_large(name, max_request_bytes)
            chunks.append(chunk)
        return b"".join(chunks)

    async def infer(request):
        t0 = time.perf_counter()
        label = ""
        try:
            m = lookup(request)
            label = m.name
            batcher = state["batchers"].get(m.name)
            if batcher is None:
                raise InferenceError(503, f"model {m.name!r} is not ready")
            body = decompress(await read_body(request, m.name),
                              request.headers.get("content-encoding"), m.name,
                              max_request_bytes)
            req = decode_request(body, request.headers.get(HEADER_LENGTH), m.name)
            m.check_inputs(req.inputs)
            for o in req.outputs or ():
                m.output_spec(o.name)
            arrays = {n: a for n, (_, a) in req.inputs.items()}
            try:
                outs = await batcher.submit(arrays)
            except Exception as e:
                raise InferenceError(500, f"model {m.name!r} failed: {type(e).__name__}: "
                                          f"{e}") from e
            content, headers = encode_response(m, req, outs)
        except InferenceError as e:
            metrics.request(label, "infer", e.status, time.perf_counter() - t0)
            return error(e.status, e.message)
        metrics.request(label, "infer", 200, time.perf_counter() - t0)
        media = headers.pop("content-type")
        return Response(content, status_code=200, headers=headers, media_type=media)

    async def prometheus(request):
        return PlainTextResponse(metrics.render(),
                                 media_type="text/plain; version=0.0.4; charset=utf-8")

    async def http_error(request, exc):
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        if exc.status_code == 404:
            detail = f"no endpoint {request.method} {request.url.path}"
        elif exc.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}"
        return error(exc.status_code, detail)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        pool = ThreadPoolExecutor(max(1, int(workers)), thread_name_prefix="kbackend-infer")
        for m in by_name.values():
            b = Batcher(m, pool, max_batch_size, max_latency_ms, workers,
                        on_batch=metrics.batch)
            b.start()
            state["batchers"][m.name] = b
            metrics.set_ready(m.name, True)
        state["ready"] = True
        try:
            yield
        finally:
            state["ready"] = False
            for name, b in list(state["batchers"].items()):
                await b.stop()
                metrics.set_ready(name, False)
            state["batchers"].clear()
            pool.shutdown(wait=True)

    base = "/v2/models/{name}"
    versioned = base + "/versions/{version}"
    routes = [
        Route("/v2", server_metadata, methods=["GET"]),
        Route("/v2/health/live", live, methods=["GET"]),
        Route("/v2/health/ready", ready, methods=["GET"]),
        Route("/metrics", prometheus, methods=["GET"]),
    ]
    for prefix in (base, versioned):
        routes += [Route(prefix, model_metadata, methods=["GET"]),
                   Route(prefix + "/ready", model_ready, methods=["GET"]),
                   Route(prefix + "/config", model_config, methods=["GET"]),
                   Route(prefix + "/infer", infer, methods=["POST"])]
    # Responses over 1 KiB are gzip-compressed for clients that accept it (Triton's
    # clients ask with response_compression_algorithm="gzip").
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[gzip],
                    exception_handlers={HTTPException: http_error})
    app.state.metrics = metrics
    return app
