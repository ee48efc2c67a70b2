"""Parse PTO text (Level 2 or Level 3) into a ``ptoc.pto.model.Module``.

Grammar (one op per line by convention; ``loc(...)`` may end any op; ``//`` comments):

    module      := 'module' ['attributes' attr-dict] '{' func* '}'   |  func+
    func        := 'func.func' '@'name '(' [%p ':' type {',' ...}] ')' ['attributes' attr-dict]
                   '{' op* ['return'] '}'
    op          := [%r {',' %r} '='] opname operands [loc]
    attr-dict   := '{' key '=' value {',' ...} '}'    value: "str" | int | float | true | false | #k<v>
    loc         := 'loc' '(' "file" ':' line ':' col ')'

Op forms are listed in ``ptoc.pto.ops``. Level-3 sync (ptoc's spelling):

    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]     (or an index SSA value: %ev)
    pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]
    pto.barrier <PIPE_ALL>

Structured control flow:

    [%r = ] scf.for %i = %lb to %ub step %s [iter_args(%a = %init) -> (index)] { ... } [loc]
    [%r = ] scf.if %cond [-> (index)] { ... } [else { ... }] [loc]
    scf.yield [%v {, %v} : type {, type}]
    [%r = ] scf.while (%b = %init) : (index) -> (index) { ... scf.condition(%c) %b : index }
            do { ^bb0(%a: index): ... scf.yield %next : index } [loc]
    scf.while : () -> () { ... scf.condition(%c) } do { ... scf.yield } [loc]

The parser checks syntax and that every used SSA value is defined in an enclosing scope
(it needs the definition's type); ``ptoc.pto.verify`` checks everything else.
"""

from __future__ import annotations

from ptoc.backend.pipes import NUM_EVENT_IDS, Pipe, PipeError
from ptoc.errors import PtoError, SourceLoc

from ptoc.pto.lexer import Token, tokenize
from ptoc.pto.model import (
    Attr, ConditionOp, ForOp, IfOp, Instruction, Kernel, Module, Op, PtoType, ScalarType, SyncOp,
    Value, WhileOp, YieldOp,
)
from ptoc.pto.ops import OP_TABLE, suggest_opcode
from ptoc.pto.types_text import parse_enum_attr, parse_scalar_type, parse_type_literal
from ptoc.dtypes import DataType

#: Optional ``key = %v`` parts of ``pto.alloc_tile``; ``row_stride`` (elements between rows,
#: ptoc's spelling of the stride a column-window ``pto.subview`` inherits) is printed only
#: when given.
_ALLOC_KEYS = ("addr", "valid_row", "valid_col", "row_stride")

def _int_literal(text: str) -> int:
    """Decimal or ``0x`` hexadecimal integer text (leading zeros allowed)."""
    body = text.lstrip("-")
    value = int(body, 16) if body.lower().startswith("0x") else int(body)
    return -value if text.startswith("-") else value


def parse(text: str, filename: str = "<pto>") -> Module:
    """Parse PTO ``text``; raise ``PtoError`` whose ``.loc.line`` is the offending line."""
    return _Parser(tokenize(text, filename), filename).module()


class _Scope:
    """Nested SSA scopes: a value is visible in its region and every nested region."""

    def __init__(self) -> None:
        self.frames: list[dict[str, PtoType]] = [{}]

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def lookup(self, name: str) -> PtoType | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def define(self, name: str, ty: PtoType) -> bool:
        if self.lookup(name) is not None:
            return False
        self.frames[-1][name] = ty
        return True


