"""The content-hashed compile cache of ``@pl.jit``.

The key is made of everything that changes the compiled output: the source of the entry
and of every incore function it names, the ptoc version, parameter names, shapes and
dtypes, scalar values, the platform, the resolved memory planner (RunConfig, else the
active PassContext, else PYPTO) and the *effective* dbC flag (``flag and planner ==
PYPTO``: under PTOAS dbC is automatic, so the flag does not split the key there).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path

import ptoc


def resolve_options(config) -> dict:
    """Compile options in force for a call: RunConfig, else the active context, else defaults."""
    from ptoc.passes import MemoryPlanner, PassContext
    from ptoc.passes.context import _coerce_enum

    ctx = PassContext.current()
    planner = config.memory_planner if config is not None and config.memory_planner is not None \
        else ctx.memory_planner
    planner = _coerce_enum(MemoryPlanner, planner, "memory planner")
    flag = config.enable_pypto_l0c_double_buffer if config is not None and \
        config.enable_pypto_l0c_double_buffer is not None else ctx.enable_pypto_l0c_double_buffer
    platform = config.platform if config is not None else "a2a3sim"
    return {"memory_planner": planner, "enable_pypto_l0c_double_buffer": bool(flag),
            "effective_dbc": bool(flag) and planner is MemoryPlanner.PYPTO,
            "platform": platform}


def cache_key(jit, types: dict, scalars: dict, options: dict) -> str:
    payload = {
        "ptoc": ptoc.__version__,
        "source": jit.source_digest(),
        "params": [a.arg for a in jit.source.node.args.args],
        "tensors": {name: [list(t.shape), t.dtype.value] for name, t in sorted(types.items())},
        "scalars": {name: repr(v) for name, v in sorted(scalars.items())},
        "platform": options["platform"],
        "memory_planner": options["memory_planner"].name,
        "effective_dbc": options["effective_dbc"],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class DiskCache:
    """Optional on-disk cache of compiled programs (pickled), one file per key."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / f"{key}.pkl"

    def load(self, key: str):
        path = self.path(key)
        if not path.exists():
            return None
        try:
            with path.open("rb") as fh:
                return pickle.load(fh)
        except Exception:  # a stale or truncated entry is simply recompiled
            return None

    def store(self, key: str, compiled) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.path(key).with_suffix(".tmp")
        with tmp.open("wb") as fh:
            pickle.dump(compiled, fh)
        tmp.replace(self.path(key))
