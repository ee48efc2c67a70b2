"""SSA value names and the constant pool of one kernel.

Names follow PyPTO's kernels so that ptoc's PTO reads the same as PyPTO's for the same IR:

* a variable keeps its IR name (``%lm__ssa_v0``) unless that name is already taken or the
  variable is a renamed duplicate — the IR printer disambiguates variables that share a name
  hint by appending ``_1``, ``_2`` — in which case it gets the next number (``%0``, ``%1``);
  numbered values share one counter with the anonymous results of index arithmetic;
* tile variables are named up front, in program order, before anything is emitted (so the
  numbers of duplicate tiles come before those of the arithmetic), other variables when
  their statement is emitted;
* derived values add a suffix: ``%a_view`` (tensor view of a parameter), ``%a_pview``
  (partition view of the tensor a load reads or a store writes);
* constants are hoisted to the top of the kernel and named ``%c<value>_<type>``
  (``%c0_index``, ``%c40960_i64``), grouped i64, then index, then the rest, each group in
  order of first use.

Every name is unique in the kernel, so the text never redefines a value in a nested region.
"""

from __future__ import annotations

import re

from ptoc.dtypes import DataType
from ptoc.ir.nodes import Var
from ptoc.pto.model import Instruction, ScalarType, Value

_DUP = re.compile(r"^(.*)_(\d+)$")
_BAD = re.compile(r"[^A-Za-z0-9_.$]")


def _clean(hint: str) -> str:
    name = _BAD.sub("_", hint or "v")
    return name if name else "v"


class SsaNames:
    """Hands out unique SSA names for one kernel."""

    def __init__(self, hints: set[str]):
        self._hints = set(hints)
        self._taken: set[str] = set()
        self._by_var: dict[Var, str] = {}  # Vars hash by identity
        self._next = 0

    def reserve(self, name: str) -> None:
        self._taken.add(name)

    def is_taken(self, name: str) -> bool:
        return name in self._taken

    def temp(self) -> str:
        """The next numbered name (``0``, ``1``, ...)."""
        while str(self._next) in self._taken:
            self._next += 1
        name = str(self._next)
        self._next += 1
        self._taken.add(name)
        return name

    def is_duplicate(self, name: str) -> bool:
        """Whether ``name`` is a printer-made ``<hint>_<n>`` twin of another variable."""
        m = _DUP.match(name)
        return bool(m) and m.group(1) in self._hints

    def var(self, var: Var) -> str:
        """The name of ``var`` (stable: the same Var always gets the same name)."""
        found = self._by_var.get(var)
        if found is not None:
            return found
        base = _clean(var.name)
        if base in self._taken or self.is_duplicate(base) or base[0].isdigit():
            name = self.temp()
        else:
            name = base
            self._taken.add(name)
        self._by_var[var] = name
        return name

    def derived(self, base: str, suffix: str) -> str:
        """``<base><suffix>`` if free, else a numbered name."""
        name = _clean(base) + suffix
        if name in self._taken:
            return self.temp()
        self._taken.add(name)
        return name


def _const_name(value, dtype: DataType) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)  # MLIR-style: %c-1_index ('-' is legal in SSA names)
    else:
        text = repr(float(value)).replace("-", "neg").replace(".", "p").replace("+", "")
    return f"c{text}_{dtype.pto_name}"


_GROUP_ORDER = {DataType.INT64: 0, DataType.INDEX: 1}


class ConstantPool:
    """The kernel's ``arith.constant`` ops, one per (value, type), hoisted to the top."""

    def __init__(self, names: SsaNames):
        self._names = names
        self._values: dict[tuple, Value] = {}   # in first-use order

    def get(self, value, dtype: DataType) -> Value:
        if dtype is DataType.BOOL:
            value = bool(value)
        elif dtype.is_float:
            value = float(value)
        else:
            value = int(value)
        key = (value, dtype)   # the dtype decides the value's Python type (bool/float/int)
        found = self._values.get(key)
        if found is not None:
            return found
        name = _const_name(value, dtype)
        if self._names.is_taken(name):
            name = self._names.temp()
        else:
            self._names.reserve(name)
        v = Value(name, ScalarType(dtype))
        self._values[key] = v
        return v

    def instructions(self) -> list[Instruction]:
        """The constants, i64 first, then index, then others, each in first-use order."""
        # a stable sort: within a group the keys keep their (first-use) order
        keys = sorted(self._values, key=lambda k: _GROUP_ORDER.get(k[1], 2))
        return [Instruction("arith.constant", results=(self._values[key],),
                            attrs=(("value", key[0]),)) for key in keys]


def describe(node) -> str:
    """Short text of an IR node for error messages."""
    from ptoc.ir.printer import format_node  # noqa: PLC0415

    try:
        return format_node(node)
    except Exception:  # pragma: no cover - messages must never fail
        return repr(node)
