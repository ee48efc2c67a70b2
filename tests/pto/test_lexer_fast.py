"""The regular-expression tokenizer gives exactly the tokens (and errors) of the careful
character scanner, on every PTO file of the tests and on random mutations of them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.pto import lexer

DATA = sorted((Path(__file__).parent / "data").glob("*.pto"))
TEXTS = [p.read_text() for p in DATA]
ALPHABET = list('%@!#<>"\\-.0123456789x eE\n\t,:=()[]{}?*+/abc_$') + ["é"]


def tokens(fn, text):
    try:
        return [(t.kind, t.text, t.line, t.col) for t in fn(text, "f.pto")]
    except Exception as exc:  # the scanner's own errors (and its crashes) must be the same
        return (type(exc).__name__, str(exc))


def test_files_tokenize_alike():
    assert TEXTS
    for text in TEXTS:
        assert tokens(lexer.tokenize, text) == tokens(lexer._scan, text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(TEXTS))),
       st.lists(st.tuples(st.floats(0, 1), st.integers(0, 2), st.sampled_from(ALPHABET)),
                min_size=1, max_size=4))
def test_mutants_tokenize_alike(index, edits):
    text = list(TEXTS[index])
    for where, op, ch in edits:
        i = int(where * len(text))
        if op == 0:
            text.insert(i, ch)
        elif i < len(text):
            if op == 1:
                del text[i]
            else:
                text[i] = ch
    mutant = "".join(text)
    assert tokens(lexer.tokenize, mutant) == tokens(lexer._scan, mutant)
