"""``ptoc explain CODE``: what a diagnostic code means, why it fires and what to do.

The text comes from the diagnostics registry (``ptoc.passes.CODES``), where every pass
registers its codes with an explanation, so a code that can be reported can be explained.
Unknown codes get the closest registered ones; ``--list`` prints every code with its title.
"""

from __future__ import annotations

import difflib

from ptoc.errors import PtocError


class UnknownCodeError(PtocError):
    """``ptoc explain`` was given a code no pass registers."""


def _codes():
    import ptoc.passes  # noqa: F401  (importing the passes registers their codes)
    from ptoc.passes.diagnostics import CODES

    return CODES


def close_matches(code: str, n: int = 3) -> list[str]:
    codes = _codes()
    upper = code.upper()
    by_prefix = [c for c in sorted(codes) if c.startswith(upper) or upper in c]
    fuzzy = difflib.get_close_matches(upper, sorted(codes), n=n, cutoff=0.5)
    return list(dict.fromkeys(by_prefix + fuzzy))[:n] or sorted(codes)[:n]


def run(args) -> int:
    codes = _codes()
    if args.list or not args.code:
        for code in sorted(codes):
            entry = codes[code]
            print(f"{code:<11} {entry.severity.name:<8} {entry.title}")
        return 0
    if args.code not in codes and args.code.upper() not in codes:
        raise UnknownCodeError(f"unknown diagnostic code {args.code!r}",
                               hint="did you mean " + " or ".join(close_matches(args.code))
                                    + "? (ptoc explain --list shows all)")
    print(render(codes.get(args.code) or codes[args.code.upper()]), end="")
    return 0


def render(entry) -> str:
    """The entry as a short page: title, who reports it, the explanation, how to silence it."""
    import textwrap

    body = textwrap.fill(entry.explanation, width=88)
    return (f"{entry.code}: {entry.title}\n"
            f"severity {entry.severity.name}, reported by {entry.rule}\n\n{body}\n\n"
            f"To silence it: disabled_diagnostics=[\"{entry.code}\"] in ir.compile or "
            f"PassContext.\n")


def register(sub) -> None:
    from ptoc.tools.commands import doc_paragraph

    p = sub.add_parser("explain", help="explain a diagnostic code (PH-MR-001, ...)",
                       description=doc_paragraph(__doc__))
    p.add_argument("code", nargs="?", help="the code, e.g. PH-MR-001 (case-insensitive)")
    p.add_argument("--list", action="store_true", help="list every code with its title")
    p.set_defaults(handler=run)
