"""The process-wide backend choice (PyPTO's ``pypto.backend.set_backend_type`` & co).

PyPTO configures its code-generation backend once per process; passes then read it. In
ptoc the configured backend is the target a ``PassContext`` uses when none is named (the
default otherwise stays ``a2a3``).
"""

from __future__ import annotations

from ptoc.backend.targets import BackendType, TargetError

_configured: BackendType | None = None


def set_backend_type(backend_type: BackendType) -> None:
    """Make ``backend_type`` the target of every PassContext that does not name one."""
    global _configured
    if not isinstance(backend_type, BackendType):
        raise TargetError(f"set_backend_type needs a BackendType, got {backend_type!r}",
                          hint="pass BackendType.Ascend910B or BackendType.Ascend950")
    _configured = backend_type


def get_backend_type() -> BackendType:
    """The configured backend (Ascend910B, ptoc's default target, when none was set)."""
    return _configured or BackendType.Ascend910B


def is_backend_configured() -> bool:
    return _configured is not None


def reset_for_testing() -> None:
    """Forget the configured backend (PyPTO's test hook)."""
    global _configured
    _configured = None


def default_target_name() -> str:
    """The target name a PassContext takes when it is given none."""
    return get_backend_type().value
