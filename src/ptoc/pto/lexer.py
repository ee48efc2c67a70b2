"""Tokenizer for PTO text (the MLIR ``pto`` dialect subset ptoc reads).

Type and attribute literals such as ``!pto.tile_buf<loc=mat, ...>`` and ``#pto.layout<nd>``
become single tokens (their ``<...>`` body is balanced), because their insides use a
different micro-syntax (``160x64xf32``, ``key=value``) that ``ptoc.pto.types_text`` parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ptoc.errors import PtoError, SourceLoc


@dataclass(frozen=True)
class Token:
    """kind: ssa | sym | type | attr | ident | int | float | string | punct | eof."""

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


def tokenize(text: str, filename: str = "<pto>") -> list[Token]:
    """Split ``text`` into tokens; ``//`` comments run to the end of the line."""
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
