"""Shared pieces of the serving tests: small exported models, their NumPy forward,
and a real server process on a free loopback port."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parents[3]
LABELS = [f"class-{i}" for i in range(3)]


def mlp_params(seed: int = 0) -> dict:
    rng = numpy.random.default_rng(seed)
    return {"fc1_weight": rng.standard_normal((8, 4)).astype("float32"),
            "fc1_bias": rng.standard_normal(8).astype("float32"),
            "fc2_weight": rng.standard_normal((3, 8)).astype("float32"),
            "fc2_bias": rng.standard_normal(3).astype("float32")}


def export_mlp(prefix: str, labels: bool = True, epoch: int = 0) -> dict:
    """``data (N, 4) -> softmax (N, 3)``, written as a checkpoint; returns the weights."""
    from core import model, nd, sym

    h = sym.Activation(sym.FullyConnected(sym.var("data"), num_hidden=8, name="fc1"),
                       act_type="relu", name="relu1")
    net = sym.softmax(sym.FullyConnected(h, num_hidden=3, name="fc2"), name="prob")
    params = mlp_params()
    model.save_checkpoint(prefix, epoch, net, {k: nd.array(v) for k, v in params.items()}, {})
    if labels:
        Path(f"{prefix}-synset.txt").write_text("\n".join(LABELS) + "\n", encoding="utf-8")
    return params


def mlp_forward(params: dict, x: numpy.ndarray) -> numpy.ndarray:
    h = numpy.maximum(x @ params["fc1_weight"].T + params["fc1_bias"], 0)
    z = h @ params["fc2_weight"].T + params["fc2_bias"]
    e = numpy.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def export_conv(prefix: str) -> dict:
    """``data (N, 2, H, W) -> Convolution 3x3 (N, 3, H-2, W-2)``: free spatial dims."""
    from core import model, nd, sym

    net = sym.Convolution(sym.var("data"), kernel=(3, 3), num_filter=3, name="conv")
    rng = numpy.random.default_rng(1)
    params = {"conv_weight": rng.standard_normal((3, 2, 3, 3)).astype("float32"),
              "conv_bias": rng.standard_normal(3).astype("float32")}
    model.save_checkpoint(prefix, 0, net, {k: nd.array(v) for k, v in params.items()}, {})
    return params


def conv_forward(params: dict, x: numpy.ndarray) -> numpy.ndarray:
    w, b = params["conv_weight"], params["conv_bias"]
    n, _, h, wd = x.shape
    out = numpy.zeros((n, w.shape[0], h - 2, wd - 2), "float32")
    for i in range(3):
        for j in range(3):
            out += numpy.einsum("nchw,oc->nohw", x[:, :, i:i + h - 2, j:j + wd - 2],
                                w[:, :, i, j])
    return out + b[None, :, None, None]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m core.serving ARGS`` on 127.0.0.1:<free port>, until :meth:`stop`."""

    def __init__(self, *args: str, timeout: float = 60.0):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "core.serving", "--host", "127.0.0.1", "--port",
             str(self.port), "--log-level", "warning", *args],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, text=True)
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited {self.proc.returncode}:\n"
                                   f"{self.output()}")
            try:
                if httpx.get(self.url + "/v2/health/ready", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server was not ready within {timeout} s")

    def stop(self, sig=signal.SIGTERM) -> tuple[int, str]:
        """Send ``sig``, wait; returns the exit status and the output."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        out = self.output()
        self.log.close()
        return self.proc.returncode, out

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()
