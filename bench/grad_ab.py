"""A/B of the norms' backward kernels (tests/grad/programs): kernel time
(torch.profiler device time) of one call of each gradient kernel built
by two tecc versions, with new's outputs against base's (largest
difference relative to the largest |output|) and three repeated calls
bitwise the same ("det").

    DIR/base/*.cu, DIR/new/*.cu: `tecc tests/grad/programs/P.te -o DIR/V/P.cu`
    python3 bench/grad_ab.py [DIR]          (DIR default bench-carry/colb)
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from prog_ab import build_libs, ktime
import prog_ab

root = sys.argv[1] if len(sys.argv) > 1 else "bench-carry/colb"
progs = ["grad_rmsnorm", "grad_layernorm", "grad_add_rmsnorm"]
libs = build_libs(root, progs)


def inputs(sig, M, N):
    return prog_ab.inputs(sig, {"M": M, "N": N})

shapes = [(8192, 4096), (32768, 1024), (32768, 256), (16384, 4096), (4096, 16384), (4096, 11008), (1024, 65536), (2048, 32768), (128, 262144)]
print("%-22s %-12s %9s %9s %6s %4s %4s %s" % ("kernel", "shape", "base us", "new us", "ratio", "kb", "kn", "maxdiff"))
for p in progs:
    for name in libs["new"][p].kernels:
        if not name.endswith("_bwd"): continue
        for M, N in shapes:
            kb, kn = libs["base"][p].kernels[name], libs["new"][p].kernels[name]
            args = inputs(kn.sig, M, N)
            ob, on = kb(*args), kn(*args)
            ob = ob if isinstance(ob, tuple) else (ob,)
            on = on if isinstance(on, tuple) else (on,)
            diff = max(((a.float() - b.float()).abs().max() / (a.float().abs().max() + 1e-30)).item() for a, b in zip(ob, on))
            rep = [kn(*args) for _ in range(3)]
            det = all(all(torch.equal(x, y) for x, y in zip(on, (r if isinstance(r, tuple) else (r,)))) for r in rep)
            tb, nb, _ = ktime(lambda: kb(*args))
            tn, nn, names = ktime(lambda: kn(*args))
            print("%-22s %-12s %9.1f %9.1f %6.3f %4d %4d %.2e %s" % (name, "%dx%d" % (M, N), tb, tn, tn / tb, nb, nn, diff, "det" if det else "NONDET"), flush=True)
