"""``kbackend-serve`` / ``python -m core.serving``: serve exported models over HTTP.

Usage:
    kbackend-serve --model digits=/models/digits[:EPOCH] [--model other=...]
                   [--input-shape digits/data=1,8,8] [--host 127.0.0.1] [--port 8000]
                   [--max-batch-size 32] [--max-latency-ms 5] [--workers 1]
                   [--max-request-mb 64] [--device cpu] [--log-level info]

``--workers`` is the number of inference threads (NumPy/BLAS release the GIL while
they compute); the server is one process. SIGINT and SIGTERM shut it down gracefully:
it stops accepting connections, finishes the requests in flight, and exits 0.
See docs/serving.md.
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys

from .model import load_model, parse_model_spec
from .signature import parse_shape

__all__ = ["build_parser", "main", "parse_input_shapes"]

_LOG = logging.getLogger("core.serving")


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser."""
    p = argparse.ArgumentParser(
        prog="kbackend-serve",
        description="Serve exported kbackend/MXNet models on the Open Inference Protocol "
                    "(KServe v2 REST).")
    p.add_argument("--model", action="append", required=True, metavar="NAME=PREFIX[:EPOCH]",
                   help="a model to serve: PREFIX-symbol.json and PREFIX-EPOCH.params "
                        "(default epoch: the highest present); repeatable")
    p.add_argument("--input-shape", action="append", default=[],
                   metavar="[MODEL/]INPUT=D1,D2,...",
                   help="the per-sample shape of an input (no batch dimension; -1 for any "
                        "size), for every model with that input or only MODEL's; repeatable")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: "
                                                       "%(default)s)")
    p.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    p.add_argument("--max-batch-size", type=int, default=32,
                   help="most samples per model run (1: no batching; default: %(default)s)")
    p.add_argument("--max-latency-ms", type=float, default=5.0,
                   help="longest a request waits for others to join its batch "
                        "(default: %(default)s)")
    p.add_argument("--workers", type=int, default=1,
                   help="inference threads (default: %(default)s)")
    p.add_argument("--max-request-mb", type=float, default=64.0,
                   help="largest request body, decompressed, in MiB (larger: 413; "
                        "default: %(default)s)")
    p.add_argument("--device", default="cpu",
                   help="where the models run: cpu, gpu or gpu:N (default: %(default)s)")
    p.add_argument("--log-level", default="info",
                   choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--no-warmup", action="store_true",
                   help="skip the one-sample run per model at start")
    return p


def parse_input_shapes(items, model_names) -> dict:
    """``["digits/data=1,8,8", "x=4"]`` -> ``{model: {input: shape}}``.

    Example:
        >>> parse_input_shapes(["digits/data=1,8,8", "x=4"], ["digits", "b"])
        {'digits': {'data': (1, 8, 8), 'x': (4,)}, 'b': {'x': (4,)}}
    """
    out: dict = {m: {} for m in model_names}
    for item in items:
        key, sep, dims = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--input-shape {item!r}: expected [MODEL/]INPUT=D1,D2,...")
        model, slash, name = key.rpartition("/")
        shape = parse_shape(dims, f"--input-shape {item!r}")
        if slash:
            if model not in out:
                raise ValueError(f"--input-shape {item!r}: no --model named {model!r}")
            out[model][name] = shape
        else:
            for per_model in out.values():
                per_model.setdefault(name, shape)
    return out


def _context(text: str):
    from ..context import cpu, gpu

    kind, _, idx = text.partition(":")
    if kind not in ("cpu", "gpu") or (idx and not idx.isdigit()):
        raise ValueError(f"--device {text!r}: expected cpu, gpu or gpu:N")
    return (cpu if kind == "cpu" else gpu)(int(idx or 0))


def _check(args) -> None:
    if args.max_batch_size < 1:
        raise ValueError(f"--max-batch-size must be >= 1, got {args.max_batch_size}")
    if args.max_latency_ms < 0:
        raise ValueError(f"--max-latency-ms must be >= 0, got {args.max_latency_ms}")
    if args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.max_request_mb <= 0:
        raise ValueError(f"--max-request-mb must be > 0, got {args.max_request_mb}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {args.port}")


def main(argv=None) -> int:
    """Run the server until SIGINT/SIGTERM; returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        import uvicorn
    except ImportError:
        print("kbackend-serve needs uvicorn and starlette: pip install 'kbackend[serve]'",
              file=sys.stderr)
        return 2
    from .app import create_app

    try:
        _check(args)
        specs = [parse_model_spec(s) for s in args.model]
        names = [s[0] for s in specs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"--model: the name {dup[0]!r} is given twice")
        shapes = parse_input_shapes(args.input_shape, names)
        ctx = _context(args.device)
        models = []
        for name, prefix, epoch in specs:
            m = load_model(name, prefix, epoch, input_shapes=shapes[name], ctx=ctx)
            if not args.no_warmup:
                m.warmup()
            _LOG.info("model %r: inputs %s, outputs %s%s", name,
                      [(t.name, t.datatype, list(t.shape)) for t in m.inputs],
                      [(t.name, t.datatype, list(t.shape)) for t in m.outputs],
                      f", {len(m.labels)} labels" if m.labels else "")
            models.append(m)
        app = create_app(models, args.max_batch_size, args.max_latency_ms, args.workers,
                         max_request_bytes=int(args.max_request_mb * (1 << 20)))
    except (ValueError, FileNotFoundError, ImportError) as e:
        print(f"kbackend-serve: {e}", file=sys.stderr)
        return 2
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level,
                            lifespan="on", timeout_graceful_shutdown=30)
    server = uvicorn.Server(config)
    # uvicorn catches SIGINT/SIGTERM, shuts down gracefully, then raises the signal again
    # against the handlers it found; ignoring them there makes the clean stop exit 0.
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
