"""ptoc.runtime: compile programs, run them on the simulated AI Core, bind user tensors.

``compile_program`` is the harness entry (PyPTO's name and defaults: no pass dumps);
``ptoc.ir.compile`` is the user entry (dumps on by default).
"""

from ptoc.runtime.allocations import Allocation
from ptoc.runtime.compile import compile_ir, resolve_output_dir
from ptoc.runtime.compiled import CompiledProgram
from ptoc.runtime.config import RunConfig, SimulatorIgnoredWarning
from ptoc.runtime.dispatch import KernelRun
from ptoc.runtime.execute import RunResult
from ptoc.runtime.tensor_spec import TensorSpec
from ptoc.runtime.worker import ChipWorker, DeviceTensor, RegistrationHandle


def compile_program(program, work_dir, *, memory_planner=None,
                    enable_pypto_l0c_double_buffer=None, dump_passes: bool = False,
                    platform: str = "a2a3sim", verification_level=None, profiling: bool = False,
                    disabled_diagnostics=None) -> CompiledProgram:
    """Compile for the harness: forwards to ``ir.compile`` with PyPTO's harness defaults."""
    return compile_ir(program, work_dir, platform=platform, memory_planner=memory_planner,
                      enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
                      dump_passes=dump_passes, verification_level=verification_level,
                      profiling=profiling, disabled_diagnostics=disabled_diagnostics)


def run(program, *tensors, config: RunConfig | None = None) -> CompiledProgram:
    """Compile with the config's knobs and, when tensors are given, run (no golden check).

    As in PyPTO: artifacts go to ``config.save_kernels_dir`` when set, and
    ``config.codegen_only`` compiles without running.
    """
    config = config or RunConfig()
    compiled = compile_ir(program, config.save_kernels_dir, **config.compile_options())
    if tensors and not config.codegen_only:
        compiled(*tensors, config=config)
    return compiled
