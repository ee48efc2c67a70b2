"""Scalar expressions -> ``arith`` ops (a mixin of ``KernelEmitter``).

Index arithmetic is emitted where it is used, once per use (no CSE), as PyPTO does: the
extract at ``ko + 256`` gets its own ``arith.addi`` right before the ``textract``. Constants
never become ops in place; they come from the kernel's hoisted pool (``ConstantPool``), typed
by the context (an offset is ``index``, an address ``i64``, a ``tadds`` operand the tile's
dtype). Integer division is ``floordivsi`` (Python's ``//``), comparisons are signed.

The host class provides ``emit``, ``consts``, ``scalars`` (Var -> Value) and ``temp_name``.
"""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.ir.nodes import BinOp, Call, ConstBool, ConstFloat, ConstInt, UnaryOp, Var
from ptoc.ir.types import ScalarType as IrScalarType
from ptoc.pto.model import Instruction, ScalarType, Value

from ptoc.codegen.errors import CodegenError
from ptoc.codegen.names import describe

_INT_BINOPS = {"+": "arith.addi", "-": "arith.subi", "*": "arith.muli", "//": "arith.floordivsi",
               "/": "arith.divsi", "%": "arith.remsi", "and": "arith.andi", "or": "arith.ori"}
_FLOAT_BINOPS = {"+": "arith.addf", "-": "arith.subf", "*": "arith.mulf", "/": "arith.divf"}
#: scalar min / max calls and the arith op family each lowers to
EXTREMES = {"tile.min": "min", "tile.max": "max"}
_CMP_PREDICATES = {"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}


class ScalarLowering:
    """Lowers scalar IR expressions to SSA scalars (mixed into ``KernelEmitter``)."""

    def const(self, value, dtype: DataType) -> Value:
        return self.consts.get(value, dtype)

    def index(self, expr, loc=None) -> Value:
        """``expr`` as an ``index`` value (constants are hoisted; ints are cast)."""
        kind = type(expr)   # most offsets and extents: a Python int or an integer constant
        if kind is int:
            return self.consts.get(expr, DataType.INDEX)
        if kind is ConstInt:
            return self.consts.get(expr.value, DataType.INDEX)
        return self.scalar(expr, DataType.INDEX, loc)

    def scalar(self, expr, want: DataType | None = None, loc=None, name: str | None = None) -> Value:
        """Emit the ops computing scalar ``expr`` and return its value.

        ``want`` converts constants (and casts integer values) to that type; ``name`` names
        the result of the top-level arithmetic op (default: a numbered temporary).
        """
        if isinstance(expr, Var):   # first: most operands are variables or integers
            value = self.scalars.get(expr)
            if value is None:
                raise CodegenError(
                    f"scalar '{expr.name}' is used before codegen saw its definition", loc,
                    hint="scalars must be kernel parameters, loop variables or assigned "
                    "before use")
            return self._cast(value, want, loc)
        if isinstance(expr, bool):
            expr = ConstBool(expr)
        elif isinstance(expr, int):   # as ConstInt(expr, want or INDEX) would lower
            if want is not None and want.is_float:
                return self.const(float(expr), want)
            return self.const(expr, want or DataType.INDEX)
        elif isinstance(expr, float):
            expr = ConstFloat(expr, want or DataType.FP32)
        if isinstance(expr, ConstInt):
            if want is not None and want.is_float:
                return self.const(float(expr.value), want)
            return self.const(expr.value, want if want is not None else expr.dtype)
        if isinstance(expr, ConstBool):
            return self.const(expr.value, DataType.BOOL)
        if isinstance(expr, ConstFloat):
            return self.const(expr.value, want if want is not None and want.is_float
                              else expr.dtype)
        if isinstance(expr, BinOp):
            return self._binop(expr, want, loc, name)
        if isinstance(expr, UnaryOp):
            return self._unary(expr, want, loc, name)
        if isinstance(expr, Call) and expr.op in EXTREMES and not expr.is_function:
            return self._cast(self.extreme(expr, name or self.temp_name(), loc), want, loc)
        raise CodegenError(f"cannot lower scalar expression {describe(expr)} to PTO", loc,
                           hint="only constants, scalar variables and + - * // % / "
                           "comparisons and/or/not are supported")

    def extreme(self, call: Call, name: str, loc) -> Value:
        """``pl.min(a, b)`` / ``pl.max(a, b)`` of two scalars, wherever it appears (a tail's
        ``valid_shape=[pl.min(m - i, T), C]`` holds it inside a shape)."""
        ty = call.type
        dtype = ty.dtype if isinstance(ty, IrScalarType) else DataType.INDEX
        lhs = self.scalar(call.args[0], dtype, loc)
        rhs = self.scalar(call.args[1], dtype, loc)
        which = EXTREMES[call.op]
        opcode = f"arith.{which}imumf" if dtype.is_float else f"arith.{which}si"
        value = Value(name, ScalarType(dtype))
        self.emit(Instruction(opcode, results=(value,), ins=(lhs, rhs), loc=loc))
        return value

    def _cast(self, value: Value, want: DataType | None, loc) -> Value:
        have = value.type.dtype if isinstance(value.type, ScalarType) else None
        if want is None or have is None or have is want:
            return value
        if want is DataType.BOOL or have is DataType.BOOL or (
                DataType.INDEX in (want, have) and (want.is_float or have.is_float)):
            raise CodegenError(f"scalar %{value.name} is {have.pto_name}, but "
                               f"{want.pto_name} is needed here", loc,
                               hint="convert the scalar explicitly in the DSL")
        if want.is_float and have.is_float:
            opcode = "arith.extf" if want.bits > have.bits else "arith.truncf"
        elif want.is_float or have.is_float:
            opcode = "arith.sitofp" if want.is_float else "arith.fptosi"
        else:
            opcode = "arith.index_cast" if DataType.INDEX in (want, have) else (
                "arith.extsi" if want.bits > have.bits else "arith.trunci")
        result = Value(self.temp_name(), ScalarType(want))
        self.emit(Instruction(opcode, results=(result,), ins=(value,), loc=loc))
        return result

    def _natural(self, expr) -> DataType | None:
        if isinstance(expr, (ConstInt, ConstFloat)):
            return None  # constants adapt to the other operand
        if isinstance(expr, ConstBool):
            return DataType.BOOL
        ty = getattr(expr, "type", None)
        if isinstance(ty, IrScalarType):
            if isinstance(expr, BinOp):
                a = self._natural(expr.lhs)
                return a if a is not None else self._natural(expr.rhs)
            return ty.dtype
        return None

    def _binop(self, expr: BinOp, want, loc, name) -> Value:
        op = expr.op
        if op in _CMP_PREDICATES:
            dtype = self._natural(expr.lhs) or self._natural(expr.rhs) or DataType.INDEX
            a = self.scalar(expr.lhs, dtype, loc)
            b = self.scalar(expr.rhs, dtype, loc)
            result = Value(name or self.temp_name(), ScalarType(DataType.BOOL))
            if dtype.is_float:
                pred = {"==": "oeq", "!=": "one", "<": "olt", "<=": "ole", ">": "ogt",
                        ">=": "oge"}[op]
                raise CodegenError(f"float comparison '{op}' ({pred}) has no PTO lowering in "
                                   "ptoc yet", loc, hint="compare integer scalars")
            self.emit(Instruction("arith.cmpi", results=(result,), ins=(a, b),
                                  attrs=(("predicate", _CMP_PREDICATES[op]),), loc=loc))
            return result
        if op in ("and", "or"):
            a = self.scalar(expr.lhs, DataType.BOOL, loc)
            b = self.scalar(expr.rhs, DataType.BOOL, loc)
            result = Value(name or self.temp_name(), ScalarType(DataType.BOOL))
            self.emit(Instruction(_INT_BINOPS[op], results=(result,), ins=(a, b), loc=loc))
            return result
        dtype = want or self._natural(expr) or (
            expr.lhs.dtype if isinstance(expr.lhs, (ConstInt, ConstFloat)) else DataType.INDEX)
        table = _FLOAT_BINOPS if dtype.is_float else _INT_BINOPS
        if op not in table:
            raise CodegenError(f"scalar operator '{op}' on {dtype.pto_name} has no PTO lowering",
                               loc, hint="use + - * // % on integers, + - * / on floats")
        a = self.scalar(expr.lhs, dtype, loc)
        b = self.scalar(expr.rhs, dtype, loc)
        result = Value(name or self.temp_name(), ScalarType(dtype))
        self.emit(Instruction(table[op], results=(result,), ins=(a, b), loc=loc))
        return result

    def _unary(self, expr: UnaryOp, want, loc, name) -> Value:
        if expr.op == "not":
            x = self.scalar(expr.operand, DataType.BOOL, loc)
            result = Value(name or self.temp_name(), ScalarType(DataType.BOOL))
            self.emit(Instruction("arith.xori", results=(result,),
                                  ins=(x, self.const(True, DataType.BOOL)), loc=loc))
            return result
        dtype = want or self._natural(expr.operand) or DataType.INDEX
        zero = self.const(0.0 if dtype.is_float else 0, dtype)
        x = self.scalar(expr.operand, dtype, loc)
        result = Value(name or self.temp_name(), ScalarType(dtype))
        opcode = "arith.subf" if dtype.is_float else "arith.subi"
        self.emit(Instruction(opcode, results=(result,), ins=(zero, x), loc=loc))
        return result
