"""Sparse arrays in MXNet's binary NDArray format: read as RowSparseNDArray/CSRNDArray,
written in MXNet's sparse layout, and exchanged with real MXNet 1.9.1."""
import json
import os

import numpy as np
import pytest

from core import mxnet_format, nd
from tests.mxnet_ref import requires_mxnet, run_mxnet


def _arrays():
    rsp = nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [1, 3]), shape=(5, 2))
    csr = nd.sparse.csr_matrix(([1.5, -2.0, 3.0], [2, 0, 1], [0, 1, 1, 3]), shape=(3, 4))
    return {"rsp": rsp, "csr": csr, "dense": nd.ones((2, 2))}


def test_roundtrip_keeps_storage(tmp_path):
    path = str(tmp_path / "s.params")
    arrays = _arrays()
    nd.save(path, arrays)
    back = nd.load(path)
    for k, a in arrays.items():
        assert back[k].stype == a.stype
        np.testing.assert_array_equal(back[k].asnumpy(), a.asnumpy())
    assert back["rsp"].indices.asnumpy().tolist() == [1, 3]
    back["csr"].check_format()
    # the default reader densifies (what callers of mxnet_format.loads get)
    with open(path, "rb") as f:
        _, entries = mxnet_format.loads(f.read())
    dense = dict(entries)
    np.testing.assert_array_equal(dense["csr"], arrays["csr"].asnumpy())


def test_npz_holds_sparse_densely(tmp_path):
    path = str(tmp_path / "s.npz")
    nd.save(path, _arrays())
    back = nd.load(path)
    assert back["rsp"].stype == "default"
    np.testing.assert_array_equal(back["rsp"].asnumpy(), _arrays()["rsp"].asnumpy())


def test_bad_sparse_record_is_refused():
    rec = mxnet_format.SparseArray("row_sparse", (2, 2), np.ones((1, 2), np.float32),
                                   [np.array([5])])
    blob = mxnet_format.dumps("list", [("0", rec)])
    with pytest.raises(mxnet_format.FormatError, match="row indices within"):
        mxnet_format.loads(blob, sparse=True)


@requires_mxnet
def test_real_mxnet_loads_ours_and_we_load_its(tmp_path):
    ours = str(tmp_path / "ours.params")
    theirs = str(tmp_path / "theirs.params")
    nd.save(ours, _arrays())
    out = run_mxnet(f"""
import json, mxnet as mx, numpy as np
d = mx.nd.load({ours!r})
res = {{k: [v.stype, v.asnumpy().tolist()] for k, v in d.items()}}
res['rsp_idx'] = d['rsp'].indices.asnumpy().tolist()
x = mx.nd.array([[0, 1, 0], [2, 0, 0], [0, 0, 0], [0, 0, 3]])
mx.nd.save({theirs!r}, {{'r': x.tostype('row_sparse'), 'c': x.tostype('csr')}})
print(json.dumps(res))
""")
    res = json.loads(out.strip().splitlines()[-1])
    for k, a in _arrays().items():
        assert res[k][0] == a.stype
        np.testing.assert_array_equal(np.array(res[k][1]), a.asnumpy())
    assert res["rsp_idx"] == [1, 3]
    assert os.path.exists(theirs)
    got = nd.load(theirs)
    want = np.array([[0, 1, 0], [2, 0, 0], [0, 0, 0], [0, 0, 3]], np.float32)
    assert got["r"].stype == "row_sparse" and got["c"].stype == "csr"
    assert got["r"].indices.asnumpy().tolist() == [0, 1, 3]
    np.testing.assert_array_equal(got["r"].asnumpy(), want)
    np.testing.assert_array_equal(got["c"].asnumpy(), want)
