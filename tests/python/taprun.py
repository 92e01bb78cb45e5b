"""The TAP runner of the Python tests (tests/python/test_*.py): each test is
a function; one that raises fails, with its traceback as TAP comments."""

import sys
import traceback


def torch_on_gpu():
    """PyTorch, where it is installed and sees a GPU; else the TAP plan of
    a skipped test file, and exit."""
    try:
        import torch
    except ImportError:
        print("1..0 # SKIP python3 has no torch")
        sys.exit(0)
    if not torch.cuda.is_available():
        print("1..0 # SKIP torch sees no GPU")
        sys.exit(0)
    return torch


def run(tests, skip=lambda fn: ""):
    """Runs `tests` in order, printing TAP; `skip(fn)` gives the reason to
    skip one ("" to run it).  Returns the exit status: 1 if any failed."""
    print("1..%d" % len(tests))
    failed = 0
    for i, fn in enumerate(tests, 1):
        why = skip(fn)
        if why:
            print("ok %d - %s # SKIP %s" % (i, fn.__name__, why))
            continue
        try:
            fn()
            print("ok %d - %s" % (i, fn.__name__))
        except Exception:  # noqa: BLE001 -- every failure is reported as TAP
            failed += 1
            print("not ok %d - %s" % (i, fn.__name__))
            for line in traceback.format_exc().splitlines():
                print("# " + line)
        sys.stdout.flush()
    return 1 if failed else 0
