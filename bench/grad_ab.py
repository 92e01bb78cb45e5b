"""A/B of the norms' backward kernels (tests/grad/programs): kernel time
(torch.profiler device time) of one call of each gradient kernel built
by two tecc versions, with new's outputs against base's (largest
difference relative to the largest |output|) and three repeated calls
bitwise the same ("det").

    DIR/base/*.cu, DIR/new/*.cu: `tecc tests/grad/programs/P.te -o DIR/V/P.cu`
    python3 bench/grad_ab.py [DIR]          (DIR default bench-carry/colb)
"""
import sys, os, subprocess, statistics, concurrent.futures as cf
sys.path.insert(0, "python")
import torch, tecc
from torch.profiler import profile, ProfilerActivity

root = sys.argv[1] if len(sys.argv) > 1 else "bench-carry/colb"
progs = ["grad_rmsnorm", "grad_layernorm", "grad_add_rmsnorm"]
jobs = [["nvcc", "-shared", "-Xcompiler", "-fPIC", "-O3", "-arch=sm_90", "-o", "%s/%s/%s.so" % (root, v, p),
         "%s/%s/%s.cu" % (root, v, p)] for v in ("base", "new") for p in progs]
with cf.ThreadPoolExecutor(16) as ex:
    res = list(ex.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs))
for c, r in zip(jobs, res):
    if r.returncode:
        print(" ".join(c), r.stderr[-3000:]); sys.exit(1)
libs = {v: {p: tecc.load("%s/%s/%s.so" % (root, v, p), "%s/%s/%s.h" % (root, v, p)) for p in progs} for v in ("base", "new")}
DT = {"f32": torch.float32, "bf16": torch.bfloat16}

def inputs(sig, M, N):
    g = torch.Generator(device="cuda").manual_seed(1)
    out = []
    for p in sig.inputs:
        shape = [M if d == "M" else N for d in p.shape]
        out.append(torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(DT[p.dtype]))
    return out

def ktime(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps): fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    total = sum(e.device_time for e in evs)
    names = sorted(set(e.name.split("<")[0][-40:] for e in evs))
    return total / reps, len(evs) // reps, names

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
