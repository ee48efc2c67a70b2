"""The static sync plan of one kernel: its blocks, and the flag pairs and barriers placed
between their items.

Why a plan separate from the analysis: the analysis (``sync_walk``) walks a virtual trace
of the kernel several times and must see, at every point, the synchronisation already
decided; the event-id allocator colours the pairs; the emitter writes them into the
structured program. All three share this one description.

Placement model. Each block (kernel body, loop body, branch arm) has items ``0..n-1``
(its ops without the trailing ``scf.yield``) and gaps ``0..n`` (gap ``g`` sits just before
item ``g``). Inside one gap the sync ops are written in a fixed order, and the analysis
replays them in the same order:

0. early waits (of rendezvous pairs, which must hold back the sets of group 1);
1. sets of pairs whose producer is item ``g-1`` (or the region ending at ``g-1``);
2. post-loop waits of loop-carried pairs of the region at item ``g-1``;
3. pre-loop sets of loop-carried pairs of the region at item ``g``;
4. waits of pairs whose consumer is item ``g`` (or the region starting at ``g``);
5. late sets (of rendezvous pairs, which must follow the waits of group 4);
6. barriers (``PIPE_V`` same-pipe barriers, ``PIPE_ALL`` fallbacks).

Sets come first so a set fires as early as its producer allows; waits come last so a
consumer pipe blocks as late as possible.

A *rendezvous* pair answers a pair ``u`` (src -> dst) whose consecutive uses could set the
bit twice (the source pipe may reach the next set before the destination pipe reached the
wait): it goes dst -> src, set right after ``u``'s wait (group 5 of ``u``'s wait gap) and
waited right before ``u``'s set (group 0 of ``u``'s set gap), so each set of ``u`` happens
after the previous wait of ``u``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.pipes import Pipe
from ptoc.pto.model import LOOP_OPS, ForOp, IfOp, Instruction, Kernel, YieldOp, walk


#: The groups of sync ops in a gap, in the order they are written and replayed (module
#: doc): the kind of op, and the ``SyncPlan`` table holding the group.
GAP_GROUPS = (("wait", "early_waits_at"), ("set", "sets_at"), ("post_wait", "post_waits_at"),
              ("pre_set", "pre_sets_at"), ("wait", "waits_at"), ("set", "late_sets_at"),
              ("barrier", "barriers_at"))
EARLY_WAIT, SET, POST_WAIT, PRE_SET, WAIT, LATE_SET, BARRIER = range(len(GAP_GROUPS))
SET_KINDS = ("set", "pre_set")


@dataclass
class Block:
    """One straight-line op list: the kernel body, a loop body or a branch arm."""

    ident: int
    kind: str                          # "kernel" | "for" | "then" | "else"
    items: tuple
    terminator: YieldOp | None
    parent: tuple[int, int] | None     # (parent block, item index of the region)


class BlockTree:
    """Numbers every block of a kernel; ``children[id(region op)]`` lists its blocks."""

    def __init__(self, kernel: Kernel):
        self.blocks: list[Block] = []
        self.children: dict[int, tuple[int, ...]] = {}
        self.root = self._add("kernel", kernel.body, None)

    def _add(self, kind: str, body, parent) -> int:
        items, term = tuple(body), None
        if items and isinstance(items[-1], YieldOp):
            items, term = items[:-1], items[-1]
        ident = len(self.blocks)
        self.blocks.append(Block(ident, kind, items, term, parent))
        for g, op in enumerate(items):
            if isinstance(op, LOOP_OPS):   # a while's condition region is scalar only
                self.children[id(op)] = (self._add("for", op.body, (ident, g)),)
            elif isinstance(op, IfOp):
                self.children[id(op)] = (self._add("then", op.then_body, (ident, g)),
                                         self._add("else", op.else_body, (ident, g)))
        return ident

    def __getitem__(self, ident: int) -> Block:
        return self.blocks[ident]


@dataclass(slots=True)
class Pair:
    """A set_flag/wait_flag pair ``src -> dst`` inside one block.

    ``set_gap``/``wait_gap`` are gaps of ``block``. A loop-carried pair (``carried``) has its
    wait before its set in the loop body, plus a pre-loop set and a post-loop wait around the
    top-level region holding the loop (``SyncPlan.outermost``) so that the token count
    balances for any trip count, zero included.
    ``producer``/``consumer``/``hazard`` say why the pair exists (for notes).
    """

    ident: int
    src: Pipe
    dst: Pipe
    block: int
    set_gap: int
    wait_gap: int
    carried: bool
    producer: object
    consumer: object
    hazard: str
    event: int | None = None
    rendezvous: bool = False            # set late / waited early (see module doc)
    answered_by: int | None = None      # the rendezvous pair added for this pair


@dataclass
class SyncPlan:
    """Every pair and barrier decided for one kernel, indexed by the gap they sit in."""

    tree: BlockTree
    pairs: dict[int, Pair] = field(default_factory=dict)
    early_waits_at: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    sets_at: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    post_waits_at: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    pre_sets_at: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    waits_at: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    late_sets_at: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    barriers_at: dict[tuple[int, int], list[Pipe]] = field(default_factory=dict)
    keys: dict = field(default_factory=dict)     # (block, set gap, wait gap, src, dst) -> id
    next_id: int = 0
    resolver: object = None                      # footprints, for placing pre/post-loop sync
    deferred: set = field(default_factory=set)   # hazards into loops deferred once (Walker.defer)
    #: per block, every gap any table above has held an entry for: the walk and the emitter
    #: visit every gap of the kernel, and most hold no sync at all (one live set per block,
    #: so a walk sees the gaps its own discoveries occupy)
    occupied: list = field(default_factory=list)
    #: (block, gap) -> the sync ops of the gap in gap order, as ``(group, kind, pair id or
    #: barrier pipe, the pipe it runs on)`` (``GAP_GROUPS``); kept up to date with the tables
    #: above, so that the walks and the emitter read one list per gap
    gap_ops: dict[tuple[int, int], list] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.occupied:
            self.occupied = [set() for _ in self.tree.blocks]

    def add_pair(self, src: Pipe, dst: Pipe, block: int, set_gap: int, wait_gap: int, *,
                 producer, consumer, hazard: str, rendezvous: bool = False) -> Pair | None:
        """Register a pair; None when the same pair already exists (nothing new)."""
        key = (block, set_gap, wait_gap, src, dst, rendezvous)
        if key in self.keys:
            return None
        # a rendezvous sets in group 5 and waits in group 0: carried even within one gap
        carried = (set_gap, 5 if rendezvous else 1) > (wait_gap, 0 if rendezvous else 4)
        self.next_id += 1
        pair = Pair(self.next_id, src, dst, block, set_gap, wait_gap, carried, producer,
                    consumer, hazard, rendezvous=rendezvous)
        self.pairs[pair.ident] = pair
        self.keys[key] = pair.ident
        sets, waits = (LATE_SET, EARLY_WAIT) if rendezvous else (SET, WAIT)
        self._place(sets, (block, set_gap), pair.ident)
        self._place(waits, (block, wait_gap), pair.ident)
        if carried:
            parent, g = self.outermost(block)
            self._place(PRE_SET, (parent, self.pre_set_gap(parent, g, pair)), pair.ident)
            self._place(POST_WAIT, (parent, self.post_wait_gap(parent, g, pair)), pair.ident)
        return pair

    def _place(self, group: int, key: tuple[int, int], entry) -> None:
        kind, table = GAP_GROUPS[group]
        getattr(self, table).setdefault(key, []).append(entry)
        self.occupied[key[0]].add(key[1])
        if kind == "barrier":
            pipe = entry
        else:
            pair = self.pairs[entry]
            pipe = pair.src if kind in SET_KINDS else pair.dst
        ops = self.gap_ops.setdefault(key, [])
        at = len(ops)
        while at and ops[at - 1][0] > group:   # last of its group: the table's order
            at -= 1
        ops.insert(at, (group, kind, entry, pipe))

    def post_wait_gap(self, parent: int, g: int, pair: Pair) -> int:
        """Where the post-loop wait of a carried pair goes: just before the first later item
        of ``parent`` that runs on the pair's destination pipe and touches what the producer
        touched, else at the end of ``parent``. Right after the region, the destination pipe
        would wait for the last producer of *every* carried pair at once: a straight-line
        tile after a double-buffered loop would wait for both L0C drains although its
        accumulator needs only the one that freed its buffer (the loop/tail seam)."""
        if self.resolver is None or pair.producer is None:
            return g + 1
        made = self.resolver.footprint(pair.producer) if isinstance(pair.producer, Instruction) \
            else None
        if made is None:
            return g + 1
        items = self.tree[parent].items
        for h in range(g + 1, len(items)):
            for inst in _instructions(items[h]):
                fp = self.resolver.footprint(inst)
                if fp is not None and fp.pipe is pair.dst and any(
                        a.conflicts(b) for a in fp.accesses for b in made.accesses):
                    return h
        return len(items)

    def pre_set_gap(self, parent: int, g: int, pair: Pair) -> int:
        """Where the pre-loop set of a carried pair goes: before the source-pipe instructions
        that come after the last earlier item of ``parent`` touching what the consumer
        touches on the source pipe (or after the last earlier region: sets never move across
        a loop or branch), else just before the region. Right before the region, the set
        would queue behind *all* earlier work of the source pipe: a double-buffered loop
        after a straight-line tile would not start its first MAD (other buffer) until the
        tile's drain (this buffer) is done (the remainder/loop seam). It moves only past
        source-pipe instructions, so a move always makes it fire earlier. What the earlier
        set no longer orders for the first trip is found by the walk, which adds its own
        pair for it or finds it ordered by another carried pair's set (``Walker.defer``)."""
        if self.resolver is None or not isinstance(pair.consumer, Instruction):
            return g
        used = self.resolver.footprint(pair.consumer)
        if used is None:
            return g
        items, gap = self.tree[parent].items, g
        for h in range(g - 1, -1, -1):
            if not isinstance(items[h], Instruction):
                break
            fp = self.resolver.footprint(items[h])
            if fp is None or fp.pipe is not pair.src:
                continue
            if any(a.conflicts(b) for a in fp.accesses for b in used.accesses):
                break
            gap = h
        return gap

    def outermost(self, block: int) -> tuple[int, int]:
        """(kernel block, item) of the top-level region that contains ``block``.

        A loop-carried pair's pre-loop set and post-loop wait go around that region, not
        around the innermost loop: around the inner loop, the post-loop wait of one visit and
        the pre-loop set of the next visit (next outer iteration) would be unordered, and the
        source pipe could set the bit twice. Hoisted out, the sets and waits of all visits
        form one alternating chain (the last set of one visit is consumed by the first wait
        of the next), which is balanced for any trip counts and branch outcomes."""
        parent = self.tree[block].parent
        while self.tree[parent[0]].parent is not None:
            parent = self.tree[parent[0]].parent
        return parent

    def active(self, block: int, set_gap: int, wait_gap: int, src: Pipe, dst: Pipe) -> bool:
        """True when this (ordinary) pair exists and has not fallen back to a barrier."""
        return self.keys.get((block, set_gap, wait_gap, src, dst, False)) in self.pairs

    def add_rendezvous(self, ident: int) -> Pair | None:
        """Answer pair ``ident`` with a rendezvous pair (module doc); None when that is not
        possible (already answered, a rendezvous itself, or it would be loop-carried outside
        a loop body)."""
        u = self.pairs[ident]
        if u.rendezvous or u.answered_by is not None:
            return None
        carried = (u.wait_gap, 5) > (u.set_gap, 0)
        if carried and self.tree[u.block].kind != "for":
            return None
        r = self.add_pair(u.dst, u.src, u.block, u.wait_gap, u.set_gap, producer=u.consumer,
                          consumer=u.producer, hazard="order", rendezvous=True)
        if r is not None:
            u.answered_by = r.ident
        return r

    def remove_pair(self, ident: int) -> Pair:
        pair = self.pairs.pop(ident)
        for table in (self.sets_at, self.waits_at, self.pre_sets_at, self.post_waits_at,
                      self.early_waits_at, self.late_sets_at):
            for key, ids in table.items():
                if ident in ids:
                    ids.remove(ident)
                    self.gap_ops[key] = [op for op in self.gap_ops[key]
                                         if op[0] == BARRIER or op[2] != ident]
        return pair

    def add_barrier(self, block: int, gap: int, pipe: Pipe) -> bool:
        """Register a barrier; False when an equal or stronger one is already there."""
        pipes = self.barriers_at.get((block, gap), ())
        if pipe in pipes or Pipe.PIPE_ALL in pipes:
            return False
        if pipe is Pipe.PIPE_ALL:
            self.barriers_at[(block, gap)] = []
            self.gap_ops[(block, gap)] = [op for op in self.gap_ops.get((block, gap), ())
                                          if op[0] != BARRIER]
        self._place(BARRIER, (block, gap), pipe)
        return True

    def count(self) -> dict[str, int]:
        """Static op counts: pairs (loop-carried ones among them), set_flag, wait_flag, pipe
        barriers, PIPE_ALL barriers, and the most event ids any one pipe pair uses."""
        carried = sum(p.carried for p in self.pairs.values())
        bars = [p for pipes in self.barriers_at.values() for p in pipes]
        ids: dict[tuple, set] = {}
        for p in self.pairs.values():
            ids.setdefault((p.src, p.dst), set()).add(p.event)
        return {"pairs": len(self.pairs), "carried": carried,
                "max_ids_per_pipe_pair": max((len(v) for v in ids.values()), default=0),
                "set_flag": len(self.pairs) + carried, "wait_flag": len(self.pairs) + carried,
                "pipe_barrier": sum(p is not Pipe.PIPE_ALL for p in bars),
                "barrier_all": sum(p is Pipe.PIPE_ALL for p in bars)}


def _instructions(item) -> list[Instruction]:
    """The instructions of one block item (every one inside a region)."""
    if isinstance(item, Instruction):
        return [item]
    return [op for op in walk((item,)) if isinstance(op, Instruction)]
