"""Block.save / Block.load (gluon/model_file.py): MXNet 1.9's structure file and
parameters, restored into a model created the same way."""
import json

import numpy as np
import pytest

from core import nd
from gluon import Block, nn


class _Chain(Block):
    def add(self, block):
        self._children[block.name + str(len(self._children))] = block

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x


def _net():
    inside = _Chain()
    inside.add(nn.Dense(4))
    net = _Chain()
    net.add(inside)
    net.add(nn.Dense(3))
    return net


def test_save_then_load_into_a_new_model_gives_the_same_outputs(tmp_path):
    net1 = _net()
    net1.initialize()
    net1.hybridize()
    x = nd.array(np.random.default_rng(0).normal(size=(2, 5)).astype("float32"))
    out1 = net1(x)
    prefix = str(tmp_path / "model")
    net1.save(prefix)
    model = json.loads((tmp_path / "model-model.json").read_text())
    top = model["_chain0"]
    assert top["orig_name"] == net1.name
    assert set(top["children"].values()) == set(net1._children)
    assert set(top) == {"orig_name", "children", "_chain1", "dense3"}  # depth-first keys
    assert "dense2" in top["_chain1"]
    dense = top["dense3"]
    assert dense["hybridized"] is True and dense["in_format"] == [0]
    assert json.loads(dense["symbol"])["nodes"]

    net2 = _net()  # other names (counters moved on), not initialized
    assert net2.name != net1.name
    net2.load(prefix)
    assert net2.name == net1.name and list(net2._children) == list(net1._children)
    np.testing.assert_allclose(net2(x).asnumpy(), out1.asnumpy(), rtol=1e-6)
    dense2 = list(net2._children.values())[1]
    assert dense2._active
    assert all(k.startswith(dense2.name + "_") for k in dense2.params)


def test_load_of_a_different_model_names_the_missing_entry(tmp_path):
    net = _net()
    net.initialize()
    net(nd.ones((1, 5)))
    net.save(str(tmp_path / "m"))
    other = _Chain()
    other.add(nn.Dense(4))
    with pytest.raises(ValueError, match=r"no entry 'dense1' for Dense"):
        other.load(str(tmp_path / "m"))
    (tmp_path / "bad-model.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not the dictionary Block.save writes"):
        other.load(str(tmp_path / "bad"))
