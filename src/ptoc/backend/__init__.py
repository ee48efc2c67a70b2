"""Hardware targets and timing profiles: the one place ptoc keeps hardware numbers.

Public API:
    get_target(name) -> Target        ("a2a3", "a5"; platforms "a2a3sim", "a5sim"; BackendType)
    set_backend_type / get_backend_type / is_backend_configured / reset_for_testing (PyPTO's)
    get_profile(name=None, target=None) -> TimingProfile
    Pipe, QUEUE_PIPES, TRACE_LANE_ORDER, NUM_EVENT_IDS
"""

from ptoc.backend.config import (
    default_target_name, get_backend_type, is_backend_configured, reset_for_testing,
    set_backend_type,
)
from ptoc.backend.pipes import NUM_EVENT_IDS, QUEUE_PIPES, TRACE_LANE_ORDER, Pipe, PipeError
from ptoc.backend.profiles import (
    PROFILES, FlatDrain, LinearTransfer, ProfileError, RowCost, RowDrain, TimingProfile,
    VectorCost, get_profile,
)
from ptoc.backend.targets import (
    A2A3, A5, TARGETS, BackendType, MadShape, Target, TargetError, align_up, get_target,
)

__all__ = [
    "A2A3", "A5", "BackendType", "NUM_EVENT_IDS", "PROFILES", "QUEUE_PIPES", "TARGETS", "TRACE_LANE_ORDER",
    "FlatDrain", "LinearTransfer", "MadShape", "Pipe", "PipeError", "ProfileError", "RowCost",
    "RowDrain",
    "Target", "TargetError", "TimingProfile", "VectorCost", "align_up", "default_target_name",
    "get_backend_type", "get_profile", "get_target", "is_backend_configured", "reset_for_testing",
    "set_backend_type",
]
