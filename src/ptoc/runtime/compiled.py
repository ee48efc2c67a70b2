"""``CompiledProgram``: the post-pass IR, Level-3 PTO per kernel, placements, diagnostics,
and the ability to run on the simulated core.

Two call styles, as in PyPTO: pass every tensor (outputs included) and they are written in
place, or pass inputs only and the outputs are allocated and returned. As in PyPTO, a
CompiledProgram also stands for its output directory: ``os.path.join(compiled, "pto")``,
``Path(compiled)``, ``str(compiled)`` and ``compiled == path`` work.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ptoc.dtypes import Direction
from ptoc.errors import (DataRaceError, DataRaceWarning, RuntimeConfigError,
                         UnwrittenReadWarning, count, were_given)
from ptoc.ir.nodes import Program
from ptoc.ir.types import ScalarType, TensorType
from ptoc.messages import user_stacklevel
from ptoc.runtime.config import RunConfig
from ptoc.runtime.dims import DimBindings
from ptoc.runtime.tensors import check_tensor, returns_torch, to_numpy, to_torch, write_back
from ptoc.sim.global_memory import GlobalMemory, GMTensor


@dataclass(eq=False, repr=False)
class CompiledProgram:
    program: Program
    source_program: Program
    pto_text: dict[str, str]
    allocations: list
    diagnostics: list
    output_dir: Path
    target: str
    memory_planner: Any = None
    enable_pypto_l0c_double_buffer: bool = False
    profile: dict | None = None
    platform: str | None = None
    _modules: dict = field(default_factory=dict, repr=False)

    def __fspath__(self) -> str:
        return str(self.output_dir)

    def __str__(self) -> str:
        return str(self.output_dir)

    def __repr__(self) -> str:
        return f"CompiledProgram({self.output_dir})"

    def __eq__(self, other) -> bool:
        if isinstance(other, CompiledProgram):
            return self.output_dir == other.output_dir
        if isinstance(other, (str, os.PathLike)):
            return str(self.output_dir) == os.fspath(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.output_dir)

    def pto_module(self, kernel: str):
        """The parsed Level-3 PTO of one kernel (cached)."""
        if kernel not in self._modules:
            from ptoc.pto import parse

            self._modules[kernel] = parse(self.pto_text[kernel], filename=f"{kernel}.pto")
        return self._modules[kernel]

    def allocations_in(self, space) -> list:
        """Placements in one memory space (``pl.Mem.Acc`` ...), across kernels."""
        return [a for a in self.allocations if a.space == space]

    @property
    def param_names(self) -> list[str]:
        """The entry function's parameter names, in call order (PyPTO's)."""
        return [p.var.name for p in self.entry.params]

    @property
    def output_indices(self) -> list[int]:
        """Positions of the pure ``Out`` parameters: the ones an inputs-only call allocates."""
        return [i for i, p in enumerate(self.entry.params) if p.direction is Direction.Out]

    @cached_property
    def entry(self):
        from ptoc.runtime.execute import entry_function

        return entry_function(self.program)

    def config_for(self, config: RunConfig | None) -> RunConfig:
        """``config`` for running this program: a config that names no platform runs on the
        one the program was compiled for; naming another one is a contradiction."""
        import dataclasses

        from ptoc.backend import get_target

        config = config or RunConfig()
        if not config.names_platform:
            return dataclasses.replace(config, platform=get_target(self.target).platforms[0])
        if config.target != self.target:
            raise RuntimeConfigError(
                f"program was compiled for {self.target} but RunConfig.platform is "
                f"{config.platform!r}", hint="drop RunConfig.platform (a compiled program runs "
                "on its own platform) or compile for the platform you name")
        return config

    def run(self, *tensors, config: RunConfig | None = None):
        """Run on the simulator; returns a RunResult (outputs also written in place). Data
        races found are in ``RunResult.races`` and raise a ``DataRaceWarning``; reads of GM
        nothing wrote are in ``RunResult.unwritten`` and raise an ``UnwrittenReadWarning``."""
        result = self._run(tensors, config)
        if result.races:
            warnings.warn(races_message(result.races), DataRaceWarning,
                          stacklevel=user_stacklevel())
        _warn_unwritten(result)
        return result

    def _run(self, tensors, config: RunConfig | None):
        from ptoc.runtime.execute import RunResult, run_program

        from ptoc.runtime.limits import check_run, entry_tensor_bytes, out_of_memory_as_error

        config = self.config_for(config)
        entry = self.entry
        check_run(self, config.sim_limits)
        memory = GlobalMemory()
        with out_of_memory_as_error(f"running {entry.name}", entry_tensor_bytes(self)):
            originals, values, dims = self._bind(entry, tensors, memory)
            runs, chip, skipped, unwritten = run_program(self, entry, values, memory, config,
                                                         dims)
        outputs = {}
        for param, original, value in zip(entry.params, originals, values):
            if not isinstance(param.var.type, TensorType):
                continue
            if param.direction is not Direction.In:
                outputs[param.var.name] = value.array().copy()
                if original is not None:
                    write_back(original, outputs[param.var.name])
            elif original is not None:
                _write_back_if_written(param, original, value)
        if chip is not None:
            return self._chip_result(chip, outputs, config, values, skipped, unwritten)
        busy: dict = {}
        for run in runs:
            for pipe, cycles in run.sim.pipe_busy.items():
                busy[pipe] = busy.get(pipe, 0) + cycles
        races = [(run.kernel, race) for run in runs for race in run.sim.races]
        traces = [run.trace_path for run in runs if run.trace_path is not None]
        if config.trace and runs:  # the run's one-file trace bundle comes first
            from ptoc.report.trace_bundle import run_trace_path, write_run_trace

            traces.insert(0, write_run_trace(runs, run_trace_path(self.output_dir),
                                             compiled=self))
        return RunResult(outputs=outputs, cycles=sum(run.sim.wall_cycles for run in runs),
                         pipe_busy=busy, races=races, runs=runs,
                         trace_path=traces[0] if traces else None,
                         floor_cycles=self._floor(config, values, len(runs)), skipped=skipped,
                         unwritten=unwritten)

    def _chip_result(self, chip, outputs: dict, config: RunConfig, values: list,
                     skipped: list[str], unwritten: list):
        """The RunResult of a chip run (its trace is ``trace/chip.json``)."""
        from ptoc.backend import get_profile
        from ptoc.runtime.execute import RunResult

        trace = None
        if config.trace:
            trace = self.output_dir / "trace" / "chip.json"
            chip.write_trace(trace)
        launch = get_profile(config.profile, target=self.target).launch
        staged = sum(v.nbytes for v in {id(v): v for v in values
                                        if isinstance(v, GMTensor)}.values())
        races = list(chip.task_races) + [("tasks", race) for race in chip.races]
        return RunResult(outputs=outputs, cycles=chip.wall_cycles, pipe_busy=chip.pipe_busy,
                         races=races, runs=[], trace_path=trace,
                         floor_cycles=staged / launch.staging_bytes_per_cycle if launch else 0.0,
                         chip=chip, skipped=skipped, unwritten=unwritten)

    def _floor(self, config: RunConfig, values: list, launches: int) -> float:
        """Launch of every kernel call plus staging of the run's tensors, once."""
        if not launches:
            return 0.0
        from ptoc.backend import get_profile

        profile = get_profile(config.profile, target=self.target)
        staged = sum(v.nbytes for v in {id(v): v for v in values
                                        if isinstance(v, GMTensor)}.values())
        return profile.floor_cycles(staged_bytes=staged) + (launches - 1) * profile.floor_cycles()

    def __call__(self, *tensors, config: RunConfig | None = None):
        """Run; given inputs only, return the outputs (torch tensors when any argument is a
        torch or device tensor, as PyPTO returns torch; numpy arrays otherwise)."""
        config = self.config_for(config)
        result = self._run(tensors, config)
        if result.races:   # the caller sees only the outputs: never hand back racy numbers
            if config.on_race == "error":
                raise DataRaceError(races_message(result.races), hint="order the accesses "
                                    "each race names; compiled.run(...) returns the races, "
                                    "RunConfig(on_race='warn') the outputs anyway")
            warnings.warn(races_message(result.races), DataRaceWarning,
                          stacklevel=user_stacklevel())
        _warn_unwritten(result)
        inputs_only = len(tensors) < len(self.entry.params)
        if not inputs_only:
            return None
        values = list(result.outputs.values())
        if returns_torch(tensors):
            values = [to_torch(v) for v in values]
        return values[0] if len(values) == 1 else tuple(values)

    def _bind(self, entry, tensors, memory) -> tuple[list, list, dict]:
        """Match call arguments to entry parameters (all of them, or the inputs only) and
        stage each tensor into ``memory`` (a GM tensor named after its parameter); the
        sizes of the ``pl.dynamic`` dimensions come from the tensors passed."""
        params = entry.params
        outs = [p for p in params if p.direction is Direction.Out]
        if len(tensors) == len(params):
            given = list(tensors)
        elif len(tensors) == len(params) - len(outs):
            it = iter(tensors)
            given = [None if p.direction is Direction.Out else next(it) for p in params]
        else:
            names = ", ".join(p.var.name for p in params)
            raise RuntimeConfigError(
                f"{entry.name} takes {count(len(params), 'argument')} ({names}) or its "
                f"{count(len(params) - len(outs), 'input')}, but {were_given(len(tensors))}")
        dims = DimBindings()
        for param, value in zip(params, given):
            if value is not None and isinstance(param.var.type, TensorType):
                dims.bind_shape(tuple(param.var.type.shape),
                                tuple(to_numpy(value, param.var.name).shape),
                                f"argument '{param.var.name}'")
        originals, values, staged = [], [], []
        for param, value in zip(params, given):
            ty = param.var.type
            if isinstance(ty, ScalarType):
                if not isinstance(value, (int, float, np.integer, np.floating)):
                    raise RuntimeConfigError(f"argument '{param.var.name}' must be a number")
                originals.append(None)
                values.append(value)
                continue
            shape = dims.shape(tuple(ty.shape), f"argument '{param.var.name}'")
            if value is None:
                originals.append(None)
                values.append(memory.alloc(param.var.name, shape, ty.dtype))
                continue
            array = to_numpy(value, param.var.name)
            check_tensor(array, param.var.name, shape, ty.dtype)
            if param.direction is not Direction.In and not array.flags.writeable:
                raise RuntimeConfigError(f"output tensor '{param.var.name}' is read-only")
            originals.append(value)
            values.append(_staged(memory, param, array, staged))
            staged.append((param, array, values[-1]))
        return originals, values, dims.values


