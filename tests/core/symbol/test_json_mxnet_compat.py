"""Symbol JSON written by real MXNet 1.x loads here and computes what MXNet computed.

The fixtures in ``tests/data/mxnet/json/`` were written by real MXNet 1.9.1
(``make_json_fixtures.py`` beside them): a graph composed with ``mx.sym`` (three heads,
hidden attributes, ``ctx_group``), a Gluon ``export``, and MXNet's own legacy 0.8.0 file
``save_000800.json`` (``param``/``attr`` keys, ``backward_source_id``, two-entry
references and heads, no auxiliary states) with what MXNet 1.9.1 makes of it. The last
test writes a loaded graph back and has real MXNet run it (skips without MXNet).
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from core import nd, sym
from gluon import SymbolBlock
from tests.mxnet_ref import requires_mxnet, run_mxnet

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "mxnet", "json")


def _f(name: str) -> str:
    return os.path.abspath(os.path.join(HERE, name))


def _run(prefix: str, inputs: list[str]):
    block = SymbolBlock.imports(_f(f"{prefix}-symbol.json"), inputs, _f(f"{prefix}-0000.params"))
    return block


def test_composed_symbol_matches_mxnet_outputs():
    block = _run("composed", ["data"])
    x = nd.array(np.load(_f("composed-input.npy")))
    outs = block(x)
    assert len(outs) == 3
    for i, out in enumerate(outs):
        want = np.load(_f(f"composed-output{i}.npy"))
        np.testing.assert_allclose(out.asnumpy().reshape(want.shape), want, rtol=1e-5,
                                   atol=1e-6, err_msg=f"output {i}")


def test_composed_symbol_keeps_mxnet_attributes():
    s = sym.load(_f("composed-symbol.json"))
    attrs = s.attr_dict()
    assert attrs["data"]["__lr_mult__"] == "0.5"
    assert attrs["data"]["__layout__"] == "NCHW"
    assert attrs["conv_weight"]["__ctx_group__"] == "dev1"
    assert attrs["conv_weight"]["__wd_mult__"] == "0.1"
    assert json.loads(attrs["conv_weight"]["__init__"])[0] == "xavier"
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert len(s.list_outputs()) == 3


def test_gluon_export_of_real_mxnet_matches_its_output():
    block = _run("gluon", ["data"])
    x = nd.array(np.load(_f("gluon-input.npy")))
    want = np.load(_f("gluon-output.npy"))
    np.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_load_000800():
    """MXNet's test_load_000800: the 0.8.0 file loads as the symbol it was saved from."""
    expected = json.load(open(_f("save_000800-expected.json")))
    s = sym.load(_f("save_000800.json"))
    loaded = expected["loaded"]
    assert s.list_arguments() == loaded["arguments"]
    assert s.list_auxiliary_states() == loaded["auxiliary_states"]
    assert s.list_outputs() == loaded["outputs"]
    original = expected["original"]
    assert s.list_arguments() == original["arguments"]
    assert s.list_auxiliary_states() == original["auxiliary_states"]
    ours = s.attr_dict()
    for name, kv in original["attr_dict"].items():
        assert name in ours, name
        for k, v in kv.items():
            if k.startswith("__") and k.endswith("__"):
                assert ours[name].get(k) == v, (name, k, ours[name].get(k), v)
    block = SymbolBlock.imports(_f("save_000800.json"), ["data", "softmax_label"],
                                _f("save_000800-0000.params"))
    x = nd.array(np.load(_f("save_000800-input.npy")))
    out = block(x, nd.zeros((1,)))
    np.testing.assert_allclose(out.asnumpy(), np.load(_f("save_000800-output.npy")),
                               rtol=1e-5, atol=1e-6)


def _doc(nodes, heads, **top):
    return json.dumps({"nodes": nodes, "heads": heads, **top})


def test_legacy_hidden_keys_and_missing_aux_inputs():
    text = _doc([
        {"op": "null", "param": {}, "name": "x", "inputs": [], "backward_source_id": -1,
         "attr": {"ctx_group": "g1", "lr_mult": "0.5"}},
        {"op": "BatchNorm", "param": {"fix_gamma": "False"}, "name": "bn",
         "inputs": [[0, 0]], "backward_source_id": -1,
         "attr": {"ctx_group": "g1", "gamma_wd_mult": "0.0"}},
        {"op": "argmax", "param": {"axis": "-1"}, "name": "am", "inputs": [[1, 0]],
         "backward_source_id": -1}], [[1, 0], [2, 0]])
    s = sym.load_json(text)
    assert s.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    attrs = s.attr_dict()
    assert {k: attrs["x"][k] for k in ("__ctx_group__", "__lr_mult__")} == \
        {"__ctx_group__": "g1", "__lr_mult__": "0.5"}
    assert attrs["bn"]["__ctx_group__"] == "g1"
    assert attrs["bn_moving_mean"]["__ctx_group__"] == "g1"
    # before 0.9.5, argmax's axis=-1 meant all axes
    am = [e.node for e in s.graph.outputs if e.node.name == "am"][0]
    assert am.attrs["axis"] is None


def test_heads_with_three_entries_and_node_row_ptr():
    text = _doc([{"op": "null", "name": "x", "inputs": []},
                 {"op": "relu", "name": "r", "attrs": {}, "inputs": [[0, 0, 0]]}],
                [[1, 0, 0]], arg_nodes=[0], node_row_ptr=[0, 1, 2],
                attrs={"mxnet_version": ["int", 10600]})
    s = sym.load_json(text)
    out = s.eval(x=nd.array([-1.0, 2.0]))[0]
    assert out.asnumpy().tolist() == [0.0, 2.0]


@requires_mxnet
def test_real_mxnet_runs_the_fixture_written_back(tmp_path):
    s = sym.load(_f("composed-symbol.json"))
    path = os.fspath(tmp_path / "again-symbol.json")
    s.save(path)
    text = open(path).read()
    assert "__kbackend__" not in text and '"training"' not in text
    out_file = os.fspath(tmp_path / "out.npz")
    run_mxnet(f"""
import numpy as np, mxnet as mx
blk = mx.gluon.SymbolBlock.imports({path!r}, ["data"], {_f("composed-0000.params")!r})
out = blk(mx.nd.array(np.load({_f("composed-input.npy")!r})))
np.savez({out_file!r}, *[o.asnumpy() for o in out])
""")
    z = np.load(out_file)
    for i in range(3):
        np.testing.assert_allclose(z[f"arr_{i}"], np.load(_f(f"composed-output{i}.npy")),
                                   rtol=1e-5, atol=1e-6)
