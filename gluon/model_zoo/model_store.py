"""Where the model zoo finds pretrained weights on disk (MXNet Gluon 1.9's
``gluon.model_zoo.model_store``), without downloading anything.

MXNet keeps the published weights of model ``name`` in ``{root}/{name}-{sha1[:8]}.params``
(``root`` is ``$MXNET_HOME/models``, else ``~/.mxnet/models``), in its binary NDArray
format, and checks the file's SHA-1 against its table. We look for the same file (so a
user's existing ``~/.mxnet/models`` works as it is) and check it against the same table;
we also accept a plain ``{root}/{name}.params`` (your own weights, not checked). We never
download: with no file, the error lists the paths we looked at.

Example:
    >>> from gluon.model_zoo import model_store
    >>> model_store.short_hash("resnet18_v1")
    'a0666292'
"""
from __future__ import annotations

import hashlib
import os

__all__ = ["default_root", "get_model_file", "purge", "short_hash"]

# The SHA-1 of each file MXNet 1.9's model store published (public facts about those
# files; they name the files and let us check them).
_model_sha1 = {
    "alexnet": "44335d1f0046b328243b32a26a4fbd62d9057b45",
    "densenet121": "f27dbf2dbd5ce9a80b102d89c7483342cd33cb31",
    "densenet161": "b6c8a95717e3e761bd88d145f4d0a214aaa515dc",
    "densenet169": "2603f878403c6aa5a71a124c4a3307143d6820e9",
    "densenet201": "1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb",
    "inceptionv3": "ed47ec45a937b656fcc94dabde85495bbef5ba1f",
    "mobilenet0.25": "9f83e440996887baf91a6aff1cccc1c903a64274",
    "mobilenet0.5": "8e9d539cc66aa5efa71c4b6af983b936ab8701c3",
    "mobilenet0.75": "529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2",
    "mobilenet1.0": "6b8c5106c730e8750bcd82ceb75220a3351157cd",
    "mobilenetv2_1.0": "36da4ff1867abccd32b29592d79fc753bca5a215",
    "mobilenetv2_0.75": "e2be7b72a79fe4a750d1dd415afedf01c3ea818d",
    "mobilenetv2_0.5": "aabd26cd335379fcb72ae6c8fac45a70eab11785",
    "mobilenetv2_0.25": "ae8f9392789b04822cbb1d98c27283fc5f8aa0a7",
    "resnet18_v1": "a0666292f0a30ff61f857b0b66efc0228eb6a54b",
    "resnet34_v1": "48216ba99a8b1005d75c0f3a0c422301a0473233",
    "resnet50_v1": "0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce",
    "resnet101_v1": "d988c13d6159779e907140a638c56f229634cb02",
    "resnet152_v1": "671c637a14387ab9e2654eafd0d493d86b1c8579",
    "resnet18_v2": "a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657",
    "resnet34_v2": "9d6b80bbc35169de6b6edecffdd6047c56fdd322",
    "resnet50_v2": "ecdde35339c1aadbec4f547857078e734a76fb49",
    "resnet101_v2": "18e93e4f48947e002547f50eabbcc9c83e516aa6",
    "resnet152_v2": "f2695542de38cf7e71ed58f02893d82bb409415e",
    "squeezenet1.0": "264ba4970a0cc87a4f15c96e25246a1307caf523",
    "squeezenet1.1": "33ba0f93753c83d86e1eb397f38a667eaf2e9376",
    "vgg11": "dd221b160977f36a53f464cb54648d227c707a05",
    "vgg11_bn": "ee79a8098a91fbe05b7a973fed2017a6117723a8",
    "vgg13": "6bc5de58a05a5e2e7f493e2d75a580d83efde38c",
    "vgg13_bn": "7d97a06c3c7a1aecc88b6e7385c2b373a249e95e",
    "vgg16": "e660d4569ccb679ec68f1fd3cce07a387252a90a",
    "vgg16_bn": "7f01cf050d357127a73826045c245041b0df7363",
    "vgg19": "ad2f660d101905472b83590b59708b71ea22b2e5",
    "vgg19_bn": "f360b758e856f1074a85abd5fd873ed1d98297c3",
}


def default_root() -> str:
    """MXNet's default model directory: ``$MXNET_HOME/models``, else ``~/.mxnet/models``.

    Returns:
        The directory (read from the environment at each call).
    """
    home = os.environ.get("MXNET_HOME") or os.path.join(os.path.expanduser("~"), ".mxnet")
    return os.path.join(home, "models")


def short_hash(name: str) -> str:
    """The first 8 hex digits of the SHA-1 of MXNet's published weights for ``name``.

    Args:
        name: a model name of :func:`gluon.model_zoo.vision.get_model`.

    Returns:
        The short hash in MXNet's file name.

    Raises:
        ValueError: MXNet published no weights for ``name``.
    """
    if name not in _model_sha1:
        raise ValueError(f"Pretrained model for {name} is not available.")
    return _model_sha1[name][:8]


def _sha1(path: str) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def get_model_file(name: str, root: str | None = None) -> str:
    """The local file of ``name``'s pretrained weights (never downloaded).

    Looks for MXNet's ``{root}/{name}-{short_hash}.params`` (its SHA-1 must be the
    published file's), then for ``{root}/{name}.params`` (not checked).

    Args:
        name: a model name of :func:`gluon.model_zoo.vision.get_model`.
        root: the directory (``~`` expanded); default :func:`default_root`.

    Returns:
        The path of the file.

    Raises:
        FileNotFoundError: no file; the message lists the paths looked at and says that
            nothing is downloaded.
        ValueError: MXNet's file name holds other content than the published file.

    Example:
        >>> import tempfile
        >>> from gluon.model_zoo import model_store
        >>> model_store.get_model_file("alexnet", root=tempfile.mkdtemp())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        FileNotFoundError: no pretrained weights for 'alexnet': looked for .../alexnet-44335d1f...
    """
    root = os.path.expanduser(root if root is not None else default_root())
    candidates = []
    if name in _model_sha1:
        mx_file = os.path.join(root, f"{name}-{short_hash(name)}.params")
        candidates.append(mx_file)
        if os.path.isfile(mx_file):
            digest = _sha1(mx_file)
            if digest != _model_sha1[name]:
                raise ValueError(
                    f"pretrained weights for {name!r}: {mx_file} has SHA-1 {digest}, not the "
                    f"published file's {_model_sha1[name]} (truncated or different weights; "
                    "kbackend does not download a fresh copy). Replace it with MXNet's file, "
                    f"or rename it to {name}.params to load it unchecked.")
            return mx_file
    plain = os.path.join(root, f"{name}.params")
    candidates.append(plain)
    if os.path.isfile(plain):
        return plain
    raise FileNotFoundError(
        f"no pretrained weights for {name!r}: looked for {' and '.join(candidates)}; "
        "kbackend never downloads weights. Put MXNet's file (from an MXNet installation's "
        f"~/.mxnet/models) or your own {name}.params (save_parameters) there, or pass "
        "root= (or set MXNET_HOME) to where it is.")


def purge(root: str | None = None) -> None:
    """Remove every ``.params`` file in ``root`` (MXNet's ``model_store.purge``).

    Args:
        root: the directory; default :func:`default_root`.
    """
    root = os.path.expanduser(root if root is not None else default_root())
    for f in os.listdir(root):
        if f.endswith(".params"):
            os.remove(os.path.join(root, f))
