"""gluon.contrib.data: IntervalSampler and the WikiText corpora (local files only)."""
import hashlib
import os
import zipfile
from typing import ClassVar

import pytest

from core.testing.data import NoNetworkError
from gluon import contrib
from gluon.contrib.data import text


def test_interval_sampler_rollover_and_not():
    assert list(contrib.data.IntervalSampler(13, interval=3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10,
                                                                  2, 5, 8, 11]
    assert list(contrib.data.sampler.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="interval 4 must be <= length 3"):
        contrib.data.IntervalSampler(3, 4)


_CORPUS = " = Title = \n\n the cat sat on the mat \n the dog sat \n"


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


class _Tiny(text._WikiText):
    _data_file: ClassVar[dict] = {"train": ("wiki.train.tokens", _sha1(_CORPUS.encode())),
                                  "test": ("wiki.test.tokens", "0" * 40)}

    def __init__(self, root, segment="train", vocab=None, seq_len=3, archive_sha1="0" * 40):
        self._archive_file = ("tiny.zip", archive_sha1)
        super().__init__(root, "tiny", segment, vocab, seq_len)


def test_wikitext_reads_the_local_tokens_file(tmp_path):
    (tmp_path / "wiki.train.tokens").write_text(_CORPUS, encoding="utf8")
    ds = _Tiny(str(tmp_path))
    # 15 tokens with <eos> after each line: 14 (data, label) pairs -> 4 rows of 3
    assert len(ds) == 4
    data, label = ds[0]
    assert ds.vocabulary.to_tokens(data.asnumpy().astype(int).tolist()) == ["=", "Title", "="]
    assert label.asnumpy().tolist() == ds[0][0].asnumpy().tolist()[1:] + [
        ds.vocabulary.to_indices("<eos>")]
    assert ds.frequencies["the"] == 3 and ds.vocabulary.idx_to_token[1] == "<eos>"


def test_wikitext_unpacks_the_archive_and_refuses_to_download(tmp_path):
    zip_path = tmp_path / "tiny.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("tiny/wiki.train.tokens", _CORPUS)
    ds = _Tiny(str(tmp_path), archive_sha1=_sha1(zip_path.read_bytes()))
    assert len(ds) == 4 and os.path.isfile(tmp_path / "wiki.train.tokens")
    with pytest.raises(NoNetworkError, match="does not download anything"):
        text.WikiText2(root=str(tmp_path / "none"), segment="validation")
    with pytest.raises(ValueError, match="segment must be one of"):
        text.WikiText103(root=str(tmp_path), segment="dev")
