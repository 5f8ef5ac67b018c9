"""SymbolBlock's structural parameter names (gluon/symbol_block.py): MXNet 1.9 drops the
common prefix of the variables' names, so a model holding a SymbolBlock saves and loads
whatever prefix counters its variables got."""
import numpy as np

from core import initializer, nd, sym
from gluon import HybridBlock, SymbolBlock, nn


def _backbone_block(fixed_names=False):
    backbone = nn.HybridSequential()
    if fixed_names:
        backbone.add(nn.Dense(4, in_units=3, prefix="dense0_"),
                     nn.Dense(2, in_units=4, prefix="dense1_"))
    else:  # the counters' names, which differ from one instance to the next
        backbone.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=4))
    data = sym.var("data")
    return SymbolBlock(backbone(data), data, params=backbone.collect_params()), backbone


class _Net(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.backbone, _ = _backbone_block()
            self.body = nn.Dense(3, in_units=3)

    def hybrid_forward(self, F, x):
        return self.backbone(self.body(x))


def test_structural_names_drop_the_common_prefix():
    block, _ = _backbone_block(fixed_names=True)
    assert list(block._reg_params) == ["dense0_weight", "dense0_bias", "dense1_weight",
                                       "dense1_bias"]
    # character by character, as MXNet's _common_prefix: "dense"
    assert list(block._collect_params_with_prefix()) == ["0_weight", "0_bias", "1_weight",
                                                          "1_bias"]
    lone = SymbolBlock(sym.FullyConnected(sym.var("x"), num_hidden=2, no_bias=True,
                                          name="fc"), sym.var("x"))
    assert list(lone._collect_params_with_prefix()) == ["fc_weight"]  # never empty


def test_a_model_with_a_symbol_block_loads_into_a_second_instance(tmp_path):
    net1 = _Net()
    net1.initialize(initializer.Normal())
    net1.hybridize()
    x = nd.array(np.random.default_rng(1).normal(size=(2, 3)).astype("float32"))
    out1 = net1(x)
    path = str(tmp_path / "net.params")
    net1.save_parameters(path)
    net2 = _Net()  # its backbone's variables have other prefix counters
    assert set(net2.backbone._reg_params) != set(net1.backbone._reg_params)
    net2.load_parameters(path)
    np.testing.assert_allclose(net2(x).asnumpy(), out1.asnumpy(), rtol=1e-6)