def _staged(memory, param, array: np.ndarray, staged: list):
    """The GM tensor of an entry argument: the one already staged when the caller passed
    the same array before (both parameters then share its bytes, as on a device), else a
    new allocation holding a copy. Arrays that overlap only in part are refused."""
    for other, other_array, tensor in staged:
        if not np.shares_memory(array, other_array):
            continue
        same = (array.__array_interface__["data"][0] == other_array.__array_interface__["data"][0]
                and array.shape == other_array.shape and array.strides == other_array.strides
                and array.dtype == other_array.dtype)
        if same:
            return tensor
        raise RuntimeConfigError(
            f"arguments '{other.var.name}' and '{param.var.name}' are overlapping parts of one "
            "array; ptoc can stage one array as two parameters only when both are the whole "
            "array", hint="pass the same array twice, or distinct arrays")
    return memory.alloc(param.var.name, array.shape, param.var.type.dtype, init=array)


def _write_back_if_written(param, original, value: GMTensor) -> None:
    """An ``In`` tensor the program wrote all the same (a ``@pl.jit`` entry's KV cache handed
    to a kernel's ``pl.Out`` slot, which PyPTO compiles): on a device the kernel writes the
    caller's own buffer, so the caller sees the write here too. An input left as it was is
    not copied back."""
    result = value.array()
    array = to_numpy(original, param.var.name)
    bits = np.dtype(f"u{array.dtype.itemsize}")
    if np.array_equal(result.view(bits), array.view(bits)):
        return
    if not array.flags.writeable:
        raise RuntimeConfigError(
            f"the program writes tensor '{param.var.name}' (a parameter declared In that a "
            "kernel writes), but the array passed for it is read-only",
            hint="pass a writable array, or declare it pl.InOut[...] / pl.Out[...]")
    write_back(original, result)


def _warn_unwritten(result) -> None:
    """A warning, not an error, whatever the call style: the simulated outputs are the ones
    the program computes from zero-filled GM (deterministic, unlike a race's); only a device
    computes something else there. The reads are in ``RunResult.unwritten``."""
    if result.unwritten:
        from ptoc.sim.unwritten import unwritten_message

        warnings.warn(unwritten_message(result.unwritten), UnwrittenReadWarning,
                      stacklevel=user_stacklevel())


def races_message(races: list) -> str:
    """One line per race (the first three) under a count: which kernel or ``tasks``, which
    accesses, and that the outputs depend on timing."""
    shown = "\n".join(f"  {where}: {race}" for where, race in races[:3])
    more = f"\n  ... and {len(races) - 3} more" if len(races) > 3 else ""
    return (f"the run has {count(len(races), 'data race')}: its outputs depend on timing "
            f"the simulator fixed one way, so they cannot be trusted\n{shown}{more}")
