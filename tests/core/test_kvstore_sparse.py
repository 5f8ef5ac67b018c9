"""core.kvstore with row_sparse values (MXNet 1.x's local store rules)."""
import numpy as np
import pytest

from core import cpu, kvstore, nd
from core.ops.dispatch import MXNetError


def test_push_row_sparse_sums_and_keeps_stored_storage():
    kv = kvstore.create("local")
    kv.init(3, nd.zeros((4, 2)))
    kv.push(3, [nd.ones((4, 2), ctx=cpu(i)).tostype("row_sparse") for i in range(3)])
    out = nd.zeros((4, 2))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((4, 2), 3))
    kv.init(4, nd.sparse.zeros("row_sparse", (4, 2)))
    kv.push(4, nd.ones((4, 2)))
    got = nd.sparse.zeros("row_sparse", (4, 2))
    kv.pull(4, out=got, ignore_sparse=False)
    assert got.stype == "row_sparse"
    np.testing.assert_array_equal(got.asnumpy(), np.ones((4, 2)))


def test_pull_skips_sparse_outputs_by_default():
    kv = kvstore.create("local")
    kv.init("a", nd.ones((2, 2)) * 5)
    out = (nd.ones((2, 2)) * 2).tostype("row_sparse")
    kv.pull("a", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 2))


def test_row_sparse_pull_rows_and_errors():
    kv = kvstore.create("local")
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    kv.init("w", nd.array(value).tostype("row_sparse"))
    outs = [nd.sparse.zeros("row_sparse", (4, 3), ctx=cpu(i)) for i in range(2)]
    kv.row_sparse_pull("w", out=outs, row_ids=[nd.array([3, 1, 3]), nd.array([0])])
    want0 = np.zeros_like(value)
    want0[[1, 3]] = value[[1, 3]]
    np.testing.assert_array_equal(outs[0].asnumpy(), want0)
    assert outs[0].indices.asnumpy().tolist() == [1, 3]
    assert outs[1].indices.asnumpy().tolist() == [0] and outs[1].context == cpu(1)
    with pytest.raises(MXNetError, match="must be row_sparse"):
        kv.row_sparse_pull("w", out=nd.zeros((4, 3)), row_ids=nd.array([1]))
    with pytest.raises(ValueError, match=r"row_ids must lie in \[0, 4\)"):
        kv.row_sparse_pull("w", out=outs[0], row_ids=nd.array([7]))


def test_keys_are_all_int_or_all_str():
    kv = kvstore.create("local")
    kv.init(1, nd.zeros((2,)))
    with pytest.raises(MXNetError, match="mixed key types"):
        kv.init("b", nd.zeros((2,)))
    with pytest.raises(MXNetError, match="uses int keys"):
        kv.pull(["b"], out=[nd.zeros((2,))])
