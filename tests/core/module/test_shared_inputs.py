"""What bucket modules share: non-parameter arguments through the executor group's
``shared_data_arrays`` (MXNet's shared buffer), unnamed nodes' names through a fresh
NameManager per ``sym_gen`` call."""
from __future__ import annotations

from core import context, sym
from core.io import DataDesc
from core.module import BucketingModule
from core.module.executor_group import DataParallelExecutorGroup


def _net(layers: int):
    h = sym.var("data")
    for i in range(layers):
        h = sym.FullyConnected(h, num_hidden=3, name=f"fc{i}")
    return sym.LinearRegressionOutput(h, name="lro")


def _group(symbol, params, shared=None):
    return DataParallelExecutorGroup(
        symbol, [context.cpu(0), context.cpu(1)], [1, 1], [DataDesc("data", (4, 3))],
        [DataDesc("lro_label", (4, 3))], params, for_training=True, inputs_need_grad=False,
        shared_group=shared)


def test_inputs_are_kept_per_context_and_shared_with_a_shared_group():
    small = _net(1)
    params = [n for n in small.list_arguments() if n not in ("data", "lro_label")]
    g1 = _group(small, params)
    assert [sorted(d) for d in g1.shared_data_arrays] == [["data", "lro_label"]] * 2
    for i, ex in enumerate(g1.execs):
        assert ex.arg_dict["data"] is g1.shared_data_arrays[i]["data"]
    g2 = _group(_net(2), params, shared=g1)
    assert g2.shared_data_arrays is g1.shared_data_arrays
    for i, (e1, e2) in enumerate(zip(g1.execs, g2.execs)):
        assert e2.arg_dict["data"] is e1.arg_dict["data"]
        assert e2.arg_dict["fc0_weight"] is e1.arg_dict["fc0_weight"]
        assert e2.grad_dict["fc0_weight"] is e1.grad_dict["fc0_weight"]
        # fc1 is no parameter of g1's: an input of g2's, in the shared buffer
        assert g1.shared_data_arrays[i]["fc1_weight"] is e2.arg_dict["fc1_weight"]


def test_an_input_of_another_shape_gets_its_own_array():
    g1 = _group(_net(1), ["fc0_weight", "fc0_bias"])
    before = g1.shared_data_arrays[0]["data"]
    g1.reshape([DataDesc("data", (6, 3))], [DataDesc("lro_label", (6, 3))])
    assert g1.shared_data_arrays[0]["data"] is not before
    assert g1.shared_data_arrays[0]["data"].shape == (3, 3)


def test_every_bucket_gets_the_same_automatic_names():
    def sym_gen(key):
        h = sym.FullyConnected(sym.var("data"), num_hidden=2)  # unnamed: fullyconnected0
        return sym.LinearRegressionOutput(h, name="lro"), ("data",), ("lro_label",)

    mod = BucketingModule(sym_gen, default_bucket_key=5, context=context.cpu(0))
    mod.bind([DataDesc("data", (2, 5))], [DataDesc("lro_label", (2, 2))])
    mod.init_params()
    mod.switch_bucket(3, [DataDesc("data", (2, 5))], [DataDesc("lro_label", (2, 2))])
    names = {k: m.symbol.list_arguments() for k, m in mod._buckets.items()}
    assert names[5] == names[3] == ["data", "fullyconnected0_weight", "fullyconnected0_bias",
                                    "lro_label"]
