"""Print a ``ptoc.pto.model.Module`` as PTO text.

The layout follows PyPTO's output byte for byte (two-space module indent, function body at
the function's indent, nested regions two spaces deeper), so printing a parsed PyPTO
``kernel.pto`` reproduces it.
"""

from __future__ import annotations

from functools import lru_cache

from ptoc.errors import SourceLoc

from ptoc.pto.lexer import escape
from ptoc.pto.model import (
    Attr, ConditionOp, EnumAttr, ForOp, IfOp, Instruction, Kernel, Module, Op, SyncOp, Value,
    WhileOp, YieldOp,
)
from ptoc.pto.ops import OP_TABLE

_INDENT = "  "


def print_module(module: Module) -> str:
    """The PTO text of ``module``, ending in a newline like PyPTO's files."""
    return _module(module, None)


def print_numbered(module: Module, filename: str = "<pto>") -> tuple[str, Module]:
    """The PTO text of ``module`` and the module as ``parse(text, filename)`` would give it
    back: every op, loop and kernel carries the line it is printed on. A compile hands this
    module to the reports and the simulator instead of parsing its own output again."""
    numbered: list[Kernel] = []
    text = _module(module, numbered)
    return text, Module(tuple(numbered), module.attrs, filename=filename)


def _module(module: Module, numbered: list[Kernel] | None) -> str:
    lines: list[str] = []
    head = "module"
    if module.attrs:
        head += f" attributes {attr_dict(module.attrs)}"
    lines.append(head + " {")
    for kernel in module.kernels:
        _kernel(kernel, lines, _INDENT, numbered)
    lines.append("}")
    return "\n".join(lines) + "\n"


def print_op(op: Op, indent: str = "") -> str:
    """One op (with any nested regions) as text."""
    lines: list[str] = []
    _op(op, lines, indent)
    return "\n".join(lines)


def attr_value(value: Attr) -> str:
    if isinstance(value, Value):   # first: shape / offset / size lists are lists of values
        return "%" + value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + escape(value) + '"'
    if isinstance(value, EnumAttr):
        return str(value)
    if isinstance(value, tuple):
        return "[" + ", ".join([attr_value(v) for v in value]) + "]"
    return str(value)


def attr_dict(attrs) -> str:
    return "{" + ", ".join(f"{k} = {attr_value(v)}" for k, v in attrs) + "}"


def loc_suffix(loc: SourceLoc | None) -> str:
    if loc is None:
        return ""
    return f' loc("{_escaped_file(loc.file)}":{loc.line}:{loc.col})'


@lru_cache(maxsize=256)
def _escaped_file(name: str) -> str:
    """``escape`` of a loc's file name (one or two names per module, on every op)."""
    return escape(name)


def _kernel(kernel: Kernel, lines: list[str], indent: str,
            numbered: list[Kernel] | None) -> None:
    params = ", ".join(f"{p}: {p.type}" for p in kernel.params)
    head = f"{indent}func.func @{kernel.name}({params})"
    if kernel.attrs:
        head += f" attributes {attr_dict(kernel.attrs)}"
    lines.append(head + " {")
    line = len(lines)
    body = _ops(kernel.body, lines, indent, numbered is not None)
    lines.append(f"{indent}return")
    lines.append(f"{indent}}}{loc_suffix(kernel.loc)}")
    if numbered is not None:
        numbered.append(Kernel(kernel.name, kernel.params, body, kernel.attrs, kernel.loc,
                               line=line))


def _ops(ops, lines: list[str], indent: str, number: bool) -> tuple:
    """Print ``ops``; with ``number``, return them carrying their printed lines."""
    if not number:
        for op in ops:
            _op(op, lines, indent, False)
        return ops
    return tuple([_op(op, lines, indent, True) for op in ops])


def _names(values) -> str:
    """``%a, %b`` (the printer's hottest text: every operand list)."""
    return ", ".join(["%" + v.name for v in values])


def _types(values) -> str:
    return ", ".join([str(v.type) for v in values])


def _results(values) -> str:
    return _names(values) + " = " if values else ""


