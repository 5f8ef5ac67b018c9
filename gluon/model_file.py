"""``Block.save(prefix)`` and ``Block.load(prefix)``: a model's structure and parameters
in ``<prefix>-model.json`` and ``<prefix>-model.params`` (MXNet Gluon 1.9's).

The JSON file holds a nested dictionary, one entry per block, keyed by its class name
in lower case plus its position in a depth-first walk (``myblock0``, ``dense1``, ...):
the block's name when saved (``orig_name``), the key its parent knew it by
(``children``: ``{child name: key}``), and for a hybridized block ``hybridized``, its
``in_format`` and its traced graph (``symbol``, MXNet symbol JSON; informational: the
block is traced again on its first call). ``load`` does not rebuild the architecture:
the block must be created the same way (same classes, same order of children); it gets
back the names, the children's keys and the hybridization, then the parameters.
"""
from __future__ import annotations

import json

from core import serialization
from core.symbol.json_io import graph_to_json

__all__ = ["load_model", "save_model"]


def _is_hybrid(block) -> bool:
    """Whether ``block`` is a HybridBlock (without importing gluon.block, which imports
    this module)."""
    return hasattr(block, "_cached_graphs")


def _key(block, index: list) -> str:
    return f"{type(block).__name__.lower()}{index[0]}"


def save_model(block, prefix: str) -> None:
    """Write ``block``'s structure to ``prefix-model.json`` and its parameters to
    ``prefix-model.params`` (see the module doc). Both writes are atomic.

    Args:
        block: the model.
        prefix: the files' prefix.
    """
    def describe(blk, index, structure):
        entry: dict = {"orig_name": blk.name}
        structure[_key(blk, index)] = entry
        if _is_hybrid(blk):
            cached = blk._last_cached if blk._active else None
            entry["hybridized"] = cached is not None
            if cached is not None:
                entry["in_format"] = _as_list(blk._in_format)
                entry["out_format"] = None
                entry["inputs"] = list(cached.in_names)
                entry["symbol"] = graph_to_json(cached.op.graph, indent=None)
        children: dict = {}
        entry["children"] = children
        for ch_name, child in blk._children.items():
            index[0] += 1
            children[child.name] = ch_name
            describe(child, index, entry)

    model: dict = {}
    describe(block, [0], model)
    text = json.dumps(model).encode("utf-8")
    serialization.atomic_write(prefix + "-model.json", lambda f: f.write(text))
    block.save_parameters(prefix + "-model.params")


def load_model(block, prefix: str) -> None:
    """Restore what :func:`save_model` wrote into ``block``, created as the saved one was.

    Args:
        block: the model, constructed like the saved one (not necessarily initialized).
        prefix: the files' prefix.

    Raises:
        ValueError: the file is not a saved model, or its structure does not match
            ``block``'s (naming the block and the key that was looked for).
    """
    filename = prefix + "-model.json"
    with open(filename, encoding="utf-8") as f:
        try:
            model = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"Block.load: '{filename}' is not a saved model ({e})") from None
    if not isinstance(model, dict):
        raise ValueError(  # noqa: TRY004 - the file's content is malformed, not an argument
            f"Block.load: '{filename}' holds {type(model).__name__}, not the dictionary "
            "Block.save writes")

    def restore(blk, index, structure):
        key = _key(blk, index)
        entry = structure.get(key) if isinstance(structure, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("orig_name"), str):
            raise ValueError(  # noqa: TRY004 - the file does not match the model
                f"Block.load: '{filename}' has no entry {key!r} for {type(blk).__name__} "
                f"'{blk.name}': the model must be created as the saved one was (same blocks "
                "in the same order)")
        _rename(blk, entry["orig_name"])
        if _is_hybrid(blk) and entry.get("hybridized"):
            blk._clear_cached_op()
            blk._active = True
            blk._in_format = _as_tuple(entry.get("in_format"))
        for child in blk._children.values():
            index[0] += 1
            restore(child, index, entry)
        children = entry.get("children") or {}
        remapped = {}
        for child in blk._children.values():
            if child.name not in children:
                raise ValueError(f"Block.load: '{filename}' does not list child "
                                 f"'{child.name}' of {type(blk).__name__} '{blk.name}'")
            remapped[children[child.name]] = child
        blk._children.clear()
        blk._children.update(remapped)

    restore(block, [0], model)
    block.load_parameters(prefix + "-model.params")


def _rename(blk, name: str) -> None:
    """Give ``blk`` its saved name; its parameters' keys follow (MXNet's load)."""
    params = blk.params
    old_prefix = params.prefix
    blk._name = name
    renamed = {}
    for key, p in params._params.items():
        suffix = key[len(old_prefix):] if old_prefix and key.startswith(old_prefix) else key
        renamed[f"{name}_{suffix}"] = p
    params._params.clear()
    params._params.update(renamed)


def _as_list(fmt):
    return [_as_list(f) for f in fmt] if isinstance(fmt, (list, tuple)) else fmt


def _as_tuple(fmt):
    return tuple(_as_tuple(f) for f in fmt) if isinstance(fmt, list) else fmt
