"""MXNet 2.0's ``device=`` names next to MXNet 1.x's ``ctx=`` in Gluon."""
import numpy
import pytest

from core import cpu, sym
from gluon import nn
from gluon.parameter import Parameter


def test_initialize_and_data_take_device():
    net = nn.Dense(3, in_units=2)
    net.initialize(device=cpu(0))
    assert net.weight.list_device() == [cpu(0)]
    assert net.weight.data(device=cpu(0)).shape == (3, 2)
    assert net.weight.grad(device=cpu(0)).shape == (3, 2)
    net.collect_params().reset_device([cpu(0), cpu(1)])
    assert net.weight.list_ctx() == [cpu(0), cpu(1)]
    net.weight.reset_device(cpu(1))
    assert net.weight.list_ctx() == [cpu(1)]


def test_ctx_and_device_together_is_an_error():
    net = nn.Dense(3, in_units=2)
    with pytest.raises(TypeError, match="ctx= or as device="):
        net.initialize(ctx=cpu(0), device=cpu(0))


def test_load_parameters_device(tmp_path):
    a = nn.Dense(3, in_units=2)
    a.initialize()
    f = str(tmp_path / "p.params")
    a.save_parameters(f)
    b = nn.Dense(3, in_units=2)
    b.load_parameters(f, device=cpu(1))
    assert b.weight.list_ctx() == [cpu(1)]
    numpy.testing.assert_array_equal(b.weight.data(cpu(1)).asnumpy(), a.weight.data().asnumpy())


def test_parameter_var_is_a_symbol_variable():
    p = Parameter("w", shape=(4, 0), lr_mult=2.0)
    v = p.var()
    assert isinstance(v, sym.Symbol)
    assert v.list_arguments() == ["w"]
    attrs = v.list_attr()
    assert attrs["__shape__"] == "(4, 0)" and attrs["__lr_mult__"] == "2.0"
