"""The ``core`` layer of the simulator: what belongs to ONE AI Core (AIC or AIV).

Why a layer: a core group (``ptoc.sim.group``) and a chip run several cores side by side;
each core has its own scalar unit, its own on-chip buffers and its own pipe queues, while
the instruction record, the timing engine, the race checker, the data replay and the
trace are shared by every layer (``ptoc.sim.instr``, ``schedule``, ``races``, ``execute``,
``result``, ``trace``).

Modules: ``issue`` (the scalar unit: walks one kernel and emits its instruction stream),
``tileops`` and ``vector`` (how each tile op becomes an instruction with byte accesses and
a data effect), ``memory`` (the core's on-chip buffers as bytes), ``binding`` (kernel
parameters to GM arrays and scalars).
"""
