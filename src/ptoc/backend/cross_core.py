"""The core group (cluster): one cube core (AIC) and its vector cores (AIVs), and the
cross-core pipes between them — the numbers and routes the compiler and the simulator share.

Facts [S] (pypto docs/en/reference/pto-isa/00-cluster_architecture.md, 01-tpush_tpop.md;
hw-model.md §1.1, §3.1):

* a cluster is 1 AIC + 2 AIVs on a2a3 and on a5;
* a cross-core pipe is a ring of ``slot_num`` whole-tile slots per direction: at most 8 slots
  one way, 4 per direction both ways; PyPTO's automatic split uses 2 (``kDefaultAutoPipeSlotNum``);
* on a2a3 the ring lives in GM (the producer DMAs a tile into a GM slot, the consumer DMAs it
  back into its own buffer); on a5 it lives in the consumer's on-chip memory (UB for
  cube -> vector, L1 for vector -> cube): the producer writes it there directly and the
  consumer reads it in place (zero copy);
* the consumer reserves ``slot_num * slot_size`` bytes of its own memory for the ring on both
  targets (PyPTO's ``reserve_buffer``; the tutorial's "ring spends your vector budget").

Modelling choices [A]: a cube -> vector push from L1 (PyPTO's ExpandMixedKernel makes a
Mat -> Vec ``tile.move`` one; pto-isa's TPUSH itself takes Acc / Vec tiles) is modelled where
its bytes have a path: on a2a3 the GM slot is written by the L1 -> GM store (MTE3, pto-isa's
TSTORE of a Mat tile); on a5 the slot is in the vector core's UB and L1 -> UB has no path, so
it is refused. Which pipe each protocol step occupies (push: the pipe that drains the
source tile — FIXPIPE from Acc, MTE3 from UB or L1; pop: MTE2 where the ring is in GM, else the
first consumer's pipe at zero cost; free: the consumer's compute pipe, after the tile's last
reader), and the latency of a cross-core flag.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.pipes import Pipe
from ptoc.backend.targets import TargetError, get_target
from ptoc.dtypes import MemorySpace

_V, _M, _A, _D = MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Acc, MemorySpace.DDR

#: Direction bits of ``initialize_pipe``'s ``dir_mask`` [S] (01-tpush_tpop.md "Direction").
DIR_C2V = 1
DIR_V2C = 2

#: pto-isa split codes carried by tpush/tpop/tfree [S] (pypto pass 20 "Split mode vs pto-isa
#: split code"): 0 no split, 1 up-down, 2 left-right, 3/4 their odd forms.
SPLIT_NONE, SPLIT_UP_DOWN, SPLIT_LEFT_RIGHT, SPLIT_UP_DOWN_ODD, SPLIT_LEFT_RIGHT_ODD = range(5)
SPLIT_CODES = (SPLIT_NONE, SPLIT_UP_DOWN, SPLIT_LEFT_RIGHT, SPLIT_UP_DOWN_ODD,
               SPLIT_LEFT_RIGHT_ODD)


@dataclass(frozen=True)
class ClusterModel:
    """One target's core group and cross-core pipe facts.

    Fields:
        target: target name.
        aiv_per_aic: vector cores per cube core [S].
        ring_in_gm: True when pipe slots live in GM (a2a3), False when in the consumer's
            on-chip memory (a5) [S].
        max_slots_one_way / max_slots_both_ways: ring depth limits [S].
        default_slot_num: PyPTO's automatic ring depth [S].
        c2v_push_spaces: the cube memories a cube -> vector push reads from: Acc [S], and Mat
            where the ring is in GM [A] (module docstring).
        flag_latency_cycles: cycles between a cross-core flag being set and its waiter
            seeing it [A] (no published number; order of an FFTS round trip).
    """

    target: str
    aiv_per_aic: int
    ring_in_gm: bool
    max_slots_one_way: int = 8
    max_slots_both_ways: int = 4
    default_slot_num: int = 2
    flag_latency_cycles: float = 50.0
    c2v_push_spaces: frozenset = frozenset({_A})

    def can_push(self, src: MemorySpace, direction: int) -> bool:
        """Whether a push in ``direction`` may read a tile in ``src``."""
        return src in self.c2v_push_spaces if direction == DIR_C2V else src is _V

    def max_slots(self, dir_mask: int) -> int:
        """Deepest ring a pipe with ``dir_mask`` may use."""
        both = dir_mask == DIR_C2V | DIR_V2C
        return self.max_slots_both_ways if both else self.max_slots_one_way

    @staticmethod
    def consumer_space(direction: int) -> MemorySpace:
        """Where the consumer holds a popped tile: UB for cube -> vector, L1 for vector -> cube."""
        return _V if direction == DIR_C2V else _M

    @staticmethod
    def push_pipe(src: MemorySpace) -> Pipe:
        """The producer pipe that moves a pushed tile out of ``src`` [A]."""
        return Pipe.PIPE_FIX if src is _A else Pipe.PIPE_MTE3

    def pop_pipe(self, dst: MemorySpace) -> Pipe:
        """The consumer pipe of a pop into ``dst``: the GM -> local DMA where the ring is in GM,
        else (zero copy) the pipe that first reads the tile [A]."""
        if self.ring_in_gm:
            return Pipe.PIPE_MTE2
        return self.free_pipe(dst)

    @staticmethod
    def free_pipe(dst: MemorySpace) -> Pipe:
        """The consumer pipe that releases a slot once the tile's readers are done [A]."""
        return Pipe.PIPE_V if dst is _V else Pipe.PIPE_MTE1

    def push_route(self, src: MemorySpace, direction: int) -> tuple[MemorySpace, MemorySpace]:
        """(source, destination) memory of the producer's copy, for its cost."""
        return (src, _D) if self.ring_in_gm else (src, self.consumer_space(direction))

    def pop_route(self, direction: int) -> tuple[MemorySpace, MemorySpace] | None:
        """(source, destination) of the consumer's copy; None when the pop is zero-copy."""
        return (_D, self.consumer_space(direction)) if self.ring_in_gm else None


_MODELS = {
    "a2a3": ClusterModel("a2a3", aiv_per_aic=2, ring_in_gm=True,
                         c2v_push_spaces=frozenset({_A, _M})),
    "a5": ClusterModel("a5", aiv_per_aic=2, ring_in_gm=False),
}


def cluster_model(target) -> ClusterModel:
    """The cluster model of ``target`` (a name or a ``Target``)."""
    name = get_target(target).name
    try:
        return _MODELS[name]
    except KeyError:  # pragma: no cover - every target has a model
        raise TargetError(f"target {name} has no core-group model",
                          hint=f"use one of {', '.join(_MODELS)}") from None
