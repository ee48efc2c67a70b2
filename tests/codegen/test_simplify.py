"""The static facts codegen folds before emitting: trip counts, ranges, decided conditions."""

from __future__ import annotations

import pytest

from ptoc.codegen.simplify import Interval, decide, fold_binop, interval, trip_count
from ptoc.dtypes import DataType
from ptoc.ir.nodes import BinOp, ConstBool, ConstInt, UnaryOp, Var
from ptoc.ir.types import ScalarType

I = DataType.INDEX


def c(v):
    return ConstInt(v, I)


@pytest.fixture
def ko():
    return Var("ko", ScalarType(I))


@pytest.mark.parametrize("start, stop, step, trips", [
    (0, 160, 160, 1), (0, 256, 128, 2), (0, 2048, 512, 4), (0, 0, 16, 0), (16, 0, 16, 0),
    (10, 0, -3, 4), (0, 10, 0, 0), (0, 1, 5, 1),
])
def test_trip_count_matches_python_range(start, stop, step, trips):
    assert trip_count(start, stop, step) == trips
    if step:
        assert trips == len(range(start, stop, step))


def test_interval_arithmetic(ko):
    ranges = {ko: Interval(0, 1536)}
    assert interval(BinOp("+", ko, c(256)), ranges) == Interval(256, 1792)
    assert interval(BinOp("-", c(0), ko), ranges) == Interval(-1536, 0)
    assert interval(BinOp("*", ko, c(-2)), ranges) == Interval(-3072, 0)
    assert interval(UnaryOp("-", ko), ranges) == Interval(-1536, 0)
    assert interval(BinOp("//", ko, c(2)), ranges) is None
    assert interval(Var("n", ScalarType(I)), ranges) is None


def test_decide_uses_loop_ranges(ko):
    ranges = {ko: Interval(0, 1536)}
    assert decide(BinOp("==", BinOp("+", ko, c(256)), c(0)), ranges) is False
    assert decide(BinOp("==", ko, c(0)), ranges) is None  # the first trip only
    assert decide(BinOp(">=", ko, c(0)), ranges) is True
    assert decide(BinOp("<", ko, c(0)), ranges) is False
    assert decide(BinOp("<", ko, c(2048)), ranges) is True
    assert decide(BinOp(">", ko, c(1536)), ranges) is False
    assert decide(BinOp("!=", BinOp("+", ko, c(1)), c(0)), ranges) is True
    assert decide(UnaryOp("not", BinOp("<", ko, c(0))), ranges) is True


def test_decide_logic_and_constants(ko):
    ranges = {ko: Interval(0, 3)}
    unknown = BinOp("==", ko, c(1))
    assert decide(BinOp("and", unknown, ConstBool(False)), ranges) is False
    assert decide(BinOp("or", unknown, ConstBool(True)), ranges) is True
    assert decide(BinOp("and", unknown, ConstBool(True)), ranges) is None
    assert decide(ConstBool(True), {}) is True and decide(c(0), {}) is False


def test_fold_binop_only_folds_constants(ko):
    assert fold_binop(BinOp("+", c(80), c(0))).value == 80
    assert fold_binop(BinOp("//", c(7), c(2))).value == 3
    assert fold_binop(BinOp("//", c(7), c(0))) is None  # left for run time, not a crash
    assert fold_binop(BinOp("==", c(32), c(0))).value is False
    assert fold_binop(BinOp("+", ko, c(0))) is None  # no algebraic identities
