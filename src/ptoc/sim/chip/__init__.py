"""The ``chip`` layer of the simulator: a task graph over many core groups sharing GM.

Each task runs one kernel (a ``ptoc.sim.core`` core) or one group kernel (a
``ptoc.sim.group`` core group) on regions of one global memory
(``ptoc.sim.global_memory``). The device runtime's semantics decide the order: dependencies
inferred from the regions tasks read and write plus the ones the program states, a ready
FIFO, a per-task dispatch cost, idle cores of the right kind. The cores' GM transfers share
an L2 in front of HBM (``ptoc.backend.chip``). Races between tasks are found on the task
graph; races within a task by the core checker.

Public API:
    ChipSimulator(target=, profile=, mode=, numerics=, clusters=)
        .submit(task)  (in program order; data is computed at once)
        .finish() -> ChipResult
    simulate_chip(tasks, ...) -> ChipResult
    ChipResult (wall_cycles, tasks, cores, races, task_races, memory, summary(),
        utilisation_csv(), write_trace(path)), TaskTiming, TaskRace
    examples.gemm_tasks / examples.split_k_tasks: the reference GEMM over a core grid and a
        split-K GEMM with atomic-add stores
"""

from ptoc.sim.chip.races import TaskRace
from ptoc.sim.chip.result import ChipResult, TaskTiming
from ptoc.sim.chip.run import CHIP_MODES, ChipConfigError, ChipSimulator, simulate_chip

__all__ = ["CHIP_MODES", "ChipConfigError", "ChipResult", "ChipSimulator", "TaskRace",
           "TaskTiming", "simulate_chip"]
