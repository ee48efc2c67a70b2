"""``ptoc sim FILE.pto``: run PTO assembly on the simulated AI Core and report per-pipe time."""

from __future__ import annotations

import io
import os

from ptoc.errors import PtocError
from ptoc.files import write_bytes


class SimCommandError(PtocError):
    """Bad ``ptoc sim`` arguments (input files, NAME=VALUE pairs)."""


EXAMPLES = ("dbuf", "dbc", "dbc-shared-id", "dbc-barrier")


def _source(args) -> str:
    """The PTO text: the file, or a built-in hand-written kernel (``--example``)."""
    from ptoc.sim import examples

    if args.example:
        args.file = f"<example {args.example}>"
        return {"dbuf": lambda: examples.dbuf_matmul(256, 512, 256, 64, m=128, n=256),
                "dbc": lambda: examples.two_acc_matmul(),
                "dbc-shared-id": lambda: examples.two_acc_matmul(ids=1),
                "dbc-barrier": lambda: examples.two_acc_matmul(sync="barrier")}[args.example]()
    if not args.file:
        raise SimCommandError("no PTO file given", hint="ptoc sim FILE.pto, or --example "
                              + "|".join(EXAMPLES))
    try:
        with open(args.file, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise SimCommandError(f"cannot read {args.file}: {exc.strerror}",
                              hint="check the path of the .pto file") from None


def _pairs(items, what):
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SimCommandError(f"--{what} {item!r} is not NAME=VALUE",
                                  hint=f"write --{what} arg0=...")
        out[name.removeprefix("%")] = value
    return out


def run(args) -> int:
    import numpy as np

    from ptoc.pto import parse, verify
    from ptoc.sim import simulate, simulate_group
    from ptoc.sim.group import group_kernels, is_group_module
    text = _source(args)
    if args.emit:
        print(text, end="")
        return 0
    module = parse(text, filename=args.file)
    target = args.target or module.target_arch or "a2a3"
    verify(module, target)  # unknown ops get "did you mean", bad operands their line
    group = args.kernel is None and is_group_module(module)
    kernels = list(group_kernels(module)) if group else \
        [module.kernel(args.kernel) if args.kernel else module.kernel()]
    kernel = kernels[0]
    scalars = {k: int(v) if v.lstrip("-").isdigit() else float(v)
               for k, v in _pairs(args.scalar, "scalar").items()}
    tensors = _tensors(kernels, args, scalars)
    if group:
        result = simulate_group(module, tensors, target=target, profile=args.profile,
                                mode=args.mode)
        names = ", ".join("@" + k.name for k in group_kernels(module))
        print(f"{args.file}: core group {names} on {result.target} ({result.profile}, "
              f"{result.mode})")
    else:
        result = simulate(module, tensors, target=target, profile=args.profile, mode=args.mode,
                          kernel=kernel.name)
        print(f"{args.file}: kernel @{kernel.name} on {result.target} ({result.profile}, "
              f"{result.mode})")
    print(result.summary())
    if args.trace:
        result.write_trace(args.trace)
        print(f"trace written to {args.trace} (open in https://ui.perfetto.dev)")
    if args.csv:
        result.write_csv(args.csv)
        print(f"per-pipe summary written to {args.csv}")
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        for name, arr in result.outputs.items():
            if arr.dtype.name == "bfloat16":       # .npy cannot hold bf16; fp32 is exact
                arr = arr.astype(np.float32)
            buffer = io.BytesIO()
            np.save(buffer, arr)
            write_bytes(os.path.join(args.output_dir, f"{name}.npy"), buffer.getvalue())
        print(f"GM tensors saved to {args.output_dir}/ (bf16 tensors as exact float32)")
    return 1 if result.races else 0  # a data race is a failed check (see ptoc --help)


def _tensors(kernels, args, scalars):
    """--input files where given, seeded random data (shapes from the kernels) elsewhere."""
    import numpy as np

    from ptoc.sim.inputs import random_inputs

    kernel = kernels[0]
    files = _pairs(args.input, "input")
    unknown = set(files) - {p.name for p in kernel.params}
    if unknown:
        raise SimCommandError(f"--input names unknown parameter(s) {sorted(unknown)}",
                              hint="parameters are " + ", ".join(p.name for p in kernel.params))
    tensors = random_inputs(kernels, seed=args.seed, scalars=scalars, skip=set(files))
    params = {p.name: p for p in kernel.params}
    for name, path in files.items():
        try:
            arr = np.load(path)
        except (OSError, ValueError) as exc:
            raise SimCommandError(f"cannot load --input {name}={path}: {exc}",
                                  hint="give a .npy file written by numpy.save") from None
        want = getattr(params[name].type, "dtype", None)
        if want is not None and want.pto_name == "bf16":
            # .npy has no bf16: accept raw 2-byte data or floats rounded to nearest even
            arr = arr.view(want.numpy) if arr.dtype.itemsize == 2 and arr.dtype.kind == "V" \
                else arr.astype(want.numpy)
        tensors[name] = arr
    return tensors


def register(sub) -> None:
    p = sub.add_parser("sim", help="run a PTO kernel on the simulated AI Core",
                       description="Run PTO assembly on the simulated AI Core (Level 3 as written; "
                                   "Level 2, without set_flag/wait_flag, gets them from "
                                   "InsertSync first, as the compiler's own output does); "
                                   "print wall cycles, per-pipe busy time and data races. A "
                                   "module with one cube and one vector kernel runs as a core "
                                   "group (the AIC and its AIVs).")
    p.add_argument("file", nargs="?", help="PTO text file (.pto)")
    p.add_argument("--example", choices=EXAMPLES,
                   help="run a built-in hand-written Level-3 kernel instead of a file")
    p.add_argument("--emit", action="store_true", help="print the PTO text and exit")
    p.add_argument("--trace", help="write a Chrome/Perfetto trace JSON here")
    p.add_argument("--csv", help="write the per-pipe CSV summary here")
    from ptoc.backend import PROFILES, TARGETS

    p.add_argument("--target", choices=list(TARGETS),
                   help="target (default: the module's pto.target_arch, else a2a3)")
    p.add_argument("--profile", metavar="PROFILE",
                   help=f"timing profile: {', '.join(PROFILES)}, or a profile file written by "
                        "ptoc calibrate (default: the target's)")
    p.add_argument("--mode", default="reference", choices=("reference", "fast", "serial"))
    p.add_argument("--kernel", help="kernel name when the module has several")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="bind a GM parameter to a .npy file (default: seeded random data)")
    p.add_argument("--scalar", action="append", metavar="NAME=VALUE",
                   help="value of a scalar kernel parameter")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--output-dir", help="save every GM tensor after the run as NAME.npy")
    p.set_defaults(handler=run)
