"""Abstract evaluation: ``invoke`` answers from ``infer`` rules, runs no kernel."""
from __future__ import annotations

import threading

import numpy
import pytest

from core import autograd, nd
from core import np as cnp
from core.ops import abstract, dispatch, registry
from core.ops.abstract import AbstractValueError, abstract_eval, is_placeholder, placeholder


def test_placeholder_takes_no_memory():
    x = placeholder((1000, 1000, 100), "float32")
    assert x.shape == (1000, 1000, 100)
    assert x.dtype == numpy.float32
    assert x._data.strides == (0, 0, 0)
    assert is_placeholder(x)


def test_ops_on_placeholders_give_inferred_placeholders(monkeypatch):
    calls = []
    x = placeholder((83, 10), "float32")
    w = cnp.ones((10, 4), dtype="float32")

    def forward(*args, **kwargs):
        calls.append(1)

    for op in registry.REGISTRY.values():  # no kernel may run below
        monkeypatch.setattr(op, "forward", forward)
    with abstract_eval():
        y = nd.relu(cnp.matmul(x, w)) + 1.0
        z = cnp.sum(y, axis=0, keepdims=True).astype("float16")
        s = cnp.concatenate([y, y], axis=1)
    monkeypatch.undo()
    assert not calls
    assert (y.shape, y.dtype) == ((83, 4), numpy.float32)
    assert (z.shape, z.dtype) == ((1, 4), numpy.float16)
    assert s.shape == (83, 8)
    assert all(is_placeholder(a) for a in (y, z, s))
    # the same computation concretely gives the same shapes and dtypes
    xc = cnp.zeros((83, 10), dtype="float32")
    yc = nd.relu(cnp.matmul(xc, w)) + 1.0
    assert (yc.shape, yc.dtype) == (y.shape, y.dtype)


def test_concrete_inputs_still_compute():
    with abstract_eval():
        a = cnp.arange(6).reshape((2, 3)) * 2
    assert not is_placeholder(a)
    numpy.testing.assert_array_equal(a.asnumpy(), numpy.arange(6).reshape(2, 3) * 2)


@pytest.mark.parametrize("read", [
    lambda y: y.asnumpy(),
    lambda y: int(y[0, 0]),
    lambda y: float(y.sum()),
    lambda y: bool(y[0, 0]),
    lambda y: numpy.asarray(y),
    lambda y: y.tolist(),
    lambda y: numpy.exp(y._data),
])
def test_reading_values_raises(read):
    x = placeholder((4, 3), "float32")
    with abstract_eval():
        y = x * 2.0
        with pytest.raises(AbstractValueError):
            read(y)


def test_value_dependent_shapes_raise():
    x = placeholder((5, 3), "float32")
    with abstract_eval(), pytest.raises(AbstractValueError, match="depends on values"):
        x[x > 0]


def test_writes_raise():
    x = placeholder((5, 3), "float32")
    c = cnp.zeros((5, 3), dtype="float32")
    with abstract_eval():
        with pytest.raises(AbstractValueError):
            c[0] = x[0]
        with pytest.raises(AbstractValueError):
            x[0] = 1.0
        with pytest.raises(AbstractValueError):
            c += x


def test_bad_shapes_raise_the_usual_error():
    x = placeholder((5, 3), "float32")
    with abstract_eval(), pytest.raises(ValueError, match="matmul|dot"):
        cnp.matmul(x, x)


def test_nothing_is_recorded():
    x = placeholder((2, 2), "float32")
    with abstract_eval(), autograd.record():
        y = x * x
    assert y._node is None


def test_mode_is_per_thread_and_nests():
    seen = []

    def other():
        seen.append(abstract.is_abstract())
        seen.append(is_placeholder(cnp.ones((2,)) + 1))

    with abstract_eval():
        with abstract_eval():
            assert abstract.is_abstract()
        assert abstract.is_abstract()
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert not abstract.is_abstract()
    assert dispatch._abstract_depth == 0
    assert seen == [False, False]
    # outside the mode, a placeholder still has no values to compute with
    with pytest.raises(RuntimeError, match="abstract evaluation"):
        placeholder((2,), "float32") + 1.0
