"""Runs one ``PTOTestCase``: build tensors, compile, simulate, compare, check races."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ptoc.errors import PtocError
from ptoc.runtime import RunConfig, compile_program
from ptoc.testing.compare import max_error, mismatches


class GoldenMismatch(AssertionError):
    """The simulated result differs from the golden, or the run had data races."""


@dataclass
class TestOutcome:
    name: str
    compiled: object
    result: object
    outputs: dict
    expected: dict
    max_errors: dict


def _program(case):
    program = case.get_program()
    from ptoc.ir.nodes import Program

    if not isinstance(program, Program):
        raise PtocError(f"{case.get_name()}.get_program() returned {type(program).__name__}, "
                        "not a @pl.program", hint="return the @pl.program class (an ir.Program)")
    return program


def run_case(case, work_dir=None) -> TestOutcome:
    specs = case.define_tensors()
    rng = np.random.default_rng(case.seed)
    tensors = {spec.name: spec.create(rng) for spec in specs}
    expected = {name: value.copy() for name, value in tensors.items()}
    case.compute_expected(expected)
    work = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="ptoc_st_"))
    compiled = compile_program(_program(case), work, memory_planner=case.get_memory_planner(),
                               enable_pypto_l0c_double_buffer=case.get_enable_pypto_l0c_double_buffer(),
                               platform=case.get_platform())
    config = RunConfig(platform=case.get_platform(), rtol=case.get_rtol(), atol=case.get_atol(),
                       sim_mode=case.get_sim_mode())
    result = compiled.run(*[tensors[spec.name] for spec in specs], config=config)
    problems, errors = [], {}
    for spec in specs:
        if not spec.is_output:
            continue
        actual, golden = tensors[spec.name], expected[spec.name]
        errors[spec.name] = max_error(actual, golden)
        bad = mismatches(actual, golden, config.rtol, config.atol)
        if bad:
            problems.append(f"output '{spec.name}' differs from the golden "
                            f"(rtol={config.rtol}, atol={config.atol}):\n" + "\n".join(bad))
    for kernel, race in result.races:
        problems.append(f"data race in kernel '{kernel}': {race}")
    for read in result.unwritten:
        problems.append(f"read of never-written GM: {read}")
    if problems:
        raise GoldenMismatch(f"{case.get_name()} failed:\n" + "\n".join(problems))
    return TestOutcome(case.get_name(), compiled, result, tensors, expected, errors)