class _Parser:
    def __init__(self, tokens: list[Token], filename: str) -> None:
        self.toks = tokens
        self.pos = 0
        self.file = filename
        self.scope = _Scope()

    # -- token helpers -------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def loc_of(self, tok: Token) -> SourceLoc:
        return SourceLoc(self.file, tok.line, tok.col)

    def error(self, msg: str, tok: Token | None = None, hint: str | None = None) -> PtoError:
        return PtoError(msg, self.loc_of(tok or self.tok), hint=hint)

    def missing(self, msg: str, hint: str | None = None) -> PtoError:
        """Error for a missing token: blame the line the op was on, not the next line."""
        tok = self.tok
        if self.pos > 0 and self.toks[self.pos - 1].line < tok.line:
            prev = self.toks[self.pos - 1]
            tok = Token(prev.kind, prev.text, prev.line, prev.col + len(prev.text))
        return self.error(msg, tok, hint)

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def at(self, text: str, kind: str | None = None) -> bool:
        tok = self.tok
        return tok.text == text and (kind is None or tok.kind == kind) and tok.kind != "string"

    def accept(self, text: str) -> bool:
        if self.at(text) and self.tok.kind in ("punct", "ident"):
            self.advance()
            return True
        return False

    def expect(self, text: str, context: str) -> Token:
        if self.at(text) and self.tok.kind in ("punct", "ident"):
            return self.advance()
        shown = self.tok.text or "end of input"
        raise self.missing(f"expected '{text}' {context}, found '{shown}'",
                         hint=f"check the syntax of {context.removeprefix('in ').removeprefix('after ')}")

    def expect_kind(self, kind: str, context: str) -> Token:
        if self.tok.kind == kind:
            return self.advance()
        what = {"ssa": "an SSA value (%name)", "int": "an integer", "string": "a string",
                "ident": "a name", "sym": "a symbol (@name)", "type": "a type"}.get(kind, kind)
        shown = self.tok.text or "end of input"
        raise self.missing(f"expected {what} {context}, found '{shown}'")

    # -- values and types --------------------------------------------------------------------
    def use(self, context: str, ty: PtoType | None = None) -> Value:
        """An SSA use; its type is ``ty`` (written at the use) or the definition's."""
        tok = self.expect_kind("ssa", context)
        def_ty = self.scope.lookup(tok.text)
        if def_ty is None:
            raise self.error(f"undefined SSA value %{tok.text} {context}", tok,
                             hint="define it earlier in this or an enclosing region")
        return Value(tok.text, ty if ty is not None else def_ty)

    def define(self, tok: Token, ty: PtoType) -> Value:
        if not self.scope.define(tok.text, ty):
            raise self.error(f"SSA value %{tok.text} is defined twice", tok,
                             hint="give each definition a fresh name")
        return Value(tok.text, ty)

    def parse_type(self, context: str) -> PtoType:
        tok = self.tok
        if tok.kind == "type":
            self.advance()
            return parse_type_literal(tok.text, self.loc_of(tok))
        if tok.kind == "ident":
            self.advance()
            return parse_scalar_type(tok.text, self.loc_of(tok))
        raise self.error(f"expected a type {context}, found '{tok.text or 'end of input'}'",
                         hint="e.g. index, i64, f32, !pto.tile_buf<...>")

    def type_list(self, context: str) -> list[PtoType]:
        types = [self.parse_type(context)]
        while self.accept(","):
            types.append(self.parse_type(context))
        return types

    def attr_value(self) -> Attr:
        tok = self.advance()
        if tok.kind == "string":
            return tok.text
        if tok.kind == "int":
            return _int_literal(tok.text)
        if tok.kind == "float":
            return float(tok.text)
        if tok.kind == "attr":
            return parse_enum_attr(tok.text, self.loc_of(tok))
        if tok.kind == "ident" and tok.text in ("true", "false"):
            return tok.text == "true"
        raise self.error(f"bad attribute value '{tok.text}'", tok,
                         hint='use "string", a number, true/false or #dialect.kind<value>')

    def attr_dict(self) -> tuple[tuple[str, Attr], ...]:
        self.expect("{", "to open an attribute dictionary")
        items: list[tuple[str, Attr]] = []
        seen = set()
        while not self.at("}"):
            key = self.expect_kind("ident", "as an attribute name")
            if key.text in seen:
                raise self.error(f"attribute '{key.text}' given twice", key, hint="remove one")
            seen.add(key.text)
            self.expect("=", f"after attribute name '{key.text}'")
            items.append((key.text, self.attr_value()))
            if not self.accept(","):
                break
        self.expect("}", "to close the attribute dictionary")
        return tuple(items)

    def opt_loc(self) -> SourceLoc | None:
        if not (self.tok.kind == "ident" and self.tok.text == "loc" and self.peek().text == "("):
            return None
        self.advance()
        self.advance()
        file = self.expect_kind("string", "as the file of loc(...)")
        self.expect(":", "in loc(\"file\":line:col)")
        line = self._position(self.expect_kind("int", "as the line of loc(...)"), "line")
        self.expect(":", "in loc(\"file\":line:col)")
        col = self._position(self.expect_kind("int", "as the column of loc(...)"), "column")
        self.expect(")", "to close loc(...)")
        return SourceLoc(file.text, line, col)

    def _position(self, tok, what: str) -> int:
        value = _int_literal(tok.text)
        if value < 0:
            raise self.error(f"loc(...) {what} {tok.text} is negative", tok,
                             hint=f"give the source {what} as a number >= 0")
        return value

    # -- module and functions ------------------------------------------------------------------
    def module(self) -> Module:
        attrs: tuple = ()
        kernels: list[Kernel] = []
        if self.at("module", "ident"):
            self.advance()
            if self.accept("attributes"):
                attrs = self.attr_dict()
            self.expect("{", "to open the module body")
            while not self.at("}"):
                if self.tok.kind == "eof":
                    raise self.error("module body is not closed", hint="add '}'")
                kernels.append(self.func())
            self.expect("}", "to close the module")
        else:
            while self.tok.kind != "eof":
                kernels.append(self.func())
        if self.tok.kind != "eof":
            raise self.error(f"unexpected '{self.tok.text}' after the module", hint="remove it")
        if not kernels:
            raise self.error("no func.func kernel found", hint="write func.func @kernel(...) { ... }")
        names = set()
        for k in kernels:
            if k.name in names:
                raise PtoError(f"kernel @{k.name} is defined twice", SourceLoc(self.file, k.line, 1),
                               hint="rename one of them")
            names.add(k.name)
        return Module(tuple(kernels), attrs, filename=self.file)

    def func(self) -> Kernel:
        head = self.tok
        if not (head.kind == "ident" and head.text == "func.func"):
            raise self.error(f"expected 'func.func', found '{head.text or 'end of input'}'",
                             hint="a module holds func.func kernels")
        self.advance()
        name = self.expect_kind("sym", "after func.func")
        self.scope = _Scope()
        self.expect("(", "to open the parameter list")
        params: list[Value] = []
        while not self.at(")"):
            ptok = self.expect_kind("ssa", "as a parameter name")
            self.expect(":", f"after parameter %{ptok.text}")
            params.append(self.define(ptok, self.parse_type(f"of parameter %{ptok.text}")))
            if not self.accept(","):
                break
        self.expect(")", "to close the parameter list")
        attrs: tuple = ()
        if self.accept("attributes"):
            attrs = self.attr_dict()
        self.expect("{", "to open the function body")
        body = self.block(allow_return=True)
        self.expect("}", "to close the function body")
        loc = self.opt_loc()
        return Kernel(name.text, tuple(params), tuple(body), attrs, loc, line=head.line)

    def block(self, allow_return: bool = False) -> list[Op]:
        ops: list[Op] = []
        while not self.at("}"):
            tok = self.tok
            if tok.kind == "eof":
                raise self.error("region is not closed", hint="add '}'")
            if tok.kind == "ident" and tok.text in ("return", "func.return"):
                if not allow_return:
                    raise self.error("'return' is only allowed at the end of a function", tok,
                                     hint="remove it or move it to the function body")
                self.advance()
                self.opt_loc()
                if not self.at("}"):
                    raise self.error("'return' must be the last op of the function",
                                     hint="move the ops after 'return' before it")
                break
            ops.append(self.op())
        return ops

    # -- ops -----------------------------------------------------------------------------------------
    def op(self) -> Op:
        first = self.tok
        results: list[Token] = []
        if first.kind == "ssa":
            results.append(self.advance())
            while self.accept(","):
                results.append(self.expect_kind("ssa", "in the result list"))
            self.expect("=", "after the result list")
        name_tok = self.tok
        if name_tok.kind != "ident":
            raise self.error(f"expected an op name, found '{name_tok.text or 'end of input'}'",
                             hint="ops look like pto.tload ins(...) outs(...) or %x = arith.constant 0 : index")
        opcode = name_tok.text
        line = first.line
        self.advance()
        if opcode == "scf.for":
            return self.for_op(results, line)
        if opcode == "scf.if":
            return self.if_op(results, line)
        if opcode == "scf.while":
            return self.while_op(results, line)
        if opcode == "scf.condition":
            self.no_results(results, opcode)
            return self.condition_op(line)
        if opcode == "scf.yield":
            self.no_results(results, opcode)
            return self.yield_op(line)
        if opcode in ("pto.set_flag", "pto.wait_flag", "pto.barrier"):
            self.no_results(results, opcode)
            return self.sync_op(opcode, line)
        info = OP_TABLE.get(opcode)
        syntax = info.syntax if info is not None else None
        if syntax is None:
            if opcode.startswith("pto.") and self.at("ins"):
                syntax = "dps"   # unknown DPS op: parsed, rejected by the verifier
            else:
                raise self.error(f"unknown op '{opcode}'", name_tok, hint=suggest_opcode(opcode))
        handler = getattr(self, f"op_{syntax}")
        inst: Instruction = handler(opcode, results, line)
        loc = self.opt_loc()
        return Instruction(inst.opcode, inst.results, inst.ins, inst.outs, inst.attrs, loc, line)

    def no_results(self, results: list[Token], opcode: str) -> None:
        if results:
            raise self.error(f"{opcode} does not produce a value", results[0],
                             hint=f"remove '%{results[0].text} ='")

    def want_results(self, results: list[Token], opcode: str, count: int = 1) -> None:
        if len(results) != count:
            tok = results[-1] if results else self.tok
            raise self.error(f"{opcode} defines {count} value(s), got {len(results)}", tok,
                             hint=f"write %name = {opcode} ...")

    def op_constant(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        tok = self.advance()
        if tok.kind == "int":
            value: Attr = _int_literal(tok.text)
        elif tok.kind == "float":
            value = float(tok.text)
        elif tok.kind == "ident" and tok.text in ("true", "false"):
            value = tok.text == "true"
        else:
            raise self.error(f"arith.constant needs a number or true/false, found '{tok.text}'", tok,
                             hint="e.g. %c0 = arith.constant 0 : index")
        self.expect(":", "after the constant value")
        ty = self.parse_type("of arith.constant")
        return Instruction(opcode, (self.define(results[0], ty),), attrs=(("value", value),))

    def op_binary(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        a = self.use(f"as the first operand of {opcode}")
        self.expect(",", f"between the operands of {opcode}")
        b = self.use(f"as the second operand of {opcode}")
        self.expect(":", f"before the type of {opcode}")
        ty = self.parse_type(f"of {opcode}")
        return Instruction(opcode, (self.define(results[0], ty),), (a, b))

    def op_cmpi(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        pred = self.expect_kind("ident", "as the arith.cmpi predicate (eq, slt, ...)")
        self.expect(",", "after the arith.cmpi predicate")
        a = self.use("as the first operand of arith.cmpi")
        self.expect(",", "between the operands of arith.cmpi")
        b = self.use("as the second operand of arith.cmpi")
        self.expect(":", "before the operand type of arith.cmpi")
        self.parse_type("of arith.cmpi operands")
        res = self.define(results[0], ScalarType(DataType.BOOL))
        return Instruction(opcode, (res,), (a, b), attrs=(("predicate", pred.text),))

    def op_select(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        c = self.use("as the condition of arith.select")
        self.expect(",", "in arith.select")
        a = self.use("as the true value of arith.select")
        self.expect(",", "in arith.select")
        b = self.use("as the false value of arith.select")
        self.expect(":", "before the type of arith.select")
        ty = self.parse_type("of arith.select")
        return Instruction(opcode, (self.define(results[0], ty),), (c, a, b))

    def op_cast(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        src = self.use(f"as the operand of {opcode}")
        self.expect(":", f"after the operand of {opcode}")
        src_ty = self.parse_type(f"of the {opcode} operand")
        self.expect("to", f"in {opcode} (write '%x : i64 to index')")
        ty = self.parse_type(f"of the {opcode} result")
        return Instruction(opcode, (self.define(results[0], ty),), (Value(src.name, src_ty),))

    def value_list(self, context: str) -> tuple[Value, ...]:
        self.expect("[", f"to open {context}")
        vals: list[Value] = []
        while not self.at("]"):
            vals.append(self.use(f"in {context}"))
            if not self.accept(","):
                break
        self.expect("]", f"to close {context}")
        return tuple(vals)

    def keyword_list(self, key: str, opcode: str) -> tuple[Value, ...]:
        self.expect(key, f"in {opcode}")
        self.expect("=", f"after '{key}' in {opcode}")
        return self.value_list(f"the {key} list of {opcode}")

    def op_make_tensor_view(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        ptr = self.use(f"as the pointer of {opcode}")
        self.expect(",", f"after the pointer of {opcode}")
        shape = self.keyword_list("shape", opcode)
        self.expect(",", f"after the shape of {opcode}")
        strides = self.keyword_list("strides", opcode)
        extra = self.attr_dict() if self.at("{") else ()
        self.expect(":", f"before the result type of {opcode}")
        ty = self.parse_type(f"of {opcode}")
        attrs = (("shape", shape), ("strides", strides), *extra)
        return Instruction(opcode, (self.define(results[0], ty),), (ptr,), attrs=attrs)

    def op_partition_view(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        src = self.use(f"as the source of {opcode}")
        self.expect(",", f"after the source of {opcode}")
        offsets = self.keyword_list("offsets", opcode)
        self.expect(",", f"after the offsets of {opcode}")
        sizes = self.keyword_list("sizes", opcode)
        self.expect(":", f"before the types of {opcode}")
        src_ty = self.parse_type(f"of the {opcode} source")
        self.expect("->", f"between the source and result types of {opcode}")
        ty = self.parse_type(f"of the {opcode} result")
        return Instruction(opcode, (self.define(results[0], ty),), (Value(src.name, src_ty),),
                           attrs=(("offsets", offsets), ("sizes", sizes)))

    def view_types(self, opcode: str) -> tuple[PtoType, PtoType]:
        self.expect(":", f"before the types of {opcode}")
        src_ty = self.parse_type(f"of the {opcode} source")
        self.expect("->", f"between the source and result types of {opcode}")
        return src_ty, self.parse_type(f"of the {opcode} result")

    def op_treshape(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        src = self.use(f"as the source of {opcode}")
        src_ty, ty = self.view_types(opcode)
        return Instruction(opcode, (self.define(results[0], ty),), (Value(src.name, src_ty),))

    def op_subview(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        src = self.use(f"as the source of {opcode}")
        start = self.tok
        offsets = self.value_list(f"the offsets of {opcode} (write %t[%row, %col])")
        if len(offsets) != 2:
            raise self.error(f"{opcode} takes two offsets, got {len(offsets)}", start,
                             hint="write %t[%row, %col]")
        self.expect("sizes", f"in {opcode} (write sizes [R, C])")
        self.expect("[", f"before the sizes of {opcode}")
        sizes = []
        while self.tok.kind == "int":
            sizes.append(_int_literal(self.advance().text))
            if not self.accept(","):
                break
        self.expect("]", f"after the sizes of {opcode}")
        src_ty, ty = self.view_types(opcode)
        return Instruction(opcode, (self.define(results[0], ty),),
                           (Value(src.name, src_ty), *offsets), attrs=(("sizes", tuple(sizes)),))

    def op_alloc_tile(self, opcode, results, line) -> Instruction:
        self.want_results(results, opcode)
        found: dict[str, Value] = {}
        while self.tok.kind == "ident" and self.tok.text in _ALLOC_KEYS:
            key = self.advance()
            if key.text in found:
                raise self.error(f"'{key.text}' given twice in pto.alloc_tile", key, hint="remove one")
            self.expect("=", f"after '{key.text}'")
            found[key.text] = self.use(f"as {key.text} of pto.alloc_tile")
        self.expect(":", "before the tile type of pto.alloc_tile (optional parts: addr = %a "
                         "valid_row = %r valid_col = %c row_stride = %s)")
        ty = self.parse_type("of pto.alloc_tile")
        attrs = tuple((k, found.get(k)) for k in ("addr", "valid_row", "valid_col"))
        if "row_stride" in found:
            attrs += (("row_stride", found["row_stride"]),)
        return Instruction(opcode, (self.define(results[0], ty),), attrs=attrs)

    def operand_group(self, key: str, opcode: str) -> tuple[Value, ...]:
        self.expect(key, f"in {opcode} (write {opcode} ins(...) outs(...))")
        return self.paren_operands(f"{key}(...) of {opcode}")

    def paren_operands(self, where: str) -> tuple[Value, ...]:
        """``(%a, %b : T1, T2)`` (or ``()``): typed uses, each defined earlier."""
        open_tok = self.expect("(", f"to open {where}")
        names: list[Token] = []
        while self.tok.kind == "ssa":
            names.append(self.advance())
            if not self.accept(","):
                break
        types: list[PtoType] = []
        if self.accept(":"):
            types = self.type_list(f"in {where}")
        self.expect(")", f"to close {where}")
        if names and len(types) != len(names):
            raise self.error(f"{where} lists {len(names)} operand(s) but {len(types)} type(s)",
                             open_tok, hint="give one type per operand after ':'")
        vals = []
        for tok, ty in zip(names, types):
            if self.scope.lookup(tok.text) is None:
                raise self.error(f"undefined SSA value %{tok.text} in {where}", tok,
                                 hint="define it earlier in this or an enclosing region")
            vals.append(Value(tok.text, ty))
        return tuple(vals)

    def op_dps(self, opcode, results, line) -> Instruction:
        """``op ins(...) outs(...)``, or ``%v = op ins(...) outs : type`` for an op whose
        result is a scalar value (``pto.tgetval``)."""
        info = OP_TABLE.get(opcode)
        if info is None or info.rule != "getval":
            self.no_results(results, opcode)
        ins = self.operand_group("ins", opcode)
        if results:
            self.want_results(results, opcode)
            self.expect("outs", f"in {opcode} (write %v = {opcode} ins(...) outs : type)")
            self.expect(":", f"after 'outs' of {opcode}")
            value = self.define(results[0], self.parse_type(f"of the {opcode} result"))
            attrs = self.attr_dict() if self.at("{") else ()
            return Instruction(opcode, (value,), ins, (), attrs)
        outs = self.operand_group("outs", opcode)
        attrs = self.attr_dict() if self.at("{") else ()
        return Instruction(opcode, (), ins, outs, attrs)

    def op_call(self, opcode, results, line) -> Instruction:
        """``[%r =] opcode[(%a, %b : T, T)] [{attrs}] [-> T]`` (the cross-core pipe ops)."""
        ins = self.paren_operands(f"the operands of {opcode}") if self.at("(") else ()
        attrs = self.attr_dict() if self.at("{") else ()
        defined: tuple[Value, ...] = ()
        if results:
            self.want_results(results, opcode)
            self.expect("->", f"before the result type of {opcode}")
            defined = (self.define(results[0], self.parse_type(f"of the {opcode} result")),)
        elif self.at("->"):
            raise self.error(f"{opcode} has a result type but no result name",
                             hint=f"write %name = {opcode} ... -> T")
        return Instruction(opcode, defined, ins, (), attrs)

    # -- sync -------------------------------------------------------------------------------------------
    def bracket_name(self, context: str) -> Token:
        self.expect("<", f"to open {context}")
        tok = self.expect_kind("ident", f"as {context}")
        self.expect(">", f"to close {context}")
        return tok

    def pipe(self, context: str) -> Pipe:
        tok = self.bracket_name(context)
        try:
            return Pipe.parse(tok.text)
        except PipeError:
            raise self.error(f"unknown pipe '{tok.text}' {context}", tok,
                             hint="use PIPE_MTE2, PIPE_MTE1, PIPE_M, PIPE_FIX, PIPE_V, PIPE_MTE3, "
                                  "PIPE_S or PIPE_ALL") from None

    def sync_op(self, opcode: str, line: int) -> SyncOp:
        kind = opcode.removeprefix("pto.")
        if kind == "barrier":
            pipe = self.pipe("the pipe of pto.barrier")
            return SyncOp("barrier", pipe=pipe, loc=self.opt_loc(), line=line)
        self.expect("[", f"after {opcode} (write {opcode}[<PIPE_A>, <PIPE_B>, <EVENT_ID0>])")
        src = self.pipe(f"as the source pipe of {opcode}")
        self.expect(",", f"after the source pipe of {opcode}")
        dst = self.pipe(f"as the destination pipe of {opcode}")
        self.expect(",", f"after the destination pipe of {opcode}")
        event: int | Value
        if self.tok.kind == "ssa":
            event = self.use(f"as the event id of {opcode}")
        else:
            tok = self.bracket_name(f"the event id of {opcode}")
            if not (tok.text.startswith("EVENT_ID") and tok.text[8:].isdigit()):
                raise self.error(f"bad event id '{tok.text}' in {opcode}", tok,
                                 hint=f"use EVENT_ID0 .. EVENT_ID{NUM_EVENT_IDS - 1}")
            event = int(tok.text[8:])
        self.expect("]", f"to close {opcode}[...]")
        return SyncOp(kind, src=src, dst=dst, event=event, loc=self.opt_loc(), line=line)

    # -- control flow ---------------------------------------------------------------------------------
    def result_types(self, context: str) -> list[PtoType]:
        self.expect("->", f"before the result types of {context}")
        if self.accept("("):
            types = self.type_list(f"of {context} results") if not self.at(")") else []
            self.expect(")", f"to close the result types of {context}")
            return types
        return [self.parse_type(f"of {context} result")]

    def for_op(self, results: list[Token], line: int) -> ForOp:
        iv_tok = self.expect_kind("ssa", "as the induction variable of scf.for")
        self.expect("=", "after the scf.for induction variable")
        lower = self.use("as the lower bound of scf.for")
        self.expect("to", "between the scf.for bounds (write %i = %lb to %ub step %s)")
        upper = self.use("as the upper bound of scf.for")
        self.expect("step", "after the scf.for upper bound")
        step = self.use("as the step of scf.for")
        inits: list[tuple[Token, Value]] = []
        if self.accept("iter_args"):
            self.expect("(", "after iter_args")
            inits = self.init_pairs("iter_args")
        types = self.result_types("scf.for") if self.at("->") else []
        if len(types) != len(inits):
            raise self.error(f"scf.for has {len(inits)} iter_args but {len(types)} result types",
                             hint="give one result type per iter_arg")
        if len(results) != len(inits):
            raise self.error(f"scf.for with {len(inits)} iter_args defines {len(inits)} value(s), "
                             f"got {len(results)}", hint="match the results to the iter_args")
        self.expect("{", "to open the scf.for body")
        self.scope.push()
        iv = self.define(iv_tok, ScalarType(DataType.INDEX))
        iter_args = tuple((self.define(arg, ty), init) for (arg, init), ty in zip(inits, types))
        body = self.block()
        self.scope.pop()
        end = self.expect("}", "to close the scf.for body")
        loc = self.opt_loc()
        res = tuple(self.define(tok, ty) for tok, ty in zip(results, types))
        return ForOp(iv, lower, upper, step, tuple(body), iter_args, res, loc, line, end.line)

    def init_pairs(self, what: str) -> list[tuple[Token, Value]]:
        """``%a = %init {, ...} )``: region arguments with their initial values."""
        inits: list[tuple[Token, Value]] = []
        while self.tok.kind == "ssa":
            arg = self.advance()
            self.expect("=", f"after %{arg.text} in {what}")
            inits.append((arg, self.use(f"as the initial value of %{arg.text}")))
            if not self.accept(","):
                break
        self.expect(")", f"to close {what}")
        return inits

    def while_op(self, results: list[Token], line: int) -> WhileOp:
        inits = self.init_pairs("the scf.while arguments") if self.accept("(") else []
        self.expect(":", "before the scf.while types (write : (index) -> (index))")
        types = self.paren_types("argument types of scf.while")
        self.expect("->", "between the scf.while argument and result types")
        result_types = self.paren_types("result types of scf.while")
        if not len(types) == len(inits) == len(result_types) == len(results):
            raise self.error(f"scf.while has {len(inits)} argument(s), {len(types)} argument "
                             f"type(s), {len(result_types)} result type(s) and {len(results)} "
                             "result(s)", hint="give every carried value one type, the same "
                                               "on both sides of '->', and one result")
        if types != result_types:
            raise self.error(f"scf.while argument types ({', '.join(map(str, types))}) differ "
                             f"from its result types ({', '.join(map(str, result_types))})",
                             hint="a carried value keeps its type: write the same types on "
                                  "both sides of '->'")
        self.expect("{", "to open the scf.while condition region")
        self.scope.push()
        iter_args = tuple((self.define(arg, ty), init) for (arg, init), ty in zip(inits, types))
        cond = self.block()
        self.scope.pop()
        self.expect("}", "to close the scf.while condition region")
        if not cond or not isinstance(cond[-1], ConditionOp):
            raise self.error("the condition region of scf.while must end with "
                             "scf.condition(%c)", hint="end it with scf.condition(%cond) and "
                                                       "the values handed to the body")
        self.expect("do", "after the scf.while condition region")
        self.expect("{", "to open the scf.while body")
        self.scope.push()
        body_args: list[Value] = []
        if self.tok.kind == "block":
            self.advance()
            self.expect("(", "after the body's block label")
            while self.tok.kind == "ssa":
                arg = self.advance()
                self.expect(":", f"after the block argument %{arg.text}")
                body_args.append(self.define(arg, self.parse_type(f"of %{arg.text}")))
                if not self.accept(","):
                    break
            self.expect(")", "to close the block arguments")
            self.expect(":", "after the block arguments")
        body = self.block()
        self.scope.pop()
        end = self.expect("}", "to close the scf.while body")
        if not body or not isinstance(body[-1], YieldOp):
            raise self.error("the body of scf.while must end with scf.yield",
                             hint="end it with scf.yield of the next values (bare when none)")
        loc = self.opt_loc()
        res = tuple(self.define(tok, ty) for tok, ty in zip(results, types))
        return WhileOp(tuple(cond), tuple(body), iter_args, tuple(body_args), res, loc, line,
                       end.line)

    def paren_types(self, context: str) -> list[PtoType]:
        self.expect("(", f"to open the {context}")
        types = self.type_list(f"of the {context}") if not self.at(")") else []
        self.expect(")", f"to close the {context}")
        return types

    def condition_op(self, line: int) -> ConditionOp:
        self.expect("(", "after scf.condition")
        cond = self.use("as the condition of scf.condition")
        self.expect(")", "to close scf.condition(...)")
        values, loc = self.terminator_values("scf.condition", line,
                                             "an scf.while condition region",
                                             "move the ops after it before it")
        return ConditionOp(cond, tuple(values), loc, line)

    def region(self, context: str) -> tuple[list[Op], Token]:
        self.expect("{", f"to open the {context}")
        self.scope.push()
        body = self.block()
        self.scope.pop()
        return body, self.expect("}", f"to close the {context}")

    def if_op(self, results: list[Token], line: int) -> IfOp:
        cond = self.use("as the condition of scf.if")
        types = self.result_types("scf.if") if self.at("->") else []
        if len(results) != len(types):
            raise self.error(f"scf.if with {len(types)} result type(s) defines {len(types)} "
                             f"value(s), got {len(results)}", hint="match results and '-> (types)'")
        then_body, end = self.region("scf.if then-region")
        else_body: list[Op] = []
        has_else = False
        if self.accept("else"):
            has_else = True
            else_body, end = self.region("scf.if else-region")
        loc = self.opt_loc()
        res = tuple(self.define(tok, ty) for tok, ty in zip(results, types))
        return IfOp(cond, tuple(then_body), tuple(else_body), res, has_else, loc, line, end.line)

    def yield_op(self, line: int) -> YieldOp:
        values, loc = self.terminator_values("scf.yield", line,
                                             "an scf.for / scf.if / scf.while region",
                                             "remove it, or move the ops after it before it")
        return YieldOp(values, loc, line)

    def terminator_values(self, opcode: str, line: int, region: str, fix: str
                          ) -> tuple[tuple[Value, ...], SourceLoc | None]:
        """``%a, %b : T, U [loc]`` after ``scf.yield`` / ``scf.condition(%c)``, which must
        end ``region``; the values and the op's loc."""
        names: list[Token] = []
        while self.tok.kind == "ssa":
            names.append(self.advance())
            if not self.accept(","):
                break
        types: list[PtoType] = []
        if names:
            self.expect(":", f"before the {opcode} types")
            types = self.type_list(f"of {opcode}")
            if len(types) != len(names):
                raise self.error(f"{opcode} lists {len(names)} value(s) but {len(types)} "
                                 "type(s)", hint="give one type per value")
        values = []
        for tok, ty in zip(names, types):
            if self.scope.lookup(tok.text) is None:
                raise self.error(f"undefined SSA value %{tok.text} in {opcode}", tok,
                                 hint="define it earlier in this region")
            values.append(Value(tok.text, ty))
        loc = self.opt_loc()
        if not self.at("}"):
            raise PtoError(f"{opcode} must end {region}", SourceLoc(self.file, line, 1),
                           hint=fix)
        return tuple(values), loc
