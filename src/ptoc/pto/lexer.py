"""Tokenizer for PTO text (the MLIR ``pto`` dialect subset ptoc reads).

Type and attribute literals such as ``!pto.tile_buf<loc=mat, ...>`` and ``#pto.layout<nd>``
become single tokens (their ``<...>`` body is balanced), because their insides use a
different micro-syntax (``160x64xf32``, ``key=value``) that ``ptoc.pto.types_text`` parses.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ptoc.errors import PtoError, SourceLoc


class Token(NamedTuple):
    """kind: ssa | sym | block | type | attr | ident | int | float | string | punct | eof
    (``block`` is a block label such as ``^bb0``, without the ``^``).

    A named tuple, not a dataclass: a kernel has thousands of tokens and this is the
    cheapest immutable record to build."""

    kind: str
    text: str
    line: int
    col: int


_PUNCT2 = ("->",)
_PUNCT1 = "()[]{}<>,:=?*+"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.$]*")
_SSA = re.compile(r"%[A-Za-z0-9_.$-]+")
_SYM = re.compile(r"@[A-Za-z0-9_.$]+")
_NUMBER = re.compile(r"-?(0x[0-9a-fA-F]+|\d+(\.\d*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_BLOCK = re.compile(r"[A-Za-z0-9_]+")


def escape(text: str) -> str:
    """Escape a string for a PTO string literal (backslash and double quote)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def unescape(body: str) -> str:
    """Undo ``escape`` on the body of a string literal."""
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


#: One pattern for every token of well-formed text (type literals nested up to three '<'
#: deep); anything it does not match goes to the character-by-character scanner below,
#: which accepts the rest and words the errors.
_FAST = re.compile(r"""
    (?P<nl>\n) | (?P<ws>[ \t\r]+) | (?P<comment>//[^\n]*)
  | %(?P<ssa>[A-Za-z0-9_.$-]+)
  | @(?P<sym>[A-Za-z0-9_.$]+)
  | \^(?P<block>[A-Za-z0-9_]+)
  | (?P<lit>[!#][A-Za-z_][A-Za-z0-9_.]*
        (?:<(?:[^<>\n]|<(?:[^<>\n]|<[^<>\n]*>)*>)*>)?)
  | "(?P<string>(?:[^"\\\n]|\\[^\n])*)"
  | (?P<number>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.$]*)
  | (?P<punct>->|[()\[\]{}<>,:=?*+])
""", re.X)


def tokenize(text: str, filename: str = "<pto>") -> list[Token]:
    """Split ``text`` into tokens; ``//`` comments run to the end of the line.

    One regular expression covers well-formed text (what every compile prints); text it
    cannot cover is re-read by the careful scanner, which gives the same tokens and the
    errors with their line and column."""
    tokens: list[Token] = []
    line, line_start, pos, n = 1, 0, 0, len(text)
    append = tokens.append
    for m in _FAST.finditer(text):
        if m.start() != pos:
            return _scan(text, filename)
        pos = m.end()
        kind = m.lastgroup
        if kind == "nl":
            line += 1
            line_start = pos
        elif kind not in ("ws", "comment"):
            col = m.start() - line_start + 1
            body = m.group(kind)
            if kind == "lit":
                if m.end() < n and text[m.end()] == "<":
                    return _scan(text, filename)  # nested deeper, or unterminated
                kind = "type" if body[0] == "!" else "attr"
            elif kind == "string":
                body = unescape(body)
            elif kind == "number":
                if not (body[0].isdigit() or body[1].isdigit()):
                    return _scan(text, filename)  # "-." or ".-": the scanner decides
                kind = "float" if any(c in body for c in ".eE") and "x" not in body else "int"
            append(Token(kind, body, line, col))
    if pos != n:
        return _scan(text, filename)
    append(Token("eof", "", line, pos - line_start + 1))
    return tokens


def _scan(text: str, filename: str) -> list[Token]:
    """The character-by-character tokenizer (see ``tokenize``)."""
    tokens: list[Token] = []
    line, line_start, i, n = 1, 0, 0, len(text)

    def err(msg: str, at: int, hint: str | None = None) -> PtoError:
        return PtoError(msg, SourceLoc(filename, line, at - line_start + 1), hint=hint)

    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            line_start = i
            continue
        if ch in " \t\r":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        col = i - line_start + 1
        if ch == "%":
            m = _SSA.match(text, i)
            if not m:
                raise err("'%' must be followed by an SSA value name", i,
                          "write SSA values as %name, e.g. %c0_index")
            tokens.append(Token("ssa", m.group()[1:], line, col))
            i = m.end()
            continue
        if ch == "@":
            m = _SYM.match(text, i)
            if not m:
                raise err("'@' must be followed by a symbol name", i, "e.g. func.func @kernel(...)")
            tokens.append(Token("sym", m.group()[1:], line, col))
            i = m.end()
            continue
        if ch == "^":
            m = _BLOCK.match(text, i + 1)
            if not m:
                raise err("'^' must be followed by a block name", i, "e.g. ^bb0(%a: index):")
            tokens.append(Token("block", m.group(), line, col))
            i = m.end()
            continue
        if ch in "!#":
            m = _DOTTED.match(text, i + 1)
            if not m:
                raise err(f"'{ch}' must be followed by a dialect name", i,
                          "e.g. !pto.tile_buf<...> or #pto.layout<nd>")
            j = m.end()
            if j < n and text[j] == "<":
                depth, k = 0, j
                while k < n:
                    if text[k] == "<":
                        depth += 1
                    elif text[k] == ">":
                        depth -= 1
                        if depth == 0:
                            break
                    elif text[k] == "\n":
                        break
                    k += 1
                if k >= n or text[k] != ">":
                    raise err(f"unterminated '<' in {text[i:j]}<...", i, "close it with '>'")
                j = k + 1
            tokens.append(Token("type" if ch == "!" else "attr", text[i:j], line, col))
            i = j
            continue
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if j >= n or text[j] != '"':
                raise err("unterminated string literal", i, 'close it with "')
            tokens.append(Token("string", unescape(text[i + 1:j]), line, col))
            i = j + 1
            continue
        if ch.isdigit() or (ch in "-." and i + 1 < n and text[i + 1].isdigit()):
            m = _NUMBER.match(text, i)
            if m:
                body = m.group()
                kind = "float" if any(c in body for c in ".eE") and "x" not in body else "int"
                tokens.append(Token(kind, body, line, col))
                i = m.end()
                continue
        if ch.isalpha() or ch == "_":
            m = _IDENT.match(text, i)
            word = m.group()
            tokens.append(Token("ident", word, line, col))
            i = m.end()
            continue
        if text.startswith("->", i):
            tokens.append(Token("punct", "->", line, col))
            i += 2
            continue
        if ch in _PUNCT1:
            tokens.append(Token("punct", ch, line, col))
            i += 1
            continue
        raise err(f"unexpected character {ch!r}", i, "remove it or check the op syntax")
    tokens.append(Token("eof", "", line, i - line_start + 1))
    return tokens
