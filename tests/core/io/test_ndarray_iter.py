"""NDArrayIter, ResizeIter, PrefetchingIter, DataDesc and DataBatch (core.io)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core import nd
from core.io import DataBatch, DataDesc, NDArrayIter, PrefetchingIter, ResizeIter
from tests.mxnet_ref import requires_mxnet, run_mxnet


def _epoch(it):
    return [(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist() if b.label else None,
             b.pad) for b in it]


def test_data_desc_is_a_name_shape_tuple():
    d = DataDesc("x", (2, 3), "int32", "NC")
    name, shape = d
    assert (name, shape, d.dtype, d.layout) == ("x", (2, 3), "int32", "NC")
    assert DataDesc.get_batch_axis("TNC") == 1 and DataDesc.get_batch_axis(None) == 0
    assert DataDesc.get_list([("a", (1,))], None)[0].dtype is np.float32


def test_data_batch_str_and_type_checks():
    b = DataBatch(data=[nd.ones((2, 3)), nd.ones((7, 8))], label=[nd.ones((4, 5))])
    assert str(b) == "DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]"
    with pytest.raises(TypeError, match="data must be a list"):
        DataBatch(nd.ones((2,)))


@pytest.mark.parametrize("handle,expect", [
    ("pad", [([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 0, 1], 2)]),
    ("discard", [([0, 1, 2], 0), ([3, 4, 5], 0)]),
])
def test_last_batch_handle(handle, expect):
    it = NDArrayIter(np.arange(7.0), np.arange(7.0) * 10, batch_size=3,
                     last_batch_handle=handle)
    got = [(d, p) for d, _, p in _epoch(it)]
    assert got == [(list(map(float, d)), p) for d, p in expect]
    it.reset()
    assert len(list(it)) == len(expect)


def test_roll_over_completes_the_next_epoch():
    it = NDArrayIter(np.arange(7.0), batch_size=3, last_batch_handle="roll_over")
    assert [d for d, _, _ in _epoch(it)] == [[0, 1, 2], [3, 4, 5]]
    it.reset()
    first = it.next()
    assert first.data[0].asnumpy().tolist() == [6, 0, 1] and first.pad == 1  # as MXNet
    it.hard_reset()
    assert it.next().data[0].asnumpy().tolist() == [0, 1, 2]


def test_pad_larger_than_the_data_wraps_several_times():
    it = NDArrayIter(np.arange(2.0), batch_size=5)
    b = it.next()
    assert b.data[0].asnumpy().tolist() == [0, 1, 0, 1, 0] and b.pad == 3


def test_dict_and_list_inputs_are_named_and_sorted():
    it = NDArrayIter({"b": np.zeros((4, 2)), "a": np.ones((4, 3))},
                     [np.zeros(4), np.ones(4)], batch_size=2)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert [d.name for d in it.provide_label] == ["_0_softmax_label", "_1_softmax_label"]
    assert it.provide_data[0].shape == (2, 3)
    b = it.next()
    assert b.data[0].asnumpy().tolist() == [[1, 1, 1]] * 2


def test_layout_moves_the_batch_axis():
    it = NDArrayIter(np.arange(12.0).reshape(3, 4), batch_size=2, layout="TN",
                     last_batch_handle="discard")
    assert it.provide_data[0].shape == (3, 2)
    assert [b.data[0].shape for b in it] == [(3, 2), (3, 2)]


def test_ndarray_input_keeps_dtype_and_context():
    from core.context import cpu
    x = nd.array(np.arange(4), ctx=cpu(1), dtype="int32")
    b = NDArrayIter(x, batch_size=2).next()
    assert b.data[0].dtype == np.int32 and b.data[0].context == cpu(1)


def test_shuffle_keeps_pairs_together():
    np.random.seed(0)
    it = NDArrayIter(np.arange(10.0), np.arange(10.0) * 2, batch_size=5, shuffle=True)
    seen = []
    for b in it:
        d, lab = b.data[0].asnumpy(), b.label[0].asnumpy()
        np.testing.assert_array_equal(lab, d * 2)
        seen += d.tolist()
    assert sorted(seen) == list(range(10)) and seen != list(range(10))


@pytest.mark.parametrize("kwargs,match", [
    ({"data": np.zeros((4, 2)), "label": np.zeros(3)}, "'softmax_label' has 3"),
    ({"data": {"a": np.zeros((4, 2)), "b": np.zeros((3, 2))}}, "'b' has 3"),
    ({"data": np.zeros(4), "last_batch_handle": "keep"}, "last_batch_handle"),
    ({"data": None}, "data must be given"),
    ({"data": np.zeros(4), "batch_size": 0}, "batch_size"),
    ({"data": np.array(["a", "b"])}, "numeric"),
])
def test_bad_input_names_the_field(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        NDArrayIter(**kwargs)


def test_resize_iter_wraps_and_keeps_bucket_key():
    inner = NDArrayIter(np.arange(4.0), batch_size=2)
    it = ResizeIter(inner, 3)
    assert [b.data[0].asnumpy().tolist() for b in it] == [[0, 1], [2, 3], [0, 1]]
    it.reset()
    assert len(list(it)) == 3 and it.batch_size == 2


def test_prefetching_iter_joins_and_renames():
    a = NDArrayIter(np.arange(6.0), np.zeros(6), batch_size=2)
    b = NDArrayIter(np.arange(6.0) + 100, np.ones(6), batch_size=2)
    p = PrefetchingIter([a, b], rename_data=[{"data": "x"}, {"data": "y"}],
                        rename_label=[{"softmax_label": "lx"}, {"softmax_label": "ly"}])
    assert [d.name for d in p.provide_data] == ["x", "y"]
    assert [d.name for d in p.provide_label] == ["lx", "ly"]
    for _ in range(2):
        batches = list(p)
        assert len(batches) == 3
        assert batches[1].data[1].asnumpy().tolist() == [102, 103]
        assert batches[1].label[1].asnumpy().tolist() == [1, 1]
        p.reset()
    p.close()


def test_prefetching_iter_reports_an_inner_failure():
    class Broken(NDArrayIter):
        def next(self):
            raise OSError("disk gone")
    p = PrefetchingIter(Broken(np.zeros(4), batch_size=2))
    with pytest.raises(RuntimeError, match="iterator 0 .*disk gone"):
        p.next()
    p.close()


@requires_mxnet
@pytest.mark.parametrize("handle", ["pad", "discard", "roll_over"])
def test_matches_real_mxnet(handle):
    code = f"""
