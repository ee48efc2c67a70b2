"""The dependence walk of InsertSync: find every unordered hazard and decide its sync.

How it works (our formulation of the PTOAS approach, hw-model.md §3.2):

* The walk visits a *virtual trace* of the kernel: straight-line code once, every loop body
  twice (iterations A and B, so hazards from one iteration into the next are seen), both arms
  of every ``scf.if`` from the same entry state.
* A vector clock per pipe (``State.clock[d][s]``) holds the newest stamp of pipe ``s`` known
  to happen before the next instruction on pipe ``d``: in-order queues, replayed flags and
  barriers make it grow, exactly like the simulator's race checker.
* Every access is remembered (``Rec``). When an instruction touches bytes an earlier,
  not-yet-ordered access of another pipe touched (RAW/WAR/WAW), the newest such producer per
  pipe gets a pair: set after the producer, wait before the consumer. Joining the producer's
  clock into the consumer's pipe then orders everything the producer already knew, which
  prunes transitive chains (MTE2 -> V -> MTE3 needs no MTE2 -> MTE3 pair).
* Region boundaries are kept simple and balanced: a hazard from before a loop or branch
  into it is waited *before* the region (hoisted, found lazily so that a newer producer
  inside the region, which is synced locally, makes it unnecessary), a hazard from inside
  it to later code is set *after* it, so every pair lives in one block. A hazard from a
  later item of a loop body to an earlier one in the next iteration is a loop-carried pair,
  chained through a pre-loop set and a post-loop wait (``SyncPlan.outermost``).
* After a loop that may run zero times the state keeps only what held before it; after a
  loop with a constant trip count of at least one, what its last walked iteration taught;
  after a branch, what both arms know. Flag knowledge is merged the same way (``known``).
* Same-pipe hazards need nothing on in-order pipes; ``PIPE_V`` gets a ``pipe_barrier``
  (``BARRIER_PIPES``) unless a flag round trip already proved the earlier op complete.

Anything the block model cannot express falls back to ``barrier(PIPE_ALL)`` before the
consumer, which is always correct. The walk is repeated until it decides nothing new; the
last walk also logs every dynamic set/wait instance for event-id allocation.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ptoc.backend.pipes import QUEUE_PIPES, Pipe
from ptoc.pto.model import LOOP_OPS, ForOp, IfOp, Instruction, SyncOp, WhileOp, walk
from ptoc.pto.sync_access import Access, AccessResolver, hazard_kind, ranges_overlap
from ptoc.pto.sync_plan import SyncPlan
from ptoc.pto.sync_slots import SlotInfo, find_slot_cascades

#: Pipes whose instructions may overlap inside the pipe, so a same-pipe hazard needs a
#: ``pipe_barrier``: the vector unit pipelines its repeats (pto-isa only defines the per-op
#: barrier for vector ops). DMA queues (MTE1/2/3, FIX) retire in order, and MADs only write
#: L0C, where the cube retires an accumulation chain in order, so those pipes need nothing.
BARRIER_PIPES = frozenset({Pipe.PIPE_V})

#: Virtual iterations per loop visit: two see every hazard from one iteration to the next.
UNROLL = 2

NP = len(QUEUE_PIPES)
IDX = {p: i for i, p in enumerate(QUEUE_PIPES)}
_BARRIER_IDX = frozenset(IDX[p] for p in BARRIER_PIPES)


@dataclass(slots=True)
class Rec:
    """One remembered access: pipe index, stamp, and where a set for it would go."""

    stamp: int
    pipe: int
    access: Access
    block: int
    set_gap: int
    snap: list[int]
    op: object
    key: tuple
    slot_arm: int | None = None   # the slot-cascade arm (block) the access was made in
    local: bool = False           # a copy only that arm sees: its next visit is F trips on


@dataclass(slots=True)
class Instance:
    """One dynamic use of a pair in the virtual trace (for event-id allocation)."""

    set_stamp: int
    set_snap: list[int]
    wait_stamp: int
    path: tuple
    bound: list[int] | None = None      # lower bound of set_snap over every path
    zero_trip: bool = False


@dataclass
class Fallback:
    """A hazard the block model could not express; a PIPE_ALL barrier orders it."""

    block: int
    gap: int
    producer: object
    consumer: object
    src: Pipe
    dst: Pipe
    reason: str


class State:
    """Vector clocks per pipe, and per pipe the newest of its own ops known to have
    completed (by a same-pipe barrier, or a flag round trip) before its next op."""

    def __init__(self, clock=None, last_bar=None):
        self.clock = clock or [[0] * NP for _ in range(NP)]
        self.last_bar = last_bar or [0] * NP

    def copy(self) -> "State":
        return State([list(c) for c in self.clock], list(self.last_bar))

    def learn(self, d: int, snap: list[int], now: int) -> None:
        """Pipe ``d`` passed a wait whose set had clock ``snap``. A set fires only once the
        work before it has *completed*, so every entry of ``snap`` is completion knowledge:
        ``snap[d]`` also tells which of ``d``'s own earlier ops are finished, which makes a
        same-pipe barrier for them unnecessary."""
        _join(self.clock[d], snap)
        if snap[d] > self.last_bar[d]:
            self.last_bar[d] = snap[d]
        self.clock[d][d] = now

    def meet(self, other: "State", now: int) -> None:
        """What holds on every path: element-wise minimum; a pipe always knows itself."""
        self.clock = [[min(a, b) for a, b in zip(x, y)] for x, y in zip(self.clock, other.clock)]
        for q in range(NP):
            self.clock[q][q] = now
        self.last_bar = [min(a, b) for a, b in zip(self.last_bar, other.last_bar)]


def _join(into: list[int], other: list[int]) -> None:
    for i, v in enumerate(other):
        if v > into[i]:
            into[i] = v


#: An item not visited yet (``Walker.block`` decides its step on the first visit).
_UNSEEN = object()
#: Step kinds (first entry of a step tuple).
_INST, _LOOP, _IF, _BARRIER = range(4)


class KernelSteps:
    """What every walk of one kernel finds the same, worked out once per kernel: per block,
    one slot per item, filled on the item's first visit with what a walk does there
    (``Walker.step``); the slot cascades; and ``ahead(g)`` (``Walker.collect``)."""

    def __init__(self, tree, resolver: AccessResolver):
        self.blocks = [[_UNSEEN] * len(block.items) for block in tree.blocks]
        self._tree, self._resolver = tree, resolver
        self._ahead: list[tuple[int, ...]] | None = None
        self.slots = find_slot_cascades(tree[tree.root].items, resolver.const)

    def ahead(self, g: int) -> tuple[int, ...]:
        """The indices of the pipes with an instruction in kernel items ``g..`` (nested ones
        too): the only pipes that can still wait for an access once the walk reaches item
        ``g`` (kernel items run once, in order)."""
        if self._ahead is None:     # only kernels with a collect point get here
            items = self._tree[self._tree.root].items
            self._ahead = [()] * (len(items) + 1)
            pipes: set = set()
            rows: tuple[int, ...] = ()
            for h in range(len(items) - 1, -1, -1):
                item = items[h]
                pipes |= self._resolver.pipes((item,) if isinstance(item, Instruction)
                                              else walk((item,)))
                if len(pipes) != len(rows):
                    rows = tuple(sorted(IDX[p] for p in pipes))
                self._ahead[h] = rows
        return self._ahead[g]


@dataclass
class Walker:
    """One walk over the virtual trace (see module doc)."""

    plan: SyncPlan
    resolver: AccessResolver
    log: bool = False
    discovered: bool = False
    stamp: int = 0
    ifs: int = 0
    known: dict = field(default_factory=dict)
    exact: dict = field(default_factory=dict)
    pending: set = field(default_factory=set)
    pre_sets: dict = field(default_factory=dict)
    instances: dict = field(default_factory=dict)
    broken: set = field(default_factory=set)
    fallbacks: list = field(default_factory=list)
    regions: list = field(default_factory=list)     # (block, gap) of the regions entered
    slots: SlotInfo = field(default_factory=SlotInfo)
    trip: dict = field(default_factory=dict)        # id(slot loop) -> virtual iteration
    deferring: set = field(default_factory=set)     # hazards deferred in this walk (defer)
    steps: KernelSteps | None = None                # shared by the walks of one kernel

    def run(self) -> None:
        if self.steps is None:
            self.steps = KernelSteps(self.plan.tree, self.resolver)
        self.slots = self.steps.slots
        self.block(self.plan.tree.root, State(), [], ())
        self.plan.deferred |= self.deferring

    def tick(self) -> int:
        self.stamp += 1
        return self.stamp

    # -- blocks ------------------------------------------------------------------------
    def block(self, b: int, st: State, live: list, path: tuple) -> None:
        items, steps = self.plan.tree[b].items, self.steps.blocks[b]
        occupied = self.plan.occupied[b]     # live: grows with this walk's discoveries
        top = b == self.plan.tree.root
        for g, step in enumerate(steps):
            if top and g % 32 == 31:
                self.collect(g, st, live)
            if g in occupied:
                self.gap(b, g, st, path)
            if step is _UNSEEN:
                step = steps[g] = self.step(items[g])
            if step is None:
                continue
            kind = step[0]
            if kind == _INST:
                self.instruction(b, g, step, st, live)
            elif kind == _LOOP:
                self.loop(b, g, step[1], st, live, path)
            elif kind == _IF:
                self.branch(b, g, step[1], st, live, path)
            else:
                self.fire_barrier(step[1], st)        # a user's barrier orders too
        if len(steps) in occupied:
            self.gap(b, len(steps), st, path)

    def step(self, item) -> tuple | None:
        """What visiting ``item`` does: for an instruction that touches buffers, ``(_INST,
        inst, pipe, pipe index, accesses, access keys)``; ``(_LOOP, op)``, ``(_IF, op)``,
        ``(_BARRIER, pipe)`` for a user's barrier; None for anything else (scalar ops)."""
        if isinstance(item, Instruction):
            fp = self.resolver.footprint(item)
            if fp is None or not fp.accesses:
                return None
            return (_INST, item, fp.pipe, IDX[fp.pipe], fp.accesses,
                    tuple((id(item), k) for k in range(len(fp.accesses))))
        if isinstance(item, LOOP_OPS):
            return (_LOOP, item)
        if isinstance(item, IfOp):
            return (_IF, item)
        if isinstance(item, SyncOp) and item.kind == "barrier" and item.pipe is not None \
                and (item.pipe is Pipe.PIPE_ALL or item.pipe in IDX):
            return (_BARRIER, item.pipe)
        return None

    def collect(self, g: int, st: State, live: list) -> None:
        """Forget accesses every pipe is already ordered after (only between top-level
        items: inside a region the list is shared with the other arm or the loop summary).
        Clocks only grow from here on, so a forgotten access could never need sync again.
        Before kernel item ``g``, an access of pipe ``p`` is settled when its stamp is at
        most the clock entry for ``p`` of every pipe with an instruction still ahead
        (``KernelSteps.ahead``: no other pipe waits again) and, on a barrier pipe, at most
        ``p``'s last barrier."""
        rows = [st.clock[q] for q in self.steps.ahead(g)]
        if not rows:
            return
        last_bar = st.last_bar
        limit = [min(column) for column in zip(*rows)]
        for p in _BARRIER_IDX:
            limit[p] = min(limit[p], last_bar[p])
        live[:] = [r for r in live if r.stamp > limit[r.pipe]]

    def gap(self, b: int, g: int, st: State, path: tuple) -> None:
        for _, kind, entry, pipe in self.plan.gap_ops[(b, g)]:
            if kind == "wait":
                self.fire_wait(entry, IDX[pipe], st, path)
            elif kind == "set":
                self.fire_set(entry, IDX[pipe], st)
            elif kind == "post_wait":
                self.fire_wait(entry, IDX[pipe], st, path, post=True)
            elif kind == "pre_set":
                self.fire_set(entry, IDX[pipe], st, pre=True)
            else:
                self.fire_barrier(entry, st)

    # -- replayed sync -----------------------------------------------------------------
    # Three tracks per pair. ``known[pid]`` is what the most recent set of the pair is sure
    # to have ordered, as (stamp, clock snapshot): a lower bound over every path that can
    # reach this point (merged at branch and loop exits), used for the waits' clock joins
    # and for comparing a pair with other pairs. ``exact[pid]`` is the most recent set on
    # the walked path, used to check that a pair's consecutive uses (set, wait, set, ...)
    # alternate. ``pending`` holds the pairs whose set is not yet waited on along the
    # walked path, to catch a set twice or a wait without a set.
    def fire_set(self, pid: int, s: int, st: State, pre: bool = False) -> None:
        """The set of pair ``pid`` on pipe index ``s`` (its source)."""
        self.stamp = stamp = self.stamp + 1
        st.clock[s][s] = stamp
        event = (stamp, list(st.clock[s]))
        if pid in self.pending:
            self.broken.add(pid)            # set twice before a wait: cannot be a bit flag
        self.pending.add(pid)
        self.known[pid] = self.exact[pid] = event
        if pre:
            self.pre_sets[pid] = event

    def fire_wait(self, pid: int, d: int, st: State, path: tuple, post: bool = False) -> None:
        """The wait of pair ``pid`` on pipe index ``d`` (its destination)."""
        self.stamp = stamp = self.stamp + 1
        if pid not in self.pending:
            self.broken.add(pid)
            st.clock[d][d] = stamp
            return
        self.pending.discard(pid)
        bound = self.known[pid]
        st.learn(d, bound[1], stamp)
        if self.log:
            out = self.instances.setdefault(pid, [])
            event = self.exact[pid]
            out.append(Instance(event[0], event[1], stamp, path, bound=bound[1]))
            pre = self.pre_sets.get(pid) if post else None
            if pre is not None:
                # the world where the pair's loop body never ran: pre-loop set straight to
                # the post-loop wait (compared with other pairs, not with its own instances)
                out.append(Instance(pre[0], pre[1], stamp, (), bound=pre[1], zero_trip=True))

    def fire_barrier(self, pipe: Pipe, st: State) -> None:
        stamp = self.tick()
        if pipe is Pipe.PIPE_ALL:
            st.clock = [[stamp] * NP for _ in range(NP)]
            st.last_bar = [stamp] * NP      # every earlier access is now ordered before all
            return
        q = IDX[pipe]
        st.clock[q][q] = stamp
        st.last_bar[q] = stamp

    # -- instructions ------------------------------------------------------------------
    def instruction(self, b, g, step: tuple, st: State, live: list) -> None:
        _, inst, pipe, d, accesses, keys = step
        self.order(b, g, pipe, d, accesses, inst, st, live)
        self.stamp = stamp = self.stamp + 1
        clock = st.clock[d]
        clock[d] = stamp
        snap = list(clock)
        set_gap = g + 1
        live.extend([Rec(stamp, d, acc, b, set_gap, snap, inst, key)
                     for acc, key in zip(accesses, keys)])

    def order(self, b, g, pipe: Pipe, d: int, accesses, consumer, st: State,
              live: list) -> None:
        """Make every earlier conflicting access happen before ``accesses`` on ``pipe``
        (``d`` is its index)."""
        if d in _BARRIER_IDX:
            last = st.last_bar[d]
            if any(r.pipe == d and r.stamp > last and any(r.access.conflicts(a)
                                                          for a in accesses)
                   for r in live):
                if self.plan.add_barrier(b, g, pipe):
                    self.discovered = True
                self.fire_barrier(pipe, st)
        clock = st.clock[d]
        # the accesses not yet ordered before pipe d; clocks only grow while this runs
        # (pairs join, barriers raise), so the loop below never needs any other
        unordered = [r for r in live if clock[r.pipe] < r.stamp and r.pipe != d]
        while unordered:
            best, hit, newest = None, None, 0
            for r in unordered:
                if r.pipe == d or clock[r.pipe] >= r.stamp or r.stamp <= newest:
                    continue
                if r.slot_arm is not None and r.local != (r.slot_arm == b):
                    continue  # inside its arm only the arm-local copy counts, elsewhere never
                x = r.access
                for a in accesses:
                    # Access.conflicts, spelled out: this test runs for every live access
                    # at every instruction of the virtual trace
                    if (x.write or a.write) and x.buffer == a.buffer and x.lo < a.hi \
                            and a.lo < x.hi and ranges_overlap(x, a):
                        best, hit, newest = r, a, r.stamp
                        break
            if best is None:
                return
            self.pair(b, g, pipe, best, hit, consumer, st, live)
            clock = st.clock[d]

    def pair(self, b, g, pipe: Pipe, r: Rec, hit: Access, consumer, st: State, live) -> None:
        src = QUEUE_PIPES[r.pipe]
        d = IDX[pipe]
        tree = self.plan.tree
        reason, hoisted = None, r.block != b
        if hoisted:
            # the producer is outside the region being walked: wait before the region (in
            # the producer's block), so that the pair stays balanced
            outer = [gap for blk, gap in self.regions if blk == r.block]
            if outer:
                b, g = r.block, outer[-1]
                if self.defer(r, consumer, b, g):
                    st.learn(d, r.snap, self.tick())
                    return
            else:
                reason = "the producer is in a block that does not enclose the consumer"
        if reason is None and r.set_gap > g and tree[b].kind != "for" and not r.local:
            reason = "a backward dependence outside a loop body"
        if reason is None:
            pair = self.plan.add_pair(src, pipe, b, r.set_gap, g, producer=r.op,
                                      consumer=consumer, hazard=hazard_kind(r.access, hit))
            if pair is not None or (hoisted and self.plan.active(b, r.set_gap, g, src, pipe)):
                # new pair, or a hoisted one decided earlier in this walk (e.g. in the other
                # arm): its wait sits before the region, so what it gives holds here
                self.discovered = True
                st.learn(d, r.snap, self.tick())
                return
            reason = "an existing pair did not order the hazard"
        self.fallbacks.append(Fallback(b, g, r.op, consumer, src, pipe, reason))
        if self.plan.add_barrier(b, g, Pipe.PIPE_ALL):
            self.discovered = True
        self.fire_barrier(Pipe.PIPE_ALL, st)

    def defer(self, r: Rec, consumer, b: int, g: int) -> bool:
        """Whether to leave a hazard from before a loop into its body unsynchronised for one
        walk. The loop's carried pairs are discovered in its second virtual iteration, after
        the first one met the hazard; the next walk replays their pre-loop sets, and when
        one of them fires after the producer (same source pipe, later in its queue) and is
        waited before the consumer, the hazard is ordered and needs no wait before the loop
        (which would hold back the whole first trip). A hazard still unordered in the next
        walk gets its pair then; walks repeat until one discovers nothing, so the result is
        checked as always. Like a new pair, a deferral counts as a discovery."""
        if not isinstance(self.plan.tree[b].items[g], LOOP_OPS):
            return False
        key = (r.key, id(consumer), b, g)
        if key in self.plan.deferred:
            return False
        self.deferring.add(key)
        self.discovered = True
        return True

    # -- regions -----------------------------------------------------------------------
    def summarize(self, recs: list[Rec], b: int, g: int, st: State) -> list[Rec]:
        """Accesses made inside a region, as seen after it: newest per access, set after it."""
        newest: dict[tuple, Rec] = {}
        for r in recs:
            if r.key not in newest or r.stamp > newest[r.key].stamp:
                newest[r.key] = r
        return [Rec(r.stamp, r.pipe, r.access, b, g + 1, list(st.clock[r.pipe]), r.op, r.key,
                    r.slot_arm) for r in newest.values()]

    def loop(self, b, g, op: ForOp | WhileOp, st: State, live: list, path) -> None:
        (body,) = self.plan.tree.children[id(op)]
        trips = self.trip_count(op)
        if trips == 0:
            return
        entry, mark, known = st.copy(), len(live), dict(self.known)
        period = self.slots.loops.get(id(op))
        unroll = UNROLL if period is None else 2 * period   # every arm visited twice
        ends = []
        self.regions.append((b, g))
        for j in range(unroll if trips is None else min(trips, unroll)):
            self.trip[id(op)] = j
            self.block(body, st, live, path)
            ends.append((st.copy(), dict(self.known)))
        self.trip.pop(id(op), None)
        self.regions.pop()
        inner = live[mark:]
        now = self.tick()
        if period is not None:
            # the real last trip may have run any arm: keep what holds after each of them
            for other, other_known in ends[:-1]:
                st.meet(other, now)
                self.known = _meet_known(self.known, other_known)
        if trips is None:
            # the loop may run zero times: keep only what also holds without the body
            st.meet(entry, now)
            self.known = _meet_known(self.known, known)
        else:
            # at least one trip: the state after the walked iterations is the state after
            # the last one (iteration B stands for every iteration after the first)
            for q in range(NP):
                st.clock[q][q] = now
        live[mark:] = self.summarize(inner, b, g, st)

    def trip_count(self, op: ForOp | WhileOp) -> int | None:
        """Constant trip count of ``op``, or None when a bound is not a constant (a while
        loop's trips are decided at run time: None, zero included)."""
        if isinstance(op, WhileOp):
            return None
        lo, hi, step = (self.resolver.const(v) for v in (op.lower, op.upper, op.step))
        if lo is None or hi is None or step is None or step <= 0:
            return None
        return max(0, -(-(hi - lo) // step))

    def branch(self, b, g, op: IfOp, st: State, live: list, path) -> None:
        then_b, else_b = self.plan.tree.children[id(op)]
        self.ifs += 1
        tag = self.ifs
        test = self.slots.ifs.get(id(op))
        if test is not None and test.loop in self.trip:
            self.slot_branch(b, g, op, test, st, live, path + ((tag, 2),))
            return
        entry, mark = st.copy(), len(live)
        known, pending = dict(self.known), set(self.pending)
        self.regions.append((b, g))
        self.block(then_b, st, live, path + ((tag, 0),))
        then_recs = live[mark:]
        del live[mark:]
        then_known, then_pending = self.known, self.pending
        self.known, self.pending = known, pending
        other = entry.copy()
        self.block(else_b, other, live, path + ((tag, 1),))
        self.regions.pop()
        else_recs = live[mark:]
        st.meet(other, self.tick())
        self.known = _meet_known(then_known, self.known)
        self.pending = then_pending | self.pending
        live[mark:] = self.summarize(then_recs + else_recs, b, g, st)


    def slot_branch(self, b, g, op: IfOp, test, st: State, live: list, path) -> None:
        """A slot-cascade ``if``: this virtual trip runs the arm of its residue only. What the
        arm touched is summarised after the ``if`` for everything else, and kept as an
        arm-local copy for the arm's next visit (hazards at distance F become pairs carried
        inside the arm instead of pairs that order every trip after the previous one)."""
        then_b, else_b = self.plan.tree.children[id(op)]
        taken = then_b if self.trip[test.loop] % test.period == test.residue else else_b
        mark = len(live)
        self.regions.append((b, g))
        self.block(taken, st, live, path)
        self.regions.pop()
        recs = live[mark:]
        nested = any(self.slots.ifs.get(id(item)) is not None
                     for item in self.plan.tree[taken].items if isinstance(item, IfOp))
        arm = None if nested else taken   # an else holding the next test is not an arm
        local = [r for r in recs if r.local]
        if arm is not None:
            local += [replace(r, slot_arm=arm, local=True) for r in recs
                      if not r.local and r.block == arm]
        shared = [r if r.slot_arm is not None or arm is None else replace(r, slot_arm=arm)
                  for r in recs if not r.local]
        live[mark:] = self.summarize(shared, b, g, st) + local


def _meet_known(a: dict, b: dict) -> dict:
    """Per pair, what both paths guarantee: the earlier stamp and the smaller clock."""
    out = dict(a)
    for pid, (stamp, snap) in b.items():
        if pid in out:
            other = out[pid]
            out[pid] = (min(stamp, other[0]), [min(x, y) for x, y in zip(snap, other[1])])
        else:
            out[pid] = (stamp, snap)
    return out
