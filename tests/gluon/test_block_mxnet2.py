"""MXNet 2.0's Block API additions: load_dict, setattr; NumPy-mode printing; gluon.compat."""
import numpy
import pytest

from core import cpu, np, npx
from gluon import nn


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    return net


def test_load_dict_takes_structural_names():
    a, b = _net(), _net()
    b.load_dict({k: v.data() for k, v in a._collect_params_with_prefix().items()},
                device=cpu(0))
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        numpy.testing.assert_array_equal(pa.data().asnumpy(), pb.data().asnumpy())


def test_load_dict_names_missing_and_extra_parameters():
    a = _net()
    values = {k: v.data() for k, v in a._collect_params_with_prefix().items()}
    first = next(iter(values))
    with pytest.raises(ValueError, match=f"'{first}' is missing in param_dict"):
        _net().load_dict({k: v for k, v in values.items() if k != first})
    with pytest.raises(ValueError, match="'extra' loaded from param_dict is not present"):
        _net().load_dict(dict(values, extra=values[first]))
    _net().load_dict(dict(values, extra=values[first]), ignore_extra=True)


def test_setattr_reaches_every_parameter():
    net = _net()
    net.setattr("grad_req", "null")
    assert {p.grad_req for p in net.collect_params().values()} == {"null"}
    net[1].setattr("lr_mult", 10.0)
    assert [p.lr_mult for p in net.collect_params().values()] == [1.0, 1.0, 10.0, 10.0]


def test_numpy_mode_prints_like_numpy():
    x = np.array([0.0, 1.0])
    assert "<NDArray 2 @cpu(0)>" in repr(x)
    npx.set_np()
    try:
        assert repr(x) == "array([0., 1.])"
        assert repr(np.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    finally:
        npx.reset_np()


def test_compat_is_a_lazy_gluon_module():
    import gluon

    assert callable(gluon.compat.mxnet.install)
