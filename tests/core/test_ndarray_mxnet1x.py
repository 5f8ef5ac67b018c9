"""MXNet 1.x behaviours of NDArray: truth value, pickled state, contiguity of slices,
and the operators' MXNet forms (moveaxis with sequences, broadcast_like's axes)."""
import pickle
from itertools import permutations

import numpy as np
import pytest

from core import context, nd
from core.ndarray import NDArray
from core.ops.dispatch import MXNetError


def test_bool_of_empty_single_and_many():
    assert not bool(nd.array([]))
    assert not bool(nd.zeros((1,)))
    assert bool(nd.ones((1, 1)))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.ones((2,)))


def test_getstate_is_mxnet_raw_bytes_and_roundtrips():
    a = nd.array([[1, 2], [3, 4]], dtype="int32")
    st = a.__getstate__()
    assert set(st) == {"handle"} and isinstance(st["handle"], bytearray)
    assert bytes(st["handle"][:4]) == b"\xc9\xfa\x93\xf9"  # MXNet's V2 array magic
    b = nd.zeros((1,))
    b.__setstate__(st)
    assert b.dtype == np.int32 and b.asnumpy().tolist() == [[1, 2], [3, 4]]
    # pickling between processes still goes through __reduce__ (values and context)
    c = pickle.loads(pickle.dumps(a))
    assert c.asnumpy().tolist() == [[1, 2], [3, 4]]


def test_setstate_reads_a_gpu_array_state_on_the_cpu():
    # what MXNet 1.9.1 gives for nd.arange(1, ctx=gpu()).__getstate__()
    state = {"handle": bytearray(
        b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
        b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}
    a = nd.arange(3)
    a.__setstate__(state)
    assert a.shape == (1,) and a.asnumpy().tolist() == [0.0]
    assert a.context == context.cpu(0)


def test_setstate_rejects_other_states():
    with pytest.raises(TypeError, match="__setstate__"):
        nd.zeros((1,)).__setstate__({"data": 1})


def test_basic_indexing_slice_is_contiguous_matches_numpy():
    x = np.arange(4 * 5 * 6).reshape((4, 5, 6))
    slices = [slice(None), slice(2), slice(1, 3), slice(None, None, 2), slice(0, 1),
              slice(None, None, -1), slice(3, None, -2)]
    for a in slices:
        for b in slices:
            for c in slices:
                for key in permutations((a, b, c)):
                    got = NDArray._basic_indexing_slice_is_contiguous(key, x.shape)
                    assert got == x[key].flags.contiguous, key
    with pytest.raises(ValueError, match="_basic_indexing_slice_is_contiguous"):
        NDArray._basic_indexing_slice_is_contiguous((slice(None),), (2, 3))


def test_cpu_shared_and_pinned_contexts_are_host_memory():
    ctx = context.Context("cpu_shared", 0)
    assert ctx is context.cpu(0) and context.cpu_shared(1) is context.cpu(1)
    assert context.Context("cpu_pinned", 2) is context.cpu(2)
    assert nd.zeros((1, 2), ctx=ctx).context == ctx
    with pytest.raises(ValueError, match="cpu_shared"):
        context.Context("tpu", 0)


def test_moveaxis_takes_sequences_and_ranges():
    x = nd.zeros((1, 2, 3, 4))
    assert nd.moveaxis(x, range(4), (3, 2, 1, 0)).shape == (4, 3, 2, 1)
    assert nd.moveaxis(x, [0, 1], [-1, -2]).shape == (3, 4, 2, 1)
    with pytest.raises(ValueError, match="moveaxis"):
        nd.moveaxis(x, [0, 1], [0])


def test_broadcast_like_axes_must_be_nonempty_and_paired():
    lhs, rhs = nd.ones((1, 2, 1, 3)), nd.ones((5, 6, 7, 8))
    out = nd.broadcast_like(lhs, rhs, lhs_axes=(0, 2), rhs_axes=(1, 3))
    assert out.shape == (6, 2, 8, 3)
    for la, ra in (((), ()), ((0,), (1, 2))):
        with pytest.raises(MXNetError, match="broadcast_like"):
            nd.broadcast_like(lhs, rhs, lhs_axes=la, rhs_axes=ra)
    with pytest.raises(ValueError):  # also a ValueError
        nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())