import json, numpy as np, mxnet as mx
np.random.seed(3)
data = np.arange(40).reshape((10, 2, 2)).astype('float32')
it = mx.io.NDArrayIter(data, np.arange(10), 3, True, last_batch_handle={handle!r})
out = []
for ep in range(3):
    out.append([[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad]
                for b in it])
    it.reset()
print(json.dumps([out, [d.shape for d in it.provide_data], str(it.provide_label)]))
"""
    ref = json.loads(run_mxnet(code))
    np.random.seed(3)
    data = np.arange(40).reshape((10, 2, 2)).astype("float32")
    it = NDArrayIter(data, np.arange(10), 3, True, last_batch_handle=handle)
    out = []
    for _ in range(3):
        out.append([list(x) for x in _epoch(it)])
        it.reset()
    assert out == ref[0]
    assert [list(d.shape) for d in it.provide_data] == ref[1]
    assert str(it.provide_label) == ref[2]


def test_labels_with_more_examples_than_the_data_are_read_at_the_same_rows():
    """MXNet counts the first data array's examples (MXNet's test_loss.py scores a model
    on ``data[10:]`` with all 20 labels); an array with fewer examples is an error."""
    data = nd.array(np.arange(10, dtype="float32").reshape(5, 2))
    it = NDArrayIter(data, {"label": nd.array(np.arange(8, dtype="float32"))}, batch_size=5)
    batch = next(iter(it))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [0, 1, 2, 3, 4])
    assert it.provide_label[0].shape == (5,)
    with pytest.raises(ValueError, match=r"NDArrayIter: .*'data' has 5, 'softmax_label' has 3"):
        NDArrayIter(data, nd.array(np.arange(3, dtype="float32")), batch_size=5)
