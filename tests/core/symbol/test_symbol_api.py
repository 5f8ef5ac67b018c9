"""MXNet 1.x's Symbol API details: get_children (groups too), bool(), pickling through
JSON, copies, attributes (hidden keys, attr_dict, _set_attr), infer_type(_partial) and
core.name (mx.name)."""
import copy
import pickle

import numpy as np
import pytest

from core import name as core_name
from core import sym
from core.symbol.symbol import NotImplementedForSymbol


def _mlp():
    data = sym.var("data")
    fc1 = sym.FullyConnected(data=data, name="fc1", num_hidden=10)
    return sym.FullyConnected(data=fc1, name="fc2", num_hidden=100)


def test_get_children_of_one_output_and_of_groups():
    net = _mlp()
    assert net.get_children().list_outputs() == ["fc1_output", "fc2_weight", "fc2_bias"]
    assert net.get_children().get_children().list_outputs() == ["data", "fc1_weight",
                                                                "fc1_bias"]
    assert net.get_children()["fc2_weight"].get_children() is None
    sliced = sym.SliceChannel(sym.var("data"), num_outputs=3, name="slice")
    assert sliced.get_children().list_outputs() == ["data"]  # one node, three outputs
    g = sym.Group([net, sym.relu(sym.var("x"))])
    assert g.get_children().list_outputs() == ["fc1_output", "fc2_weight", "fc2_bias", "x"]


def test_bool_raises_not_implemented_for_symbol():
    with pytest.raises(NotImplementedForSymbol, match="bool"):
        bool(sym.var("x"))
    from gluon.compat.util import MXNetError  # noqa: F401
    from gluon.compat.util import NotImplementedForSymbol as Alias

    assert Alias is NotImplementedForSymbol and issubclass(Alias, NotImplementedError)


def test_pickle_goes_through_json():
    net = sym.Group([_mlp(), sym.BatchNorm(sym.var("y"), name="bn")])
    back = pickle.loads(pickle.dumps(net))
    assert back.tojson() == net.tojson()
    assert back.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    state = net.__getstate__()
    assert list(state) == ["handle"] and isinstance(state["handle"], str)
    with pytest.raises(TypeError, match="JSON"):
        sym.Symbol([]).__setstate__({"handle": 3})


def test_copies_are_equal():
    net = _mlp()
    assert copy.copy(net).tojson() == net.tojson()
    assert copy.deepcopy(net).tojson() == net.tojson()


def test_hidden_attribute_keys_read_under_both_names():
    with sym.AttrScope(group="4"):
        data = sym.var("data", attr={"force_mirroring": "True", "mood": "ok"}, lr_mult=1)
    assert data.attr("lr_mult") == data.attr("__lr_mult__") == "1"
    assert data.attr("force_mirroring") == data.attr("__force_mirroring__") == "True"
    assert data.attr("group") == "4"
    back = pickle.loads(pickle.dumps(data))
    assert back.attr("mood") == "ok"
    conv = sym.Convolution(data=data, name="conv", kernel=(1, 1), num_filter=1,
                           attr={"__mood__": "so so", "wd_mult": "x"}, lr_mult=1)
    la = conv.list_attr()
    assert la["wd_mult"] == la["__wd_mult__"] == "x" and la["lr_mult"] == "1"
    ad = conv.attr_dict()
    assert ad["conv_weight"]["__mood__"] == "so so"  # created variables share attr=
    assert ad["conv"]["kernel"] == "(1, 1)" and ad["data"]["mood"] == "ok"
    assert conv.list_attr(recursive=True)["conv$kernel"] == "(1, 1)"
    conv._set_attr(ctx_group="dev2")
    assert conv.attr("ctx_group") == "dev2" and conv.attr("__ctx_group__") == "dev2"


def test_infer_type_and_partial():
    data = sym.var("data")
    fc = sym.FullyConnected(data=sym.Cast(data=data, dtype="float32"), name="fc",
                            num_hidden=8)
    mlp = sym.SoftmaxOutput(data=fc, name="softmax")
    arg, out, _ = mlp.infer_type(data=np.float16)
    assert arg == [np.float16, np.float32, np.float32, np.float32] and out == [np.float32]
    arg, out, _ = mlp.infer_type_partial()
    assert arg == [None, np.float32, np.float32, np.float32] and out == [np.float32]


def test_name_module_is_mx_name():
    assert sym.NameManager is core_name.NameManager and sym.Prefix is core_name.Prefix
    from core.sym._base import NameManager

    assert NameManager is core_name.NameManager
    with core_name.Prefix("net_"):
        y = sym.FullyConnected(sym.var("x"), num_hidden=2)
        z = sym.relu(y, name="act")
    assert y.name == "net_fullyconnected0" and z.name == "net_act"
    assert y.list_arguments() == ["x", "net_fullyconnected0_weight", "net_fullyconnected0_bias"]
    from gluon.compat import mxnet as alias

    assert alias.ALIASES["name"] == "core.name"


def test_backward_after_an_inference_forward():
    import core
    from core import nd

    a, b = sym.var("a"), sym.var("b")
    ex = (a * b).bind(core.cpu(), args=[nd.array([1.0, 2.0]), nd.array([3.0, 4.0])],
                      args_grad=[nd.zeros(2), nd.zeros(2)])
    out = ex.forward()  # MXNet's default is_train=False
    ex.backward([nd.ones(2)])
    assert ex.grad_dict["a"].asnumpy().tolist() == [3.0, 4.0]
    assert ex.outputs[0].asnumpy().tolist() == out[0].asnumpy().tolist() == [3.0, 8.0]
    frozen = (a * b).bind(core.cpu(), args=[nd.ones(2), nd.ones(2)])
    frozen.forward()
    with pytest.raises(RuntimeError, match="grad_req"):
        frozen.backward()


def test_py_str_and_mx_real_t():
    from gluon.compat import util

    assert util.py_str(b"fc1") == "fc1" and util.mx_real_t is np.float32


def test_gen_atomic_symbol():
    s = sym.RNN(sym.var("data"), sym.var("param"), sym.var("h0"), sym.var("h1"),
                state_size=10, num_layers=2, bidirectional=True, state_outputs=True,
                mode="lstm", name="rnn")
    atom = s._gen_atomic_symbol()
    assert atom.list_arguments() == ["rnn_data", "rnn_parameters", "rnn_state",
                                     "rnn_state_cell"]
    assert len(atom) == len(s) == 3
    with pytest.raises(ValueError, match="variable"):
        sym.var("x")._gen_atomic_symbol()


def test_dunder_keywords_are_node_attributes():
    """MXNet: an operator's ``__key__=`` keyword (``__layout__``) is a node attribute."""
    from core import sym

    y = sym.Activation(sym.var("x"), act_type="relu", name="act", __layout__="TNC")
    assert y.list_attr() == {"__layout__": "TNC"}
    assert y.attr("__layout__") == "TNC"
