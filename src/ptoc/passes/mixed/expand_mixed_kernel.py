"""ExpandMixedKernel (PyPTO pass 21): a mixed InCore function becomes an AIC function, an AIV
function and a Group function that calls both.

* Non-mixed InCore functions only change type: pure cube -> ``AIC``, otherwise ``AIV``
  (their ``split`` attrs are dropped: there is nothing to split).
* A mixed function ``f`` (cube and vector work, ``affinity``) is copied twice: ``f_aic``
  keeps the cube and shared statements, ``f_aiv`` the vector and shared ones; loops and
  branches holding both are kept on both sides with their contents pruned, then repaired
  and cleaned (``prune``). Boundaries become cross-core transfers:

  ======================================  ==========================  ===========================
  boundary                                AIC                         AIV
  ======================================  ==========================  ===========================
  ``aiv_shard(acc)`` / move Acc -> Vec    ``tpush_to_aiv(acc)``       ``v = tpop_from_aic(...)``
  ``aic_gather(x)`` / move Vec -> Mat     ``m = tpop_from_aiv(...)``  ``tpush_to_aic(x)``
  ======================================  ==========================  ===========================

  (a move into Left/Right pops into Mat, then moves on the cube). Each popped tile is
  released with ``tfree_to_aic`` / ``tfree_to_aiv`` after its last use in its block. The
  pipe is set up at the top of both functions: the consumer reserves its ring
  (``system.reserve_buffer``, ``slot_num x slot_size`` bytes, base placed by
  AllocateMemoryAddr), the producer imports its base (``system.import_peer_buffer``), and
  both call ``system.{aic,aiv}_initialize_pipe`` with ``dir_mask`` (1 cube -> vector, 2 vector
  -> cube, 3 both), ``slot_size`` (the largest crossing tile) and ``slot_num`` (the scope's
  ``pl.cross_core_slot``, default 2).
* ``f`` itself becomes the ``Group``: it calls ``f_aic`` then ``f_aiv`` with its own
  parameters (both kernels take the same argument list) and returns the output parameters
  it writes (PyPTO's param-return), so callers keep calling ``f``.

A DDR tensor one side stores and the other side then loads (a GM-mediated dependence) is
refused with a fix: ptoc does not insert PyPTO's token handshake for it yet.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.backend.cross_core import DIR_C2V, DIR_V2C, cluster_model
from ptoc.dtypes import DataType, FunctionType, MemorySpace
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, ForStmt, Function, IfStmt, Program, ReturnStmt, SeqStmts, Stmt,
    Var, WhileStmt, YieldStmt,
)
from ptoc.ir.types import ScalarType, TileType, TupleType, num_bytes
from ptoc.ir.visitor import clone_with_fresh_vars
from ptoc.ops import make_call
from ptoc.passes.base import program_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.affinity import Affinity, call_affinity, crosses_cores, stmt_affinity
from ptoc.passes.mixed.prune import Repair, dce, tensor_parents, uses

Mem = MemorySpace
SPLIT_ATTRS = ("split", "split_aiv", "slot_num")


@program_pass(name="ExpandMixedKernel", required=("SSAForm", "MemoryInferred"),
              handles_while_loops=True)
def expand_mixed_kernel(program: Program, ctx) -> Program:
    """Split every mixed InCore function into AIC + AIV + Group (module docstring)."""
    model = cluster_model(ctx.get_backend())
    names = {fn.name for fn in program.functions}
    functions: list[Function] = []
    changed = False
    for fn in program.functions:
        if fn.func_type is not FunctionType.InCore:
            functions.append(fn)
            continue
        changed = True
        side = stmt_affinity(fn.body)
        if side is not Affinity.MIXED:
            attrs = {k: v for k, v in fn.attrs.items() if k not in SPLIT_ATTRS}
            kind = FunctionType.AIC if side is Affinity.CUBE else FunctionType.AIV
            functions.append(replace(fn, func_type=kind, attrs=attrs))
            continue
        for suffix in ("_aic", "_aiv"):
            if fn.name + suffix in names:
                raise PassError(f"ExpandMixedKernel: '{fn.name}' splits into '{fn.name}{suffix}',"
                                " which already exists", fn.loc, hint="rename one of them")
        functions.extend(_Expander(fn, model).run())
    return replace(program, functions=tuple(functions)) if changed else program


register_default_pass(expand_mixed_kernel)


class _Expander:
    """One mixed function: both sides' bodies, the transports and the pipe setup."""

    def __init__(self, fn: Function, model):
        self.fn = fn
        self.model = model
        self.aic_name, self.aiv_name = f"{fn.name}_aic", f"{fn.name}_aiv"
        self.slot_bytes = 0
        self.dirs = 0

    def run(self) -> list[Function]:
        self._check_gm_crossings()
        parents = tensor_parents(self.fn.body)
        bodies = {}
        for side in (Affinity.CUBE, Affinity.VECTOR):
            body = self.side(self.fn.body, side)
            body = Repair(self.fn.name, side.value, self.fn.params, parents).seq(body)
            if side is Affinity.CUBE:       # the AIC returns nothing; stores are its effect
                body = replace(body, stmts=tuple(s for s in body.stmts
                                                 if not isinstance(s, ReturnStmt)))
            body = dce(body, set())
            bodies[side] = self.add_frees(body, side)
        slot_num = self.fn.attrs.get("slot_num", self.model.default_slot_num)
        if slot_num > self.model.max_slots(self.dirs):
            raise PassError(f"'{self.fn.name}': pl.cross_core_slot(slot_num={slot_num}) exceeds "
                            f"the {self.model.max_slots(self.dirs)} slots a pipe with dir_mask="
                            f"{self.dirs} has", self.fn.loc,
                            hint=f"use slot_num <= {self.model.max_slots(self.dirs)}")
        attrs = {k: v for k, v in self.fn.attrs.items() if k not in ("slot_num",)}
        aic = replace(self.fn, name=self.aic_name, func_type=FunctionType.AIC, return_types=(),
                      body=self.setup(bodies[Affinity.CUBE], "aic", slot_num), attrs=dict(attrs))
        aiv_attrs = dict(attrs)
        if not attrs.get("split_aiv"):      # unsplit: SplitVectorKernel adds lane 1's replay
            aiv_attrs["dual_aiv_dispatch"] = True
        aiv = replace(self.fn, name=self.aiv_name, func_type=FunctionType.AIV,
                      body=self.setup(bodies[Affinity.VECTOR], "aiv", slot_num),
                      attrs=aiv_attrs)
        group = self.group(aiv)
        # each function gets its own variables (the group keeps the original ones)
        return [clone_with_fresh_vars(aic), clone_with_fresh_vars(aiv), group]

    # ---- one side ----------------------------------------------------------------------
    def side(self, seq: SeqStmts, side: Affinity) -> SeqStmts:
        out: list[Stmt] = []
        for s in seq.stmts:
            out.extend(self.stmt(s, side))
        return replace(seq, stmts=tuple(out))

    def stmt(self, s: Stmt, side: Affinity) -> list[Stmt]:
        if isinstance(s, (ForStmt, WhileStmt)):   # both cores run the loop's trips
            return [replace(s, body=self.side(s.body, side))]
        if isinstance(s, IfStmt):
            else_body = self.side(s.else_body, side) if s.else_body is not None else None
            return [replace(s, then_body=self.side(s.then_body, side), else_body=else_body)]
        if isinstance(s, (YieldStmt, ReturnStmt)):
            return [s]
        value = s.value if isinstance(s, AssignStmt) else getattr(s, "expr", None)
        aff = call_affinity(value) if isinstance(value, Call) else Affinity.SHARED
        if aff is Affinity.MIXED:
            return self.boundary(s, side)
        return [s] if aff in (side, Affinity.SHARED) else []

    def boundary(self, s: Stmt, side: Affinity) -> list[Stmt]:
        if not isinstance(s, AssignStmt) or not isinstance(s.value, Call):
            raise PassError(f"ExpandMixedKernel in '{self.fn.name}': a statement reads cube "
                            "and vector tiles at once", getattr(s, "loc", None),
                            hint="move the tile across with pl.move(x, target_memory=...) first")
        call = s.value
        src = call.args[0]
        if call.op == "tile.move" and not crosses_cores(src.type.memory_space,
                                                        call.kwarg("target_memory")):
            raise PassError(f"ExpandMixedKernel in '{self.fn.name}': pl.{call.op} for "
                            f"'{s.var.name}' mixes cube and vector tiles", s.loc,
                            hint="move the tile across with pl.move first")
        split = call.kwarg("split", 0) if call.op != "tile.move" else 0
        to_vector = call.op == "tile.aiv_shard" or (
            call.op == "tile.move" and call.kwarg("target_memory") is Mem.Vec)
        if to_vector:
            self._crossing(DIR_C2V, src.type)
            if side is Affinity.CUBE:
                return [EvalStmt(make_call("tile.tpush_to_aiv", (src,), {"split": split},
                                           loc=call.loc), s.loc)]
            return [AssignStmt(s.var, self._pop("tile.tpop_from_aic", s.var.type, split, call),
                               s.loc)]
        full = call.type if call.op == "tile.aic_gather" else \
            TileType(tuple(src.type.shape), src.type.dtype, Mem.Mat)
        self._crossing(DIR_V2C, full)
        if side is Affinity.VECTOR:
            return [EvalStmt(make_call("tile.tpush_to_aic", (src,), {"split": split},
                                       loc=call.loc), s.loc)]
        pop = self._pop("tile.tpop_from_aiv", full, split, call)
        if call.op == "tile.aic_gather" or call.kwarg("target_memory") is Mem.Mat:
            return [AssignStmt(s.var, pop, s.loc)]
        landed = Var(f"{s.var.name}_mat", pop.type, s.var.loc)
        move = make_call("tile.move", (landed,), dict(call.kwargs), loc=call.loc)
        return [AssignStmt(landed, pop, s.loc), AssignStmt(s.var, move, s.loc)]

    def _pop(self, op: str, ty: TileType, split: int, call: Call) -> Call:
        return make_call(op, (list(ty.shape), ty.dtype), {"split": split}, loc=call.loc)

    def _crossing(self, direction: int, ty: TileType) -> None:
        nbytes = num_bytes(ty)
        if nbytes is None:
            raise PassError(f"ExpandMixedKernel in '{self.fn.name}': a tile crossing between "
                            "the cores has a dynamic shape", self.fn.loc,
                            hint="cross-core tiles need static shapes (the ring is sized by them)")
        self.dirs |= direction
        self.slot_bytes = max(self.slot_bytes, nbytes)

    # ---- frees ---------------------------------------------------------------------------
    def add_frees(self, seq: SeqStmts, side: Affinity) -> SeqStmts:
        pop_op = "tile.tpop_from_aiv" if side is Affinity.CUBE else "tile.tpop_from_aic"
        free_op = "system.tfree_to_aiv" if side is Affinity.CUBE else "system.tfree_to_aic"
        stmts = list(seq.stmts)
        for i, s in enumerate(stmts):
            if isinstance(s, (ForStmt, WhileStmt)):
                stmts[i] = replace(s, body=self.add_frees(s.body, side))
            elif isinstance(s, IfStmt):
                else_body = self.add_frees(s.else_body, side) if s.else_body is not None else None
                stmts[i] = replace(s, then_body=self.add_frees(s.then_body, side),
                                   else_body=else_body)
        out = list(stmts)
        for s in stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == pop_op:
                at = out.index(s)
                for j in range(len(out) - 1, at, -1):
                    if s.var in uses(out[j]):
                        if isinstance(out[j], (YieldStmt, ReturnStmt)):
                            raise PassError(
                                f"ExpandMixedKernel in '{self.fn.name}': the popped tile "
                                f"'{s.var.name}' leaves its block", s.loc,
                                hint="use a popped tile inside the loop body that pops it")
                        at = j
                        break
                free = make_call(free_op, (s.var,), {"split": s.value.kwarg("split", 0)},
                                 loc=s.loc)
                out.insert(at + 1, EvalStmt(free, s.loc))
        return replace(seq, stmts=tuple(out))

    # ---- pipe setup ------------------------------------------------------------------------
    def setup(self, body: SeqStmts, core: str, slot_num: int) -> SeqStmts:
        if not self.dirs:
            return body
        loc = self.fn.loc
        ring = f"{self.fn.name}_{{}}_slot_buffer"
        consumes = DIR_V2C if core == "aic" else DIR_C2V
        produces = DIR_C2V if core == "aic" else DIR_V2C
        bufs = {DIR_C2V: 0, DIR_V2C: 0}
        stmts: list[Stmt] = []
        if self.dirs & consumes:
            space = self.model.consumer_space(consumes)
            var = Var(f"{'c2v' if consumes == DIR_C2V else 'v2c'}_ring", _I32, loc)
            name = ring.format("c2v" if consumes == DIR_C2V else "v2c")
            stmts.append(AssignStmt(var, make_call("system.reserve_buffer", (), {
                "name": name, "size": slot_num * self.slot_bytes, "location": space},
                loc=loc), loc))
            bufs[consumes] = var
        if self.dirs & produces:
            peer = self.aiv_name if core == "aic" else self.aic_name
            var = Var(f"{'c2v' if produces == DIR_C2V else 'v2c'}_peer", _I32, loc)
            name = ring.format("c2v" if produces == DIR_C2V else "v2c")
            stmts.append(AssignStmt(var, make_call("system.import_peer_buffer", (), {
                "name": name, "peer_func": peer}, loc=loc), loc))
            bufs[produces] = var
        init = make_call(f"system.{core}_initialize_pipe", (), {
            "dir_mask": self.dirs, "slot_size": self.slot_bytes, "slot_num": slot_num,
            "c2v_consumer_buf": bufs[DIR_C2V], "v2c_consumer_buf": bufs[DIR_V2C]}, loc=loc)
        stmts.append(EvalStmt(init, loc))
        lead = [s for s in body.stmts[:1] if _is_subblock_idx(s)]
        return replace(body, stmts=tuple(lead) + tuple(stmts) + body.stmts[len(lead):])

    # ---- the group ---------------------------------------------------------------------------
    def group(self, aiv: Function) -> Function:
        fn = self.fn
        args = tuple(p.var for p in fn.params)
        loc = fn.loc
        aic_call = Call(self.aic_name, args, (), TupleType(()), {}, is_function=True, loc=loc)
        aiv_type = fn.return_types[0] if len(fn.return_types) == 1 else TupleType(fn.return_types)
        aiv_call = Call(self.aiv_name, args, (), aiv_type, {}, is_function=True, loc=loc)
        ret = aiv.body.stmts[-1] if aiv.body.stmts else None
        values = ret.values if isinstance(ret, ReturnStmt) else ()
        parents = tensor_parents(aiv.body)
        roots = []
        for v in values:                  # the parameter each returned tensor writes
            while isinstance(v, Var) and not any(v is a for a in args) and v in parents:
                v = parents[v]
            roots.append(v)
        stmts: list[Stmt] = [EvalStmt(aic_call, loc)]
        if all(any(v is a for a in args) for v in roots):
            stmts += [EvalStmt(aiv_call, loc), ReturnStmt(tuple(roots), loc)]
        elif len(values) == 1:
            result = Var(f"{fn.name}_result", aiv_type, loc)
            stmts += [AssignStmt(result, aiv_call, loc), ReturnStmt((result,), loc)]
        else:
            raise PassError(f"ExpandMixedKernel: '{fn.name}' returns several values that are "
                            "not its output parameters", loc,
                            hint="write outputs into pl.Out parameters")
        return replace(fn, func_type=FunctionType.Group, body=SeqStmts(tuple(stmts), loc),
                       attrs={})

    # ---- GM crossings --------------------------------------------------------------------------
    def _check_gm_crossings(self) -> None:
        """A tensor stored on one core and loaded on the other needs a handshake ptoc does not
        insert yet: refuse it (the simulator would report the race)."""
        parents = tensor_parents(self.fn.body)
        stores: dict[Var, tuple[Affinity, Stmt]] = {}
        params = {p.var for p in self.fn.params}

        def root(v):
            while isinstance(v, Var) and v not in params and v in parents:
                v = parents[v]
            return v

        def walk(seq: SeqStmts) -> None:
            for s in seq.stmts:
                if isinstance(s, (ForStmt, WhileStmt)):
                    walk(s.body)
                elif isinstance(s, IfStmt):
                    walk(s.then_body)
                    if s.else_body is not None:
                        walk(s.else_body)
                elif isinstance(s, AssignStmt) and isinstance(s.value, Call):
                    call = s.value
                    if call.op == "tile.store":
                        stores.setdefault(root(call.args[2]), (call_affinity(call), s))
                    elif call.op == "tile.load":
                        found = stores.get(root(call.args[0]))
                        side = call_affinity(call)
                        if found is not None and found[0] is not side:
                            raise PassError(
                                f"ExpandMixedKernel in '{self.fn.name}': '{s.var.name}' loads "
                                f"a tensor the other core stored (at line "
                                f"{getattr(found[1].loc, 'line', '?')}); the two cores would "
                                "race on it in GM", s.loc,
                                hint="pass the tile across with pl.move(x, target_memory=...) "
                                     "instead of through GM")
        walk(self.fn.body)


_I32 = ScalarType(DataType.INT32)


def _is_subblock_idx(s: Stmt) -> bool:
    return isinstance(s, AssignStmt) and isinstance(s.value, Call) \
        and s.value.op == "tile.get_subblock_idx"
