"""Token embeddings (MXNet 1.x's ``mx.contrib.text.embedding``).

A token embedding is a :class:`~.vocab.Vocabulary` with a vector per token
(``idx_to_vec``, an NDArray ``(len, vec_len)``). :class:`CustomEmbedding` reads a text
file of ``token v1 v2 ...`` lines; :class:`CompositeEmbedding` concatenates the vectors of
several embeddings for the tokens of a vocabulary. ``GloVe`` and ``FastText`` read their
pre-trained files from ``embedding_root/<glove|fasttext>/`` when they are there: nothing
is downloaded (a missing file raises ``NoNetworkError`` naming where to put it).
Embedding classes are registered by lower-cased name (:func:`register`,
:func:`create`, :func:`get_pretrained_file_names`).
"""
from __future__ import annotations

import hashlib
import logging
import os
import warnings
from typing import ClassVar

from ... import nd
from ...ndarray import NDArray
from ...testing.data import NoNetworkError
from . import vocab
from .vocab import UNKNOWN_IDX, TextArgumentError

__all__ = ["CompositeEmbedding", "CustomEmbedding", "FastText", "GloVe", "create",
           "get_pretrained_file_names", "register"]

_REGISTRY: dict = {}
_LOG = logging.getLogger(__name__)


def register(embedding_cls):
    """Register a token embedding class under its lower-cased name (a class decorator).

    Example:
        >>> @register
        ... class MyVectors(_TokenEmbedding):
        ...     pretrained_file_name_sha1 = {}
        >>> "myvectors" in get_pretrained_file_names()
        True
    """
    if not (isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding)):
        raise TypeError(f"register: {embedding_cls!r} is not a token embedding class "
                        "(a subclass of _TokenEmbedding)")
    name = embedding_cls.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not embedding_cls:
        warnings.warn(f"New token embedding {embedding_cls.__module__}."
                      f"{embedding_cls.__name__} is overriding the existing one registered "
                      f"as {name!r}", UserWarning, stacklevel=2)
    _REGISTRY[name] = embedding_cls
    return embedding_cls


