"""Codegen: post-allocation IR of each InCore/AIC/AIV kernel -> Level-2 PTO text.

Level 2 is the MLIR ``pto`` dialect PyPTO emits: destination-passing tile ops on
``!pto.tile_buf`` buffers declared by ``pto.alloc_tile`` (with ``addr = <offset>`` under the
PYPTO planner, without under PTOAS), GM tensors as ``!pto.ptr`` arguments wrapped in
``make_tensor_view`` / ``partition_view``, ``scf.for`` / ``scf.if`` for control flow, and no
pipe synchronisation (``ptoc.pto.insert_sync`` adds it). Codegen never plans memory and never
inserts sync: it prints what the passes decided.

Public API:
    generate_kernels(program, *, target="a2a3", with_addresses=True, emit_loc=True,
                     loc_file=None) -> dict[str, str]      kernel name -> PTO text
    generate_module(function, *, ...) -> ptoc.pto.model.Module
    generate_modules(program, *, ...) -> dict[str, Module]
    CodegenOptions, CodegenError, SUPPORTED_OPS

How one kernel is built (modules in reading order):
    simplify.py    fold constants, inline one-trip loops, resolve decided ifs (as PyPTO does)
    names.py       SSA names (PyPTO's naming) and the hoisted constant pool
    tile_types.py  IR tile types -> ``!pto.tile_buf`` (layouts per memory space, Vec row padding)
    emitter.py     the kernel walk: signature, statements, loops, branches, bindings
    scalars.py     scalar expressions -> ``arith`` ops
    buffers.py     tensor views of GM parameters; tile allocations and buffer sharing
    tile_ops.py    one lowering per tile op
    errors.py      CodegenError

The output is built as a ``ptoc.pto.model.Module`` and printed with ``ptoc.pto.print_module``,
so it always parses back with ``ptoc.pto.parse``.

Fidelity to PyPTO. On PyPTO's own codegen input (the oracle dumps) the text is identical to
PyPTO's ``kernel.pto`` except for the values inside ``loc(...)`` (PyPTO's point into the
original program, ours into the IR we were given). Behaviours mirrored from those kernels:
one-trip loops and decided ``if``s are folded, index arithmetic is emitted at each use, dynamic
store offsets are clamped with ``arith.maxsi``, run-time ``if`` tile results are allocated at the
top of the kernel, printer-made duplicate names (``x_1``) become numbered values, constants are
hoisted (i64 first). Choices the oracle does not show, made here and documented where they
live: ``tile.move`` is ``pto.tmov``; ``matmul_acc(init_cond=c)`` is ``scf.if c {tmatmul} else
{tmatmul.acc}``; ``[N, 1]`` Vec tiles are ``col_major`` column vectors; ``tile.slice`` and
same-dtype Vec ``tile.assemble`` use window aliases at computed addresses (no ``pto.subview``);
without addresses, tiles of one MemRef are one ``alloc_tile``, and views (reshape,
transpose_view, reinterpret_view, set_validshape, slice and assemble windows) are PyPTO's
``pto.treshape`` / ``pto.subview``, which ``ptoc.pto.planner`` places.
"""

from __future__ import annotations

from ptoc.backend import get_target
from ptoc.dtypes import FunctionType
from ptoc.ir.nodes import AssignStmt, Call, EvalStmt, Function, Program
from ptoc.pto.model import Module
from ptoc.pto.printer import print_module

from ptoc.codegen.emitter import CodegenOptions, KernelEmitter
from ptoc.codegen.errors import CodegenError
from ptoc.codegen.join_buffers import coalesce_join_buffers
from ptoc.codegen.tile_ops import SUPPORTED_OPS


def kernel_functions(program: Program) -> tuple[Function, ...]:
    """The functions of ``program`` that become PTO kernels (InCore, AIC, AIV)."""
    return tuple(fn for fn in program.functions if fn.func_type.is_kernel)


