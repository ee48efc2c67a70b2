"""``ptoc pypto FILE [ARGS...]`` / ``ptoc pypto -m MODULE [ARGS...]``: run PyPTO code unchanged.

The work is ``ptoc.compat``'s; this module only parses the command line.
"""

from __future__ import annotations

import argparse

from ptoc.errors import RuntimeConfigError


def register(sub) -> None:
    p = sub.add_parser(
        "pypto", help="run an unmodified PyPTO script on ptoc (import pypto -> ptoc)",
        description="Run a PyPTO script as __main__ (or a module, as python -m does) with "
                    "'import pypto...' resolving to ptoc, on the simulated AI Core. The "
                    "exit status is the script's.")
    p.add_argument("-m", dest="module", metavar="MODULE",
                   help="run a module of a package (e.g. examples.models.demo), as python -m")
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="FILE [ARGS...]",
                   help="the script and the arguments it receives in sys.argv[1:]")
    p.set_defaults(handler=run)


def run(args) -> int:
    from ptoc.compat import run_module, run_path

    if args.module:
        return run_module(args.module, args.argv)
    if not args.argv:
        raise RuntimeConfigError("ptoc pypto needs a script to run",
                                 hint="ptoc pypto FILE [ARGS...] or ptoc pypto -m MODULE")
    return run_path(args.argv[0], args.argv[1:])