def create(embedding_name: str, **kwargs):
    """An instance of the embedding registered as ``embedding_name`` (case-insensitive).

    Args:
        embedding_name: the registered name (``'glove'``, ``'fasttext'``, ...).
        **kwargs: the class's arguments.
    """
    name = embedding_name.lower()
    if name not in _REGISTRY:
        raise ValueError(f"Cannot find token embedding {embedding_name!r}; registered: "
                         f"{sorted(_REGISTRY)}")
    return _REGISTRY[name](**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pre-trained file names of one registered embedding (a list), or of all (a dict).

    Args:
        embedding_name: the registered name, or None for all.

    Raises:
        KeyError: no embedding is registered under ``embedding_name``.
    """
    if embedding_name is not None:
        if embedding_name not in _REGISTRY:
            raise KeyError(f"Cannot find `embedding_name` {embedding_name}. Use "
                           "`get_pretrained_file_names(embedding_name=None).keys()` to get "
                           "all the valid embedding names.")
        return list(_REGISTRY[embedding_name].pretrained_file_name_sha1)
    return {name: list(cls.pretrained_file_name_sha1) for name, cls in _REGISTRY.items()}


def _data_dir() -> str:
    return os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))


def _sha1(path: str) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class _TokenEmbedding(vocab.Vocabulary):
    """The base of the token embeddings: a vocabulary with ``idx_to_vec``."""

    pretrained_file_name_sha1: ClassVar[dict] = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name) -> str:
        """The local pre-trained file (``embedding_root/<class>/<file>``, SHA-1 checked)."""
        folder = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(folder, pretrained_file_name)
        want = cls.pretrained_file_name_sha1.get(pretrained_file_name)
        if os.path.isfile(path) and (not want or _sha1(path) == want):
            return path
        raise NoNetworkError(
            f"{cls.__name__}: the pre-trained file {pretrained_file_name!r} is not at "
            f"{os.path.abspath(path)}" + (f" (with SHA-1 {want})" if want else "") +
            "; kbackend does not download anything (no network at run time): put the file "
            "there (from an MXNet installation's ~/.mxnet/embeddings)")

    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding="utf8") -> None:
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise ValueError("`pretrained_file_path` must be a valid path to the pre-trained "
                             f"token embedding file, got {pretrained_file_path!r}.")
        _LOG.info("Loading pre-trained token embedding vectors from %s", path)
        vec_len, rows, seen, unknown_vec = None, [], set(), None
        with open(path, encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) <= 1:
                    raise TextArgumentError(
                        f"At line {line_num} of the pre-trained text embedding file: the data "
                        f"format of the pre-trained token embedding file {path} is "
                        "unexpected.")
                token, vec = elems[0], [float(v) for v in elems[1:]]
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = vec
                    seen.add(token)
                elif token in seen:
                    warnings.warn(f"At line {line_num} of the pre-trained token embedding "
                                  f"file: the embedding vector for token {token} has been "
                                  "loaded and a duplicate embedding for the same token is "
                                  "seen and skipped.", stacklevel=3)
                elif len(vec) == 1:
                    warnings.warn(f"At line {line_num} of the pre-trained text embedding "
                                  f"file: token {token} with 1-dimensional vector {vec} is "
                                  "likely a header and is skipped.", stacklevel=3)
                else:
                    if vec_len is None:
                        vec_len = len(vec)
                    elif len(vec) != vec_len:
                        raise TextArgumentError(
                            f"At line {line_num} of the pre-trained token embedding file: the "
                            f"dimension of token {token} is {len(vec)} but the dimension of "
                            f"previous tokens is {vec_len}. Dimensions of all the tokens must "
                            "be the same.")
                    rows.append(vec)
                    self._idx_to_token.append(token)
                    self._token_to_idx[token] = len(self._idx_to_token) - 1
                    seen.add(token)
        if vec_len is None:
            raise TextArgumentError(f"the pre-trained token embedding file {path} has no "
                                    "token vectors")
        self._vec_len = vec_len
        # row 0 (the unknown token) first, then the file's tokens after the reserved ones
        n_special = len(self._idx_to_token) - len(rows)
        first = [[0.0] * vec_len] * n_special
        self._idx_to_vec = nd.array(first + rows)
        if unknown_vec is None:
            self._idx_to_vec[UNKNOWN_IDX] = init_unknown_vec(shape=vec_len)
        else:
            self._idx_to_vec[UNKNOWN_IDX] = nd.array(unknown_vec)

    def _index_tokens_from_vocabulary(self, vocabulary) -> None:
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = (None if vocabulary.reserved_tokens is None
                                 else list(vocabulary.reserved_tokens))

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len,
                                      vocab_idx_to_token) -> None:
        parts = []
        for embed in token_embeddings:
            unknown = embed.idx_to_vec[0].reshape((1, -1))
            known = embed.get_vecs_by_tokens(list(vocab_idx_to_token[1:]))
            parts.append(nd.concat(unknown, known.reshape((-1, embed.vec_len)), dim=0)
                         if vocab_len > 1 else unknown)
        self._idx_to_vec = nd.concat(*parts, dim=1) if len(parts) > 1 else parts[0]
        self._vec_len = sum(e.vec_len for e in token_embeddings)

    def _build_embedding_for_vocabulary(self, vocabulary) -> None:
        if vocabulary is None:
            return
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TextArgumentError("The argument `vocabulary` must be an instance of "
                                    "mxnet.contrib.text.vocab.Vocabulary.")
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        """The length of each vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """The vectors by index, an NDArray ``(len(self), vec_len)``."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup: bool = False):
        """The vector of a token, or the ``(n, vec_len)`` vectors of a list of tokens.

        Args:
            tokens: a token or a list of tokens (unknown ones get the unknown vector).
            lower_case_backup: look a token up lower-cased when it is not found as is.
        """
        one = not isinstance(tokens, list)
        tokens = [tokens] if one else tokens
        t2i = self.token_to_idx
        if lower_case_backup:
            idx = [t2i[t] if t in t2i else t2i.get(t.lower(), UNKNOWN_IDX) for t in tokens]
        else:
            idx = [t2i.get(t, UNKNOWN_IDX) for t in tokens]
        vecs = nd.Embedding(nd.array(idx), self.idx_to_vec, input_dim=self.idx_to_vec.shape[0],
                            output_dim=self.idx_to_vec.shape[1])
        return vecs[0] if one else vecs

    def update_token_vectors(self, tokens, new_vectors) -> None:
        """Replace the vectors of known tokens.

        Args:
            tokens: a token or a list of tokens (each must be indexed; the unknown token
                only when named explicitly).
            new_vectors: an NDArray ``(vec_len,)`` or ``(len(tokens), vec_len)``.

        Raises:
            ValueError: a token is not indexed.
        """
        if self.idx_to_vec is None:
            raise TextArgumentError("The property `idx_to_vec` has not been properly set.")
        if not isinstance(tokens, list) or len(tokens) == 1:
            if not (isinstance(new_vectors, NDArray) and new_vectors.ndim in (1, 2)):
                raise TextArgumentError("`new_vectors` must be a 1-D or 2-D NDArray if "
                                        "`tokens` is a singleton.")
            tokens = tokens if isinstance(tokens, list) else [tokens]
            if new_vectors.ndim == 1:
                new_vectors = new_vectors.reshape((1, -1))
        elif not (isinstance(new_vectors, NDArray) and new_vectors.ndim == 2):
            raise TextArgumentError("`new_vectors` must be a 2-D NDArray if `tokens` is a "
                                    "list of multiple strings.")
        if tuple(new_vectors.shape) != (len(tokens), self.vec_len):
            raise TextArgumentError(
                f"The length of new_vectors must be equal to the number of tokens and the "
                f"width of new_vectors must be equal to the dimension of embeddings of the "
                f"glossary: got {tuple(new_vectors.shape)} for {len(tokens)} tokens of "
                f"length {self.vec_len}.")
        idx = []
        for token in tokens:
            if token not in self.token_to_idx:
                raise ValueError(f"Token {token} is unknown. To update the embedding vector "
                                 "for an unknown token, please specify it explicitly as the "
                                 f"`unknown_token` {self.idx_to_token[UNKNOWN_IDX]} in "
                                 "`tokens`. This is to avoid unintended updates.")
            idx.append(self.token_to_idx[token])
        for row, i in enumerate(idx):
            self._idx_to_vec[i] = new_vectors[row]

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name) -> None:
        name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError(f"Cannot find pretrained file {pretrained_file_name} for token "
                           f"embedding {name}. Valid pretrained files for embedding {name}: "
                           f"{', '.join(cls.pretrained_file_name_sha1)}")


class _Pretrained(_TokenEmbedding):
    """GloVe/FastText: a pre-trained file read from ``embedding_root/<name>/``."""

    def __init__(self, pretrained_file_name, embedding_root=None, init_unknown_vec=nd.zeros,
                 vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        root = embedding_root or os.path.join(_data_dir(), "embeddings")
        path = type(self)._get_pretrained_file(root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class GloVe(_Pretrained):
    """GloVe vectors (Pennington et al., 2014) from a local ``glove.*.txt`` file.

    Args:
        pretrained_file_name: the file's name, e.g. ``'glove.6B.50d.txt'``.
        embedding_root: the folder holding ``glove/`` (default ``$MXNET_HOME/embeddings``).
        init_unknown_vec: makes the unknown token's vector from ``shape``.
        vocabulary: index only this vocabulary's tokens.
        **kwargs: ``unknown_token``, ``reserved_tokens``.
    """

    def __init__(self, pretrained_file_name="glove.840B.300d.txt", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                         **kwargs)


@register
class FastText(_Pretrained):
    """fastText vectors (Bojanowski et al., 2017) from a local ``*.vec`` file.

    Args:
        pretrained_file_name: the file's name, e.g. ``'wiki.simple.vec'``.
        embedding_root: the folder holding ``fasttext/`` (default
            ``$MXNET_HOME/embeddings``).
        init_unknown_vec: makes the unknown token's vector from ``shape``.
        vocabulary: index only this vocabulary's tokens.
        **kwargs: ``unknown_token``, ``reserved_tokens``.
    """

    def __init__(self, pretrained_file_name="wiki.simple.vec", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                         **kwargs)


class CustomEmbedding(_TokenEmbedding):
    """Token vectors read from a text file of ``token<delim>v1<delim>v2...`` lines.

    Args:
        pretrained_file_path: the file.
        elem_delim: the separator of the elements of a line.
        encoding: the file's encoding.
        init_unknown_vec: makes the unknown token's vector from ``shape`` (unless the file
            has a line for the unknown token).
        vocabulary: index only this vocabulary's tokens (others get the unknown vector).
        **kwargs: ``unknown_token``, ``reserved_tokens``.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "vecs.txt")
        >>> with open(path, "w") as f:
        ...     _ = f.write("a 0.1 0.2\\nb 0.3 0.4\\n")
        >>> e = CustomEmbedding(path, " ")
        >>> e.idx_to_token, e.get_vecs_by_tokens("b").asnumpy().round(2).tolist()
        (['<unk>', 'a', 'b'], [0.3, 0.4])
    """

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary`` with the concatenated vectors of ``token_embeddings``.

    Args:
        vocabulary: the tokens to index (a :class:`~.vocab.Vocabulary`).
        token_embeddings: an embedding or a list of them.
    """

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TextArgumentError("The argument `vocabulary` must be an instance of "
                                    "mxnet.contrib.text.indexer.Vocabulary.")
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        if not all(isinstance(e, _TokenEmbedding) for e in token_embeddings):
            raise TextArgumentError("The argument `token_embeddings` must be an instance or a "
                                    "list of instances of token embeddings whose vectors will "
                                    "be loaded or concatenated-then-loaded.")
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