def _options(target, with_addresses, emit_loc, loc_file) -> CodegenOptions:
    name = get_target(target).name
    return CodegenOptions(target=name, with_addresses=with_addresses, emit_loc=emit_loc,
                          loc_file=loc_file)


def generate_module(function: Function, *, target="a2a3", with_addresses: bool = True,
                    emit_loc: bool = True, loc_file: str | None = None) -> Module:
    """The PTO module (one kernel) for one kernel function of a post-allocation program."""
    if not function.func_type.is_kernel:
        raise CodegenError(
            f"function '{function.name}' is {function.func_type.value}, not a kernel",
            function.loc, hint="codegen takes InCore, AIC or AIV functions; orchestration "
            "functions run on the host")
    options = _options(target, with_addresses, emit_loc, loc_file)
    if not with_addresses:
        function = coalesce_join_buffers(function)
    kernel = KernelEmitter(function, options).build()
    return Module(kernels=(kernel,), attrs=(("pto.target_arch", options.target),))


def generate_modules(program: Program, *, target="a2a3", with_addresses: bool = True,
                     emit_loc: bool = True, loc_file: str | None = None) -> dict[str, Module]:
    """Kernel name -> PTO module, for every InCore/AIC/AIV function of ``program`` (for
    callers that go on to plan or sync the model without re-parsing text). The AIC and AIV
    kernels a Group function calls form one module, under the Group's name: they run
    together as one core group."""
    modules: dict[str, Module] = {}
    grouped: set[str] = set()
    for group, members in group_members(program).items():
        kernels = tuple(generate_module(program.get_function(m), target=target,
                                        with_addresses=with_addresses, emit_loc=emit_loc,
                                        loc_file=loc_file).kernels[0] for m in members)
        modules[group] = Module(kernels=kernels,
                                attrs=(("pto.target_arch", get_target(target).name),))
        grouped.update(members)
    for fn in kernel_functions(program):
        if fn.name not in grouped:
            modules[fn.name] = generate_module(fn, target=target, with_addresses=with_addresses,
                                               emit_loc=emit_loc, loc_file=loc_file)
    return modules


def group_members(program: Program) -> dict[str, tuple[str, ...]]:
    """Group function name -> the (AIC, AIV) kernel names it calls. A Group that calls only
    one kind of kernel (a cluster around a vector-only kernel) is no core group: its kernel
    is launched alone, like any other call."""
    out: dict[str, tuple[str, ...]] = {}
    for fn in program.functions:
        if fn.func_type is not FunctionType.Group:
            continue
        calls = [s.expr if isinstance(s, EvalStmt) else s.value for s in fn.body.stmts
                 if isinstance(s, (EvalStmt, AssignStmt))]
        names = [c.op for c in calls if isinstance(c, Call) and c.is_function]
        kinds = {program.get_function(n).func_type: n for n in names if program.get_function(n)}
        members = tuple(kinds[k] for k in (FunctionType.AIC, FunctionType.AIV) if k in kinds)
        if len(members) == 2:
            out[fn.name] = members
    return out


def generate_kernels(program: Program, *, target="a2a3", with_addresses: bool = True,
                     emit_loc: bool = True, loc_file: str | None = None) -> dict[str, str]:
    """Kernel name -> Level-2 PTO text, for every InCore/AIC/AIV function of ``program``.

    ``with_addresses=False`` is the PTOAS planner's form (no ``addr``); ``loc_file`` replaces
    the file name in ``loc(...)`` (PyPTO's kernels say ``"program.py"``).
    """
    modules = generate_modules(program, target=target, with_addresses=with_addresses,
                               emit_loc=emit_loc, loc_file=loc_file)
    return {name: print_module(module) for name, module in modules.items()}


__all__ = ["CodegenError", "CodegenOptions", "SUPPORTED_OPS", "generate_kernels",
           "generate_module", "generate_modules", "group_members", "kernel_functions"]
