"""Serve a digits classifier over HTTP on the Open Inference Protocol (KServe v2).

Trains a small Gluon CNN on scikit-learn's bundled 8x8 digits (nothing is
downloaded), exports it (``HybridBlock.export``: ``digits-symbol.json`` and
``digits-0000.params``) with a ``digits-signature.json`` (its input is
``data: [-1, 1, 8, 8]``) and a ``synset.txt`` of labels, and starts the model server
(``python -m core.serving``, the ``kbackend-serve`` command) on a free port of
127.0.0.1. Then it talks to it as any client would, with plain HTTP:

* reads the model's metadata (``GET /v2/models/digits``);
* asks for the top-2 classes of five test images in one JSON request (the
  classification extension: ``"score:index:label"`` strings);
* sends every test image as its own request, 32 at a time, with binary tensors, and
  checks each answer against the network's own prediction (the server batches them:
  the metrics say into how many model runs);
* stops the server with SIGTERM (a graceful shutdown, exit status 0).

Usage:
    python examples/serve_digits.py                 # 4 epochs, then serve
    python examples/serve_digits.py --short         # 1 epoch on a subset (a smoke run)
    python examples/serve_digits.py --out models/   # keep the exported files there
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx
import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import core
import gluon
from core import autograd, nd
from core.serving import write_signature
from gluon import nn

HEADER = "Inference-Header-Content-Length"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=4, help="passes over the training set")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and the init")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 1 epoch on a 512-example subset")
    p.add_argument("--out", default=None,
                   help="folder for the exported model (default: a temporary one, removed)")
    return p.parse_args(argv)


def load_data(seed: int, short: bool):
    digits = load_digits()
    x = (digits.images / 16.0).astype(numpy.float32)[:, None, :, :]
    y = digits.target.astype(numpy.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                              random_state=seed)
    if short:
        x_tr, y_tr = x_tr[:512], y_tr[:512]
    return (x_tr, y_tr), (x_te, y_te)


def train(x, y, epochs: int, seed: int) -> nn.HybridSequential:
    core.random.seed(seed)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1), nn.BatchNorm(momentum=0.7), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dense(64, activation="relu"), nn.Dense(10))
    net.initialize(core.init.Xavier(magnitude=2.24))
    net.hybridize()
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=32, shuffle=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.003})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        total, n = 0.0, 0
        for data, label in loader:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
            total, n = total + float(loss.mean().asscalar()), n + 1
        print(f"epoch {epoch}: loss {total / n:.4f}", flush=True)
    return net


def export(net, folder: str) -> str:
    """Write the model, its signature and its labels; returns the prefix."""
    prefix = os.path.join(folder, "digits")
    net.export(prefix)
    write_signature(prefix, {"data": (1, 8, 8)}, "float32")
    tmp = os.path.join(folder, ".synset.txt.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("".join(f"digit {d}\n" for d in range(10)))
    os.replace(tmp, os.path.join(folder, "synset.txt"))
    return prefix


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(prefix: str, port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "core.serving", "--model", f"digits={prefix}", "--port",
           str(port), "--max-batch-size", "64", "--max-latency-ms", "5", "--log-level",
           "warning"]
    print("$ kbackend-serve " + " ".join(cmd[3:]), flush=True)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with status {proc.returncode}")
        try:
            if httpx.get(url + "/v2/health/ready", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not become ready")


def top2(url: str, images: numpy.ndarray, output: str) -> list:
    body = {"id": "first-five", "inputs": [
        {"name": "data", "shape": list(images.shape), "datatype": "FP32",
         "data": images.reshape(-1).tolist()}],
        "outputs": [{"name": output, "parameters": {"classification": 2}}]}
    r = httpx.post(f"{url}/v2/models/digits/infer", json=body, timeout=30)
    r.raise_for_status()
    out = r.json()["outputs"][0]
    return [out["data"][i:i + 2] for i in range(0, len(out["data"]), 2)]


async def predict_all(url: str, images: numpy.ndarray, output: str,
                      concurrency: int = 32) -> numpy.ndarray:
    """One binary-tensor request per image, ``concurrency`` at a time."""
    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        async def one(img):
            raw = numpy.ascontiguousarray(img[None], "<f4").tobytes()
            head = json.dumps({"inputs": [
                {"name": "data", "shape": [1, 1, 8, 8], "datatype": "FP32",
                 "parameters": {"binary_data_size": len(raw)}}],
                "outputs": [{"name": output, "parameters": {"binary_data": True}}]}).encode()
            async with sem:
                r = await client.post("/v2/models/digits/infer", content=head + raw,
                                      headers={HEADER: str(len(head))})
            r.raise_for_status()
            n = int(r.headers[HEADER])
            return numpy.frombuffer(r.content[n:], "<f4").reshape(10)

        return numpy.stack(await asyncio.gather(*[one(img) for img in images]))


def metric(text: str, name: str) -> float:
    return sum(float(m.group(1)) for m in
               re.finditer(rf'^{name}\{{model="digits"\}} (\S+)$', text, re.MULTILINE))


def main(argv=None) -> None:
    args = parse_args(argv)
    (x_tr, y_tr), (x_te, y_te) = load_data(args.seed, args.short)
    epochs = 1 if args.short else args.epochs
    print(f"digits: training on {len(x_tr)} images for {epochs} epoch(s)", flush=True)
    net = train(x_tr, y_tr, epochs, args.seed)
    local = net(nd.array(x_te)).asnumpy()

    tmp = None if args.out else tempfile.TemporaryDirectory(prefix="serve_digits-")
    folder = args.out or tmp.name
    os.makedirs(folder, exist_ok=True)
    try:
        prefix = export(net, folder)
        print(f"exported {prefix}-symbol.json, {prefix}-0000.params, "
              f"{prefix}-signature.json and synset.txt", flush=True)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(prefix, port)
        try:
            meta = httpx.get(f"{url}/v2/models/digits").json()
            output = meta["outputs"][0]["name"]
            print(f"GET /v2/models/digits -> inputs {meta['inputs']}, outputs "
                  f"{meta['outputs']}", flush=True)
            for i, best in enumerate(top2(url, x_te[:5], output)):
                print(f"test image {i}: label {y_te[i]}, top-2 {best}", flush=True)
            start = time.perf_counter()
            scores = asyncio.run(predict_all(url, x_te, output))
            elapsed = time.perf_counter() - start
            if not numpy.allclose(scores, local, rtol=1e-4, atol=1e-4):
                raise SystemExit("the server's scores differ from the network's")
            text = httpx.get(f"{url}/metrics").text
            runs = metric(text, "kbackend_execution_count_total")
            print(f"{len(x_te)} requests in {elapsed:.2f} s, answered in {runs:.0f} model "
                  "runs (dynamic batching); every answer equals the network's own "
                  "prediction", flush=True)
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        print(f"server stopped (SIGTERM), exit status {code}", flush=True)
        if code != 0:
            raise SystemExit(f"the server exited with status {code}")
    finally:
        if tmp is not None:
            tmp.cleanup()
    acc = float((scores.argmax(axis=1) == y_te).mean())
    print(f"test accuracy: {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