def _op(op: Op, lines: list[str], indent: str, number: bool = False) -> Op | None:
    """Print one op; with ``number``, return it carrying the line it starts on (and, for
    regions, the line of the closing brace)."""
    line = len(lines) + 1
    if isinstance(op, Instruction):
        lines.append(indent + instruction_text(op) + loc_suffix(op.loc))
        return Instruction(op.opcode, op.results, op.ins, op.outs, op.attrs, op.loc,
                           line) if number else None
    if isinstance(op, SyncOp):
        lines.append(indent + sync_text(op) + loc_suffix(op.loc))
        return SyncOp(op.kind, op.src, op.dst, op.event, op.pipe, op.loc,
                      line) if number else None
    if isinstance(op, YieldOp):
        text = "scf.yield"
        if op.values:
            text += " " + _names(op.values) + " : " + _types(op.values)
        lines.append(indent + text + loc_suffix(op.loc))
        return YieldOp(op.values, op.loc, line) if number else None
    if isinstance(op, ForOp):
        head = (f"{indent}{_results(op.results)}scf.for {op.iv} = {op.lower} to {op.upper} "
                f"step {op.step}")
        if op.iter_args:
            head += " iter_args(" + ", ".join(f"{a} = {i}" for a, i in op.iter_args) + ")"
            head += " -> (" + ", ".join(str(a.type) for a, _ in op.iter_args) + ")"
        lines.append(head + " {")
        body = _ops(op.body, lines, indent + _INDENT, number)
        lines.append(f"{indent}}}{loc_suffix(op.loc)}")
        return ForOp(op.iv, op.lower, op.upper, op.step, body, op.iter_args, op.results,
                     op.loc, line, len(lines)) if number else None
    if isinstance(op, ConditionOp):
        text = f"scf.condition({op.cond})"
        if op.values:
            text += " " + _names(op.values) + " : " + _types(op.values)
        lines.append(indent + text + loc_suffix(op.loc))
        return ConditionOp(op.cond, op.values, op.loc, line) if number else None
    if isinstance(op, WhileOp):
        types = ", ".join(str(a.type) for a, _ in op.iter_args)
        inits = ", ".join(f"{a} = {i}" for a, i in op.iter_args)
        head = f"{indent}{_results(op.results)}scf.while "
        head += f"({inits}) : ({types}) -> ({types})" if op.iter_args else ": () -> ()"
        lines.append(head + " {")
        cond = _ops(op.cond, lines, indent + _INDENT, number)
        lines.append(f"{indent}}} do {{")
        if op.body_args:
            lines.append(f"{indent}^bb0(" + ", ".join(f"{a}: {a.type}" for a in op.body_args)
                         + "):")
        body = _ops(op.body, lines, indent + _INDENT, number)
        lines.append(f"{indent}}}{loc_suffix(op.loc)}")
        return WhileOp(cond, body, op.iter_args, op.body_args, op.results, op.loc, line,
                       len(lines)) if number else None
    if isinstance(op, IfOp):
        head = f"{indent}{_results(op.results)}scf.if {op.cond}"
        if op.results:
            head += " -> (" + ", ".join(str(r.type) for r in op.results) + ")"
        lines.append(head + " {")
        then_body = _ops(op.then_body, lines, indent + _INDENT, number)
        else_body = op.else_body
        if op.has_else or op.else_body:
            lines.append(f"{indent}}} else {{")
            else_body = _ops(op.else_body, lines, indent + _INDENT, number)
        lines.append(f"{indent}}}{loc_suffix(op.loc)}")
        return IfOp(op.cond, then_body, else_body, op.results, op.has_else, op.loc, line,
                    len(lines)) if number else None
    raise TypeError(f"cannot print {type(op).__name__}")  # pragma: no cover - no other kinds


def sync_text(op: SyncOp) -> str:
    if op.kind == "barrier":
        return f"pto.barrier <{op.pipe.pto_name}>"
    event = str(op.event) if isinstance(op.event, Value) else f"<EVENT_ID{op.event}>"
    return f"{op.opcode}[<{op.src.pto_name}>, <{op.dst.pto_name}>, {event}]"


def _group(key: str, values: tuple[Value, ...]) -> str:
    if not values:
        return f"{key}()"
    return f"{key}({_names(values)} : {_types(values)})"


def instruction_text(inst: Instruction) -> str:
    """The op text of ``inst`` without its ``loc(...)`` suffix."""
    info = OP_TABLE.get(inst.opcode)
    syntax = info.syntax if info is not None else "dps"
    res = _results(inst.results)
    op = inst.opcode
    if syntax == "constant":
        return f"{res}{op} {attr_value(inst.attr('value'))} : {inst.results[0].type}"
    if syntax == "binary":
        a, b = inst.ins
        return f"{res}{op} {a}, {b} : {inst.results[0].type}"
    if syntax == "cmpi":
        a, b = inst.ins
        return f"{res}{op} {inst.attr('predicate')}, {a}, {b} : {a.type}"
    if syntax == "select":
        c, a, b = inst.ins
        return f"{res}{op} {c}, {a}, {b} : {inst.results[0].type}"
    if syntax == "cast":
        (a,) = inst.ins
        return f"{res}{op} {a} : {a.type} to {inst.results[0].type}"
    if syntax == "make_tensor_view":
        shape = attr_value(inst.attr("shape", ()))
        strides = attr_value(inst.attr("strides", ()))
        extra = [(k, v) for k, v in inst.attrs if k not in ("shape", "strides")]
        text = f"{res}{op} {inst.ins[0]}, shape = {shape}, strides = {strides}"
        if extra:
            text += " " + attr_dict(extra)
        return text + f" : {inst.results[0].type}"
    if syntax == "partition_view":
        src = inst.ins[0]
        return (f"{res}{op} {src}, offsets = {attr_value(inst.attr('offsets', ()))}, "
                f"sizes = {attr_value(inst.attr('sizes', ()))} : {src.type} -> "
                f"{inst.results[0].type}")
    if syntax == "treshape":
        src = inst.ins[0]
        return f"{res}{op} {src} : {src.type} -> {inst.results[0].type}"
    if syntax == "subview":
        src, row, col = inst.ins
        sizes = ", ".join(str(n) for n in inst.attr("sizes", ()))
        return (f"{res}{op} {src}[{row}, {col}] sizes [{sizes}] : {src.type} -> "
                f"{inst.results[0].type}")
    if syntax == "alloc_tile":
        parts = [f"{k} = {v}" for k, v in inst.attrs if isinstance(v, Value)]
        middle = " " + " ".join(parts) if parts else ""
        return f"{res}{op}{middle} : {inst.results[0].type}"
    if syntax == "call":
        text = f"{res}{op}"
        if inst.ins:
            text += _group("", inst.ins)
        if inst.attrs:
            text += " " + attr_dict(inst.attrs)
        if inst.results:
            text += f" -> {inst.results[0].type}"
        return text
    if inst.results:
        text = f"{res}{op} {_group('ins', inst.ins)} outs : {inst.results[0].type}"
    else:
        text = f"{op} {_group('ins', inst.ins)} {_group('outs', inst.outs)}"
    if inst.attrs:
        text += " " + attr_dict(inst.attrs)
    return text
