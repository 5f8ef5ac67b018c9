"""Stand-ins for the backend functions that are not implemented yet."""
from __future__ import annotations


def stub(module: str, name: str):
    """A function that raises NotImplementedError naming ``module.name`` when called."""

    def not_implemented(*args, **kwargs):
        raise NotImplementedError(
            f"kbackend: {module}.{name} is not implemented yet in the kbackend Keras "
            f"backend")

    not_implemented.__name__ = name
    not_implemented.__qualname__ = name
    return not_implemented


def add_stubs(namespace: dict, module: str, names) -> None:
    """Define a stub in ``namespace`` for each of ``names`` not defined there."""
    for name in names:
        if name not in namespace:
            namespace[name] = stub(module, name)
