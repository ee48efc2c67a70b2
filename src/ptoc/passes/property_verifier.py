"""PyPTO's property-verification API on ptoc's checks: ``IRPropertySet``,
``verify_properties(props, program, label)``, ``PropertyVerifierRegistry.verify`` (a list of
diagnostics) and ``verify_or_throw``.

ptoc's IR verifier (``ptoc.ir.verify``) checks SSA form, that every use follows its
definition and that types agree with the op registry, all in one walk: it stands for
PyPTO's ``SSAForm``, ``UseAfterDef`` and ``TypeChecked``. A property with a registered
checker (``ptoc.passes.properties``) uses it. A property ptoc has no check for is an error,
never a silent pass.
"""

from __future__ import annotations

from typing import Iterable

from ptoc.errors import PassError, PtocError
from ptoc.passes.diagnostics import Diagnostic, Severity
from ptoc.passes.properties import (
    IR_VERIFIER_PROPERTIES, IRProperty, check_property, format_properties, has_checker,
    to_property,
)


class IRPropertySet:
    """A mutable set of ``IRProperty`` with PyPTO's method names."""

    __hash__ = None   # mutable, as PyPTO's

    def __init__(self, props: Iterable[IRProperty | str] = ()):
        self._props = {to_property(p) for p in props}

    def insert(self, prop: IRProperty | str) -> None:
        self._props.add(to_property(prop))

    def remove(self, prop: IRProperty | str) -> None:
        self._props.discard(to_property(prop))

    def contains(self, prop: IRProperty | str) -> bool:
        return to_property(prop) in self._props

    def contains_all(self, other: "IRPropertySet") -> bool:
        return other._props <= self._props

    def union_with(self, other: "IRPropertySet") -> "IRPropertySet":
        return IRPropertySet(self._props | other._props)

    def intersection(self, other: "IRPropertySet") -> "IRPropertySet":
        return IRPropertySet(self._props & other._props)

    def difference(self, other: "IRPropertySet") -> "IRPropertySet":
        return IRPropertySet(self._props - other._props)

    def empty(self) -> bool:
        return not self._props

    def to_list(self) -> list[IRProperty]:
        return sorted(self._props, key=lambda p: p.value)

    def __contains__(self, prop) -> bool:
        return self.contains(prop)

    def __iter__(self):
        return iter(self.to_list())

    def __len__(self) -> int:
        return len(self._props)

    def __eq__(self, other) -> bool:
        return isinstance(other, IRPropertySet) and self._props == other._props

    def __str__(self) -> str:
        return "{" + format_properties(self._props) + "}"

    __repr__ = __str__


def _findings(props, program) -> list[Diagnostic]:
    from ptoc.ir.verifier import verify

    found: list[Diagnostic] = []
    wanted = set(props)
    unknown = [p for p in wanted - IR_VERIFIER_PROPERTIES if not has_checker(p)]
    if unknown:
        raise PassError(f"ptoc cannot verify the IR property {format_properties(unknown)}",
                        hint="ptoc checks " + format_properties(
                            IR_VERIFIER_PROPERTIES | {p for p in IRProperty if has_checker(p)}))
    if wanted & IR_VERIFIER_PROPERTIES:
        try:
            verify(program)
        except PtocError as err:
            found.append(Diagnostic("IRVerifier", Severity.Error, "verify", err.render(),
                                    err.loc))
    for prop in sorted(wanted - IR_VERIFIER_PROPERTIES, key=lambda p: p.value):
        if not check_property(prop, program):
            found.append(Diagnostic(prop.value, Severity.Error, "verify",
                                    f"the program does not have property {prop.value}"))
    return found


class PropertyVerifierRegistry:
    """PyPTO's entry points: ``verify`` returns the findings, ``verify_or_throw`` raises."""

    @staticmethod
    def verify(properties: IRPropertySet, program) -> list[Diagnostic]:
        return _findings(properties, program)

    @staticmethod
    def verify_or_throw(properties: IRPropertySet, program) -> None:
        verify_properties(properties, program, "verify")

    @staticmethod
    def generate_report(diagnostics: list[Diagnostic]) -> str:
        return "\n".join(d.format() for d in diagnostics)


def verify_properties(properties: IRPropertySet, program, pass_name: str) -> None:
    """Raise a PassError listing every property ``program`` does not have."""
    errors = [d for d in _findings(properties, program) if d.severity is Severity.Error]
    if errors:
        raise PassError(f"{pass_name}: IR property check failed: "
                        + "; ".join(d.message for d in errors),
                        hint="the program was built or rewritten into an invalid state")
