"""The ``ptoc`` console script: a thin dispatcher onto ptoc.tools."""

from __future__ import annotations

import argparse
import sys

from ptoc.errors import InternalError, PtocError


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptoc", description="Tile compiler and simulated AI Core.",
        epilog="exit status: 0 success, 1 a check failed (golden mismatch, data races, reads of "
               "never-written GM), "
               "2 user error (bad file, option or input; one line on stderr, --debug for the "
               "traceback), 3 internal error (a ptoc bug), 130 interrupted (Ctrl-C)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from ptoc.tools import commands

    commands.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # a usage error, as for any tool: usage on stderr, exit 2
        parser.print_usage(sys.stderr)
        print("ptoc: error: a command is required (ptoc --help lists them)", file=sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except InternalError as err:  # a ptoc bug reported as an error (e.g. a pass that crashed)
        if args.debug:
            raise
        print(f"ptoc: internal error: {err} (rerun with --debug for the traceback)",
              file=sys.stderr)
        return 3
    except PtocError as err:
        if args.debug:
            raise
        print(f"ptoc: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        sys.stderr.close()
        return 0
    except MemoryError:        # where ptoc knows the numbers it reports them (SimLimitError)
        print("ptoc: error: out of memory (fix: run a smaller problem; `ptoc run` and the "
              "simulator refuse one they can estimate as too large up front)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # files are written atomically, so nothing is left half-written
        if args.debug:
            raise
        print("ptoc: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except Exception as err:  # a ptoc bug: still one line, the traceback only with --debug
        if args.debug:
            raise
        print(f"ptoc: internal error: {type(err).__name__}: {err} (a ptoc bug; rerun with "
              "--debug for the traceback and please report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
