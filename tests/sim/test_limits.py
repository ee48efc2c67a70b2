"""The simulator's limits (issue 16 points 6-8): scalar steps are capped as well as pipe
instructions, a too-large run is refused up front with the numbers, a MemoryError becomes a
SimLimitError, and scalar arithmetic errors are PtocErrors naming the PTO line."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ptoc.errors import PtoError, PtocError
from ptoc.pto import parse
from ptoc.sim import SimLimitError, SimLimits, SimProgramError, simulate
from ptoc.sim.examples import k_loop_sum

X = np.ones((16, 16), np.float32)


def scalar_kernel(body: str, consts: str = "") -> str:
    """A kernel with one unused GM parameter and ``body`` (no pipe instruction)."""
    return ("module {\n  func.func @k(%arg0: !pto.ptr<f32>) {\n"
            "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
            f"{consts}{body}    return\n  }}\n}}\n")


def run(text, limits=None):
    return simulate(text, [np.zeros(4, np.float32)], limits=limits)


# ---- point 6: scalar steps -------------------------------------------------------------------

def test_a_loop_without_pipe_instructions_is_refused_before_it_runs():
    text = scalar_kernel("    scf.for %i = %c0 to %n step %c1 {\n"
                         "      %a = arith.addi %i, %c1 : index\n    }\n",
                         "    %n = arith.constant 10000000000 : index\n")
    t0 = time.perf_counter()
    with pytest.raises(SimLimitError) as info:
        run(text)
    assert time.perf_counter() - t0 < 30, "refused up front, not after running"
    msg = str(info.value)
    assert "scalar steps (limit 20,000,000)" in msg and "<pto>:6 (10,000,000,000 trips)" in msg
    assert "fix:" in msg


def test_scalar_steps_are_counted_while_running():
    """A triangular nest: the estimate counts the inner loop once, the scalar unit counts
    every iteration and stops at the limit with the line of the loop."""
    text = scalar_kernel("    scf.for %i = %c0 to %n step %c1 {\n"
                         "      scf.for %j = %c0 to %i step %c1 {\n"
                         "        %a = arith.addi %j, %c1 : index\n      }\n    }\n",
                         "    %n = arith.constant 1000 : index\n")
    limits = SimLimits(max_scalar_steps=50_000)
    with pytest.raises(SimLimitError, match="more than 50,000 scalar steps") as info:
        run(text, limits)
    assert info.value.loc.line in (6, 7)
    run(text, SimLimits(max_scalar_steps=2_000_000))   # 500k steps: within a larger limit


def test_the_instruction_limit_is_configurable():
    with pytest.raises(SimLimitError, match=r"602 pipe instructions \(limit 500\)"):
        simulate(k_loop_sum(100), [X, np.zeros_like(X)], limits=SimLimits(max_instructions=500))
    result = simulate(k_loop_sum(100), [X, np.zeros_like(X)],
                      limits=SimLimits(max_instructions=700))
    np.testing.assert_array_equal(result.outputs["arg1"].reshape(16, 16), 100 * X)


# ---- point 7: up-front estimate, MemoryError ---------------------------------------------------

def test_an_oversized_run_is_refused_up_front_with_the_numbers():
    t0 = time.perf_counter()
    with pytest.raises(SimLimitError) as info:
        simulate(k_loop_sum(10 ** 9), [X, np.zeros_like(X)])
    assert time.perf_counter() - t0 < 30
    msg = str(info.value)
    assert "6,000,000,002 pipe instructions (limit 5,000,000)" in msg
    assert "of memory (limit 8.0 GiB" in msg and "(999,999,999 trips)" in msg


def test_memory_error_becomes_a_sim_limit_error(monkeypatch):
    import ptoc.sim.api as api

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(api, "find_races", exhausted)
    with pytest.raises(SimLimitError, match=r"ran out of memory after 602 instructions"):
        simulate(k_loop_sum(100), [X, np.zeros_like(X)])


# ---- point 8: scalar arithmetic and loc(...) ---------------------------------------------------

@pytest.mark.parametrize("code,lhs,rhs,message", [
    ("arith.divsi", 7, 0, "division by zero"),
    ("arith.floordivsi", 7, 0, "division by zero"),
    ("arith.remsi", 7, 0, "division by zero"),
    ("arith.ceildivsi", 7, 0, "division by zero"),
    ("arith.remui", 7, 0, "division by zero"),
    ("arith.muli", 1 << 40, 1 << 40, "does not fit a 64-bit integer"),
])
def test_scalar_arithmetic_errors_name_the_line(code, lhs, rhs, message):
    text = scalar_kernel(f"    %r = {code} %a, %b : index\n",
                         f"    %a = arith.constant {lhs} : index\n"
                         f"    %b = arith.constant {rhs} : index\n")
    with pytest.raises(SimProgramError, match=message) as info:
        run(text)
    assert info.value.loc.line == 7


def test_signed_division_truncates_exactly_beyond_float_precision():
    big = (1 << 62) + 1
    text = scalar_kernel("    %q = arith.divsi %a, %b : index\n"
                         "    %r = arith.remsi %a, %b : index\n"
                         "    %ok = arith.cmpi eq, %q, %want : index\n"
                         "    scf.if %ok {\n    } else {\n"
                         "      %bad = arith.divsi %a, %c0 : index\n    }\n",
                         f"    %a = arith.constant -{big} : index\n"
                         "    %b = arith.constant 3 : index\n"
                         f"    %want = arith.constant -{big // 3} : index\n")
    run(text)   # int(a / b) in floats gives a different quotient and takes the else branch


def test_float_division_by_zero_is_ieee():
    text = scalar_kernel("    %r = arith.divf %a, %z : f32\n",
                         "    %a = arith.constant 1.0 : f32\n    %z = arith.constant 0.0 : f32\n")
    run(text)


def test_a_hex_or_negative_loc_line_is_a_pto_error_or_read_as_a_number():
    text = scalar_kernel('    %a = arith.addi %c0, %c1 : index loc("x.py":0x10:0)\n')
    (op,) = [o for o in parse(text).kernel().body if getattr(o, "opcode", "") == "arith.addi"]
    assert op.loc.line == 16
    with pytest.raises(PtoError, match="loc\\(...\\) line -3 is negative") as info:
        parse(scalar_kernel('    %a = arith.addi %c0, %c1 : index loc("x.py":-3:0)\n'))
    assert info.value.loc.line == 5


def test_errors_are_ptoc_errors():
    assert issubclass(SimLimitError, PtocError)


# ---- inputs made from a kernel (`ptoc sim`, `ptoc trace`) -------------------------------------

def view_shape_kernel(rows: str) -> str:
    text = k_loop_sum(3)
    text = text.replace("%c16 = arith.constant 16 : index",
                        f"%c16 = arith.constant 16 : index\n    %crows = arith.constant {rows} : index",
                        1)
    return text.replace("pto.make_tensor_view %arg0, shape = [%c16,",
                        "pto.make_tensor_view %arg0, shape = [%crows,", 1)


def test_a_negative_view_dimension_is_a_ptoc_error_in_ptoc_sim(tmp_path, capsys):
    from ptoc.cli import main

    path = tmp_path / "neg.pto"
    path.write_text(view_shape_kernel("-16"))
    assert main(["sim", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == ("ptoc: error: the tensor view of %arg0 in @k_loop_sum has shape [-16, 16]; "
                   "dimensions must be positive (fix: fix the make_tensor_view shape operands)\n")


def test_inputs_too_large_to_make_are_refused_with_the_numbers(tmp_path, capsys):
    from ptoc.cli import main

    path = tmp_path / "huge.pto"
    path.write_text(view_shape_kernel("4000000000000"))
    assert main(["sim", str(path)]) == 2
    err = capsys.readouterr().err
    assert "making random inputs for @k_loop_sum would need about 465.7 TiB of memory" in err
    assert "%arg0 [4000000000000, 16]" in err and err.count("\n") == 1


def test_an_unforeseen_memory_error_is_one_line_exit_2(capsys, monkeypatch):
    import ptoc.tools.explain_cmd as explain_cmd
    from ptoc.cli import main

    def exhausted(entry):
        raise MemoryError

    monkeypatch.setattr(explain_cmd, "render", exhausted)
    assert main(["explain", "PH001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptoc: error: out of memory (fix:") and err.count("\n") == 1
