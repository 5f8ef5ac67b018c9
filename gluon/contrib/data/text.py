"""MXNet 1.9's ``gluon.contrib.data.text``: the WikiText-2 and WikiText-103 corpora.

The corpora are read from local files only: ``root/wiki.<segment>.tokens`` (checked by
SHA-1), or MXNet's archive ``root/wikitext-2-v1.zip`` (``-103-``), which is unpacked
there. Without either, ``NoNetworkError`` names the path to put the file at.
"""
from __future__ import annotations

import os
import shutil
import zipfile
from typing import ClassVar

import numpy as np

from core import nd
from core.contrib import text

from ...data.dataset import Dataset
from ...utils import _get_repo_file_url, check_sha1, download

__all__ = ["WikiText2", "WikiText103"]

EOS_TOKEN = "<eos>"


def _data_dir() -> str:
    return os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))


class _WikiText(Dataset):
    """A language-model corpus: ``(data, label)`` rows of ``seq_len`` token indices, the
    label the data shifted by one token; ``<eos>`` ends each line."""

    _archive_file: ClassVar[tuple] = ()
    _data_file: ClassVar[dict] = {}

    def __init__(self, root, namespace, segment, vocab, seq_len):
        if segment not in self._data_file:
            raise ValueError(f"{type(self).__name__}: segment must be one of "
                             f"{sorted(self._data_file)}, got {segment!r}")
        self._root = os.path.expanduser(root)
        self._namespace = namespace
        self._segment = segment
        self._seq_len = seq_len
        self._vocab = vocab
        self._counter = None
        os.makedirs(self._root, exist_ok=True)
        self._get_data()

    @property
    def vocabulary(self):
        """The :class:`core.contrib.text.vocab.Vocabulary` that indexes the tokens."""
        return self._vocab

    @property
    def frequencies(self):
        """The token counts of the segment (a ``collections.Counter``)."""
        return self._counter

    def _build_vocab(self, content: str) -> None:
        if not self._counter:
            self._counter = text.utils.count_tokens_from_str(content)
        if not self._vocab:
            self._vocab = text.vocab.Vocabulary(counter=self.frequencies,
                                                reserved_tokens=[EOS_TOKEN])

    def _read_batch(self, filename: str):
        with open(filename, encoding="utf8") as f:
            content = f.read()
        self._build_vocab(content)
        lines = [line for line in (x.strip().split() for x in content.splitlines()) if line]
        for line in lines:
            line.append(EOS_TOKEN)
        ids = self.vocabulary.to_indices([t for line in lines for t in line if t])
        return np.array(ids[:-1], dtype=np.int32), np.array(ids[1:], dtype=np.int32)

    def _local_file(self) -> str:
        name, sha1 = self._data_file[self._segment]
        path = os.path.join(self._root, name)
        if os.path.exists(path) and check_sha1(path, sha1):
            return path
        archive, archive_sha1 = self._archive_file
        zip_path = download(_get_repo_file_url("gluon/dataset/" + self._namespace, archive),
                            path=self._root, sha1_hash=archive_sha1)
        with zipfile.ZipFile(zip_path, "r") as zf:
            for member in zf.namelist():
                base = os.path.basename(member)  # no paths from the archive
                if base:
                    with zf.open(member) as src, open(os.path.join(self._root, base),
                                                      "wb") as dst:
                        shutil.copyfileobj(src, dst)
        return path

    def _get_data(self) -> None:
        data, label = self._read_batch(self._local_file())
        n = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:n], dtype=data.dtype).reshape((-1, self._seq_len))
        self._label = nd.array(label[:n], dtype=label.dtype).reshape((-1, self._seq_len))

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 (Merity et al., 2016), word level, from local files.

    Args:
        root: the folder of ``wiki.{train,valid,test}.tokens`` or of
            ``wikitext-2-v1.zip`` (default ``$MXNET_HOME/datasets/wikitext-2``).
        segment: ``'train'``, ``'validation'`` or ``'test'``.
        vocab: the vocabulary to index with (default: built from the segment, with
            ``<eos>`` reserved).
        seq_len: the length of each sample.
    """

    _archive_file = ("wikitext-2-v1.zip", "3c914d17d80b1459be871a5039ac23e752a53cbe")
    _data_file: ClassVar[dict] = {"train": ("wiki.train.tokens", "863f29c46ef9d167fff4940ec821195882fe29d1"),
                  "validation": ("wiki.valid.tokens",
                                 "0418625c8b4da6e4b5c7a0b9e78d4ae8f7ee5422"),
                  "test": ("wiki.test.tokens", "c7b8ce0aa086fb34dab808c5c49224211eb2b172")}

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        root = root or os.path.join(_data_dir(), "datasets", "wikitext-2")
        super().__init__(root, "wikitext-2", segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 (Merity et al., 2016), word level, from local files.

    Args:
        root: the folder of ``wiki.{train,valid,test}.tokens`` or of
            ``wikitext-103-v1.zip`` (default ``$MXNET_HOME/datasets/wikitext-103``).
        segment: ``'train'``, ``'validation'`` or ``'test'``.
        vocab: the vocabulary to index with (default: built from the segment).
        seq_len: the length of each sample.
    """

    _archive_file = ("wikitext-103-v1.zip", "0aec09a7537b58d4bb65362fee27650eeaba625a")
    _data_file: ClassVar[dict] = {"train": ("wiki.train.tokens", "b7497e2dfe77e72cfef5e3dbc61b7b53712ac211"),
                  "validation": ("wiki.valid.tokens",
                                 "c326ac59dc587676d58c422eb8a03e119582f92b"),
                  "test": ("wiki.test.tokens", "8a5befc548865cec54ed4273cf87dbbad60d1e47")}

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        root = root or os.path.join(_data_dir(), "datasets", "wikitext-103")
        super().__init__(root, "wikitext-103", segment, vocab, seq_len)
