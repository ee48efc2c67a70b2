"""SSA naming (PyPTO's scheme) and the constant pool."""

from __future__ import annotations

from ptoc.codegen.names import ConstantPool, SsaNames
from ptoc.dtypes import DataType
from ptoc.ir.nodes import Var
from ptoc.ir.types import ScalarType

IDX = ScalarType(DataType.INDEX)


def test_vars_keep_their_names_and_printer_made_twins_get_numbers():
    names = SsaNames({"c_a", "c_a_1", "x_2"})
    a, a1, x2 = Var("c_a", IDX), Var("c_a_1", IDX), Var("x_2", IDX)
    assert names.var(a) == "c_a"
    assert names.var(a1) == "0"     # 'c_a_1' is the printer's twin of 'c_a'
    assert names.var(x2) == "x_2"   # no variable is called 'x', so this is a real name
    assert names.var(a1) == "0"     # stable per Var
    assert names.temp() == "1"      # temporaries share the counter


def test_a_name_hint_used_twice_gets_a_number_the_second_time():
    names = SsaNames({"t"})
    first, second = Var("t", IDX), Var("t", IDX)
    assert (names.var(first), names.var(second)) == ("t", "0")


def test_derived_names_fall_back_to_numbers_when_taken():
    names = SsaNames(set())
    assert names.derived("a", "_pview") == "a_pview"
    assert names.derived("a", "_pview") == "0"


def test_constant_pool_names_orders_and_dedups():
    names = SsaNames(set())
    pool = ConstantPool(names)
    c64 = pool.get(64, DataType.INDEX)
    addr = pool.get(40960, DataType.INT64)
    neg = pool.get(-1, DataType.INDEX)
    half = pool.get(0.5, DataType.FP32)
    assert pool.get(64, DataType.INDEX) is c64
    assert [c64.name, addr.name, neg.name, half.name] == ["c64_index", "c40960_i64",
                                                          "c-1_index", "c0p5_f32"]
    ordered = [i.results[0].name for i in pool.instructions()]
    assert ordered == ["c40960_i64", "c64_index", "c-1_index", "c0p5_f32"]
    assert pool.get(True, DataType.BOOL).name == "ctrue_i1"
