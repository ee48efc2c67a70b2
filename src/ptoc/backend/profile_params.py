"""A timing profile's constants by name, and profile files (JSON) that override them.

Why names: a calibration fits a handful of numbers spread over nested cost models (the
MTE1 paths, two drain models, the GM share, the launch floor). Each gets one stable dotted
name (``mte1.l0a_bytes_per_cycle``) so a fit can read and replace it and a profile file can
store it, without the fit knowing how the profile is built.

Profile file (``ptoc calibrate`` writes it; ``get_profile(PATH)``, ``RunConfig(profile=PATH)``
and ``--profile PATH`` read it)::

    {"format": "ptoc-profile/1", "name": "my-910b", "base": "a2a3-device",
     "constants": {"mte1.l0a_bytes_per_cycle": 160.2, ...}, "notes": ["..."], "fit": {...}}

Constants not listed keep the base profile's values.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from ptoc.dtypes import MemorySpace
from ptoc.files import write_json

FORMAT = "ptoc-profile/1"

_D, _M, _V = MemorySpace.DDR, MemorySpace.Mat, MemorySpace.Vec
_L, _R = MemorySpace.Left, MemorySpace.Right

#: name -> path into the profile: attribute names, and keys of the transfers/drains mappings.
PARAMETERS: Mapping[str, tuple] = MappingProxyType({
    "mad.head_cycles": ("mad_head_cycles",),
    "mte1.head_cycles": ("mte1_head_cycles",),
    "mte1.l0a_bytes_per_cycle": ("transfers", (_M, _L), "bytes_per_cycle"),
    "mte1.l0b_bytes_per_cycle": ("transfers", (_M, _R), "bytes_per_cycle"),
    "mte2.gm_l1_bytes_per_cycle": ("transfers", (_D, _M), "bytes_per_cycle"),
    "mte2.gm_ub_bytes_per_cycle": ("transfers", (_D, _V), "bytes_per_cycle"),
    "mte3.ub_gm_bytes_per_cycle": ("transfers", (_V, _D), "bytes_per_cycle"),
    "drain_gm.fixed_cycles": ("drains", _D, "fixed_cycles"),
    "drain_gm.row_cycles": ("drains", _D, "row_cycles"),
    "drain_gm.bytes_per_cycle": ("drains", _D, "bytes_per_cycle"),
    "drain_gm.penalty_cycles": ("drains", _D, "penalty_cycles"),
    "drain_l1.fixed_cycles": ("drains", _M, "fixed_cycles"),
    "drain_l1.row_cycles": ("drains", _M, "row_cycles"),
    "drain_l1.bytes_per_cycle": ("drains", _M, "bytes_per_cycle"),
    "drain_l1.penalty_cycles": ("drains", _M, "penalty_cycles"),
    "gm.chip_bytes_per_cycle": ("gm_chip_bytes_per_cycle",),
    "launch.fixed_cycles": ("launch", "fixed_cycles"),
    "launch.block_cycles": ("launch", "block_cycles"),
    "launch.staging_bytes_per_cycle": ("launch", "staging_bytes_per_cycle"),
})


#: Constants that may be 0 (an overhead that is absent); all others must be > 0.
_ZERO_OK = ("head_cycles", "fixed_cycles", "penalty_cycles", "block_cycles")


def _profile_error(message: str, hint: str):
    from ptoc.backend.profiles import ProfileError  # noqa: PLC0415 - profiles imports us

    return ProfileError(message, hint=hint)


def _step(obj, key):
    if isinstance(key, str):
        return getattr(obj, key, None)
    return obj.get(key) if isinstance(obj, Mapping) else None


def _get(profile, path: tuple):
    obj = profile
    for key in path:
        obj = _step(obj, key)
        if obj is None:
            return None
    return float(obj) if isinstance(obj, (int, float)) and not isinstance(obj, bool) else None


def _replace(obj, path: tuple, value: float):
    key, rest = path[0], path[1:]
    if isinstance(key, str):
        current = getattr(obj, key)
        new = _replace(current, rest, value) if rest else value
        return dataclasses.replace(obj, **{key: new})
    items = dict(obj)
    items[key] = _replace(items[key], rest, value)
    return MappingProxyType(items)


def profile_constants(profile) -> dict[str, float]:
    """Every named constant the profile has (a path it lacks, e.g. a5's GM share, is absent)."""
    found = {name: _get(profile, path) for name, path in PARAMETERS.items()}
    return {name: value for name, value in found.items() if value is not None}


def with_constants(profile, constants: Mapping[str, float], *, name: str | None = None):
    """``profile`` with ``constants`` replaced; unknown or absent names raise ProfileError."""
    have = profile_constants(profile)
    for key, value in constants.items():
        if key not in PARAMETERS:
            raise _profile_error(f"unknown profile constant {key!r}",
                                 f"known constants: {', '.join(PARAMETERS)}")
        if key not in have:
            raise _profile_error(f"profile {profile.name} has no {key} to set",
                                 f"constants of {profile.name}: {', '.join(have)}")
        may_be_zero = key.endswith(_ZERO_OK)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0 or (value == 0 and not may_be_zero):
            raise _profile_error(f"profile constant {key} = {value!r} is out of range",
                                 "bandwidths and per-row costs must be finite and > 0; fixed "
                                 "cycles finite and >= 0")
        profile = _replace(profile, PARAMETERS[key], float(value))
    return dataclasses.replace(profile, name=name) if name else profile


def save_profile(path, profile, base: str, *, notes=(), fit: dict | None = None) -> Path:
    """Write ``profile`` as a profile file over the named ``base`` profile."""
    data = {"format": FORMAT, "name": profile.name, "base": base, "target": profile.target,
            "constants": profile_constants(profile), "notes": list(notes), "fit": fit or {}}
    return write_json(path, data, indent=2)


def is_profile_file(name: str) -> bool:
    """Whether a profile argument names a file rather than a built-in profile."""
    return str(name).endswith(".json") or Path(str(name)).is_file()


def load_profile(path, resolve_base):
    """The profile a file describes: its base (``resolve_base(name)``) with its constants."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _profile_error(f"profile file {p} does not exist",
                             "pass a file written by `ptoc calibrate`, or a built-in profile "
                             "name") from None
    except (OSError, ValueError) as exc:
        raise _profile_error(f"profile file {p} is not readable JSON ({exc})",
                             "pass a file written by `ptoc calibrate`") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _profile_error(f"profile file {p} is not a {FORMAT} file",
                             "write it with `ptoc calibrate ... --output FILE`")
    constants = data.get("constants")
    if not isinstance(constants, dict):
        raise _profile_error(f"profile file {p} has no 'constants' object",
                             "write it with `ptoc calibrate ... --output FILE`")
    base = resolve_base(data.get("base"))
    profile = with_constants(base, constants, name=str(data.get("name") or p.stem))
    notes = tuple(str(n) for n in data.get("notes", ()))
    return dataclasses.replace(profile, notes=profile.notes + notes)
