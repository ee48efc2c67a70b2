"""Mixed cube + vector kernels (PyPTO's passes 20-26): an InCore function that uses both the
cube and the vector units becomes an AIC function and an AIV function joined by cross-core
pipes, run as one core group (one AIC and its two AIVs).

Passes, in pipeline order: LowerAutoVectorSplit, ExpandMixedKernel, InjectGMPipeBuffer,
SplitVectorKernel, StampTfreeSplit, NormalizeReturnOrder, SkewCrossCorePipeline. Helpers:
``affinity`` (which core a statement belongs to).
"""
