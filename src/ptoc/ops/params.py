"""Parameter-spec shorthands shared by every op family module."""

from __future__ import annotations

from ptoc.ops.registry import REQUIRED, ParamSpec


def pos(name: str, kind: str = "expr", default=REQUIRED) -> ParamSpec:
    """A positional parameter (required unless ``default`` is given)."""
    return ParamSpec(name, kind, positional=True, default=default)


def kw(name: str, kind: str = "static", default=None, also_positional: bool = False) -> ParamSpec:
    """A keyword parameter; ``also_positional`` lets callers pass it by position too."""
    return ParamSpec(name, kind, positional=False, default=default, also_positional=also_positional)
