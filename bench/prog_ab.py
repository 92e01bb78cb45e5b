"""A/B kernel time of whole programs built by two tecc versions
(bench/NOTES.md): torch.profiler device time of one call, new's outputs
against base's (largest difference relative to the largest |output|;
integers and bools: 0 or inf), on the same random inputs.

    DIR/base/P.cu, DIR/new/P.cu (with their .h): `tecc P.te -o DIR/V/P.cu`
    python3 bench/prog_ab.py DIR CASE...      (on the GPU, from the top)
    CASE: prog:kernel:M=70001,N=4096   (kernel `-`: the program's kernel
          of its own name, a file of top-level statements)
"""
import sys, subprocess, concurrent.futures as cf
sys.path.insert(0, "python")
import torch, tecc
from torch.profiler import profile, ProfilerActivity

root, cases = sys.argv[1], sys.argv[2:]
progs = sorted(set(c.split(":")[0] for c in cases))
jobs = [["nvcc", "-shared", "-Xcompiler", "-fPIC", "-O3", "-arch=sm_90", "-o", "%s/%s/%s.so" % (root, v, p),
         "%s/%s/%s.cu" % (root, v, p)] for v in ("base", "new") for p in progs]
with cf.ThreadPoolExecutor(16) as ex:
    res = list(ex.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs))
for c, r in zip(jobs, res):
    if r.returncode:
        print(" ".join(c), r.stderr[-3000:]); sys.exit(1)
libs = {v: {p: tecc.load("%s/%s/%s.so" % (root, v, p), "%s/%s/%s.h" % (root, v, p)) for p in progs} for v in ("base", "new")}
DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}

def inputs(sig, sizes):
    g = torch.Generator(device="cuda").manual_seed(1)
    out = []
    for p in sig.inputs:
        shape = [sizes[d] if isinstance(d, str) else d for d in p.shape]
        if p.dtype in DT:
            out.append(torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(DT[p.dtype]))
        elif p.dtype == "bool":
            out.append(torch.rand(shape, generator=g, device="cuda") > 0.5)
        else:
            t = torch.randint(1, 1000, shape, generator=g, device="cuda", dtype=torch.int64)
            s = torch.randint(0, 2, shape, generator=g, device="cuda", dtype=torch.int64) * 2 - 1
            out.append((t * s).to(getattr(torch, {"i32": "int32", "i64": "int64"}[p.dtype])))
    return out

def ktime(fn, reps=30):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps): fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    return sum(e.device_time for e in evs) / reps

print("%-40s %-22s %9s %9s %6s %s" % ("kernel", "sizes", "base us", "new us", "ratio", "maxdiff"))
for c in cases:
    p, k, sz = c.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    if k == "-": k = p
    kb, kn = libs["base"][p].kernels[k], libs["new"][p].kernels[k]
    args = inputs(kn.sig, sizes)
    ob, on = kb(*args, **{s: sizes[s] for s in kn.sig.sizes if s in sizes}), kn(*args, **{s: sizes[s] for s in kn.sig.sizes if s in sizes})
    ob = ob if isinstance(ob, tuple) else (ob,)
    on = on if isinstance(on, tuple) else (on,)
    diff = 0.0
    for a, b in zip(ob, on):
        if a.dtype == torch.bool or not a.is_floating_point():
            diff = max(diff, 0.0 if torch.equal(a, b) else float("inf"))
        else:
            d = (a.double() - b.double()).abs(); m = a.double().abs().max().item() + 1e-30
            d = torch.nan_to_num(d, nan=0.0, posinf=0.0)
            diff = max(diff, d.max().item() / m)
    tb = ktime(lambda: kb(*args)); tn = ktime(lambda: kn(*args))
    print("%-40s %-22s %9.1f %9.1f %6.3f %.2e" % (p + ":" + k, sz, tb, tn, tn / tb, diff), flush=True)
