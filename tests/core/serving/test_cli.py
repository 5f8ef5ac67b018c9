"""The command line: argument checks, load errors, shutdown on SIGINT/SIGTERM."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")

from core import model as ckpt
from core import nd, sym
from core.serving.cli import main, parse_input_shapes

from .helpers import Server, export_mlp


@pytest.fixture(autouse=True)
def _never_serve(monkeypatch):
    """``main`` must fail before it serves; a server started here would never return."""
    import uvicorn

    def run(self):
        raise AssertionError("main() started serving")

    monkeypatch.setattr(uvicorn.Server, "run", run)


@pytest.mark.parametrize("args, words", [
    (["--model", "mlp"], ["NAME=PREFIX[:EPOCH]"]),
    (["--model", "bad/name=x"], ["'bad/name'"]),
    (["--model", "m=/nonexistent/net"], ["model 'm'", "/nonexistent/net-symbol.json"]),
    (["--model", "m=/x", "--max-batch-size", "0"], ["--max-batch-size"]),
    (["--model", "m=/x", "--workers", "0"], ["--workers"]),
    (["--model", "m=/x", "--device", "tpu"], ["--device 'tpu'"]),
])
def test_bad_arguments_exit_2_with_a_message(capsys, args, words):
    assert main(args) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, (w, err)


def test_model_given_twice_and_bad_input_shape(tmp_path, capsys):
    export_mlp(str(tmp_path / "mlp"))
    p = str(tmp_path / "mlp")
    assert main(["--model", f"a={p}", "--model", f"a={p}"]) == 2
    assert "'a' is given twice" in capsys.readouterr().err
    assert main(["--model", f"a={p}", "--input-shape", "a/data=4,x"]) == 2
    assert "not a shape" in capsys.readouterr().err
    assert main(["--model", f"a={p}", "--input-shape", "b/data=4"]) == 2
    assert "no --model named 'b'" in capsys.readouterr().err
    assert main(["--model", f"a={p}", "--input-shape", "a/pixels=4"]) == 2
    assert "the model's inputs are data" in capsys.readouterr().err
    assert main(["--model", f"a={p}:7"]) == 2
    assert "mlp-0007.params" in capsys.readouterr().err


def test_unknown_input_shape_is_not_guessed(tmp_path, capsys):
    prefix = str(tmp_path / "flat")
    net = sym.FullyConnected(sym.Flatten(sym.var("data")), num_hidden=2, name="fc")
    ckpt.save_checkpoint(prefix, 0, net, {"fc_weight": nd.ones((2, 6)),
                                          "fc_bias": nd.zeros((2,))}, {})
    assert main(["--model", f"flat={prefix}"]) == 2
    err = capsys.readouterr().err
    assert "cannot tell the per-sample shape of input 'data'" in err
    assert "--input-shape flat/data=" in err and "flat-signature.json" in err


def test_parse_input_shapes_applies_unscoped_shapes_to_every_model():
    assert parse_input_shapes(["data=1,-1", "b/data=3"], ["a", "b"]) == \
        {"a": {"data": (1, -1)}, "b": {"data": (3,)}}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_graceful_shutdown(tmp_path, sig):
    export_mlp(str(tmp_path / "mlp"))
    server = Server("--model", f"mlp={tmp_path / 'mlp'}")
    r = httpx.post(server.url + "/v2/models/mlp/infer", json={"inputs": [
        {"name": "data", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    assert r.status_code == 200
    code, out = server.stop(sig)
    assert code == 0, out


def test_input_shape_flag_and_console_script(tmp_path):
    script = Path(sys.executable).with_name("kbackend-serve")
    prefix = str(tmp_path / "flat")
    net = sym.FullyConnected(sym.Flatten(sym.var("data")), num_hidden=2, name="fc")
    ckpt.save_checkpoint(prefix, 0, net, {"fc_weight": nd.ones((2, 6)),
                                          "fc_bias": nd.zeros((2,))}, {})
    if not script.exists() and shutil.which("kbackend-serve") is None:
        pytest.skip("the kbackend-serve console script is not installed (pip install -e .)")
    proc = subprocess.run([str(script) if script.exists() else "kbackend-serve", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and "--max-latency-ms" in proc.stdout
    server = Server("--model", f"flat={prefix}", "--input-shape", "flat/data=2,3")
    try:
        meta = httpx.get(server.url + "/v2/models/flat").json()
        assert meta["inputs"][0]["shape"] == [-1, 2, 3]
        assert meta["outputs"][0]["shape"] == [-1, 2]
        r = httpx.post(server.url + "/v2/models/flat/infer", json={"inputs": [
            {"name": "data", "shape": [1, 2, 3], "datatype": "FP32", "data": [1] * 6}]})
        assert r.json()["outputs"][0]["data"] == [6.0, 6.0]
    finally:
        server.stop()
