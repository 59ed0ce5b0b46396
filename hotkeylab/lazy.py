"""Lazy re-exports for lesson packages: figures and notebook helpers import matplotlib, so a
package's ``__init__`` names them without importing them until first use."""

from __future__ import annotations

import importlib

__all__ = ["lazy_exports"]


def lazy_exports(package: str, lazy: dict, namespace: dict):
    """``(__getattr__, __dir__)`` for ``package``: ``lazy`` maps a name to the submodule holding it;
    a name is imported on first access and then cached in ``namespace`` (the package's globals)."""

    def __getattr__(name: str):
        if name in lazy:
            value = getattr(importlib.import_module(f".{lazy[name]}", package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(lazy))

    return __getattr__, __dir__
