"""``ptoc memmap DIR``: draw the memory map of every kernel of a compile output directory."""

from __future__ import annotations


def run(args) -> int:
    from ptoc.report.memmap_write import MemoryMapError, write_dir_memory_maps

    paths = write_dir_memory_maps(args.dir)
    if args.kernel:
        wanted = {f"memmap_{k}.html" for k in args.kernel}
        paths = [p for p in paths if p.name in wanted]
        if not paths:
            raise MemoryMapError(f"no kernel named {', '.join(args.kernel)} in {args.dir}/pto")
    for path in paths:
        print(path)
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "memmap", help="draw the per-kernel memory map (HTML) of a compile output directory",
        description="Read every Level-3 PTO kernel in DIR/pto/ and write a self-contained "
                    "HTML memory map per kernel to DIR/report/memmap_<kernel>.html: one panel "
                    "per memory space scaled to its capacity, address across, program order "
                    "down, conflicts (different buffers sharing bytes while both live) in "
                    "red, usage >= 95 % flagged. Prints the path of each page. Works under "
                    "both memory planners.")
    p.add_argument("dir", help="output directory of a compile (holds pto/<kernel>.pto)")
    p.add_argument("--kernel", action="append", help="only print this kernel's page "
                   "(repeatable; every page is still written)")
    p.set_defaults(handler=run)
