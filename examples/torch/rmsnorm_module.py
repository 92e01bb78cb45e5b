"""A tecc kernel inside a torch.nn.Module compiled with torch.compile.

rmsnorm.te becomes a shared library (tecc, then nvcc), its entry point a
PyTorch custom operator (tecc.register_ops), and RMSNorm below calls it.
The script checks that the module, the module under
torch.compile(fullgraph=True) and a CUDA graph of the module all give the
bits of the direct call, that TorchDynamo sees no graph break, and that the
result is within abi.md section 6's bf16 bound of a float64 evaluation.

    PYTHONPATH=python TECC=src/tecc python3 examples/torch/rmsnorm_module.py [WORKDIR]

Needs tecc ($TECC or on PATH), nvcc ($NVCC, $CUDA_HOME/bin or PATH), a
CUDA GPU and PyTorch 2.4 or newer.  Prints one line per check and exits 0
when all pass (77 when there is no GPU to run on).
"""

import os
import sys
import tempfile

import torch

import tecc

HERE = os.path.dirname(os.path.abspath(__file__))
NAMESPACE = "tecc_example"


class RMSNorm(torch.nn.Module):
    """y = x * rsqrt(mean(x * x, -1) + 1e-6) * weight, over the last axis of
    a bf16 [N, D] tensor: one fused tecc kernel."""

    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d, dtype=torch.bfloat16, device="cuda"))

    def forward(self, x):
        return getattr(torch.ops, NAMESPACE).rmsnorm(x, self.weight)


def reference(x, w):
    """float64 RMSNorm and the magnitude bound of abi.md section 6."""
    x64, w64 = x.double(), w.double()
    scale = torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6)
    return x64 * scale * w64, (x64 * scale).abs() * w64.abs()


def graph_replay(model, x):
    """model(x) captured in a CUDA graph, replayed on x's current contents."""
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model(static_x)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    static_x.copy_(x)
    graph.replay()
    return static_y


def run(workdir, rows=4096, d=4096):
    """Builds the example in workdir and runs its checks; returns a list of
    (passed, description)."""
    # arch None: the GPU PyTorch sees (tecc.build()); $TECC_ARCH to choose.
    # A second run takes the library from tecc's cache (~/.cache/tecc).
    so, header = tecc.build(os.path.join(HERE, "rmsnorm.te"), out_dir=workdir,
                            arch=os.environ.get("TECC_ARCH"))
    lib = tecc.load(so, header)
    if not hasattr(getattr(torch.ops, NAMESPACE), "rmsnorm"):
        tecc.register_ops(lib, NAMESPACE)
    torch.manual_seed(0)
    model = RMSNorm(d)
    results = []
    with torch.no_grad():
        model.weight.copy_(torch.rand(d, device="cuda") + 0.5)
        x = torch.randn(rows, d, device="cuda").to(torch.bfloat16)
        direct = lib.rmsnorm(x, model.weight)
        eager = model(x)
        explanation = torch._dynamo.explain(model)(x)
        compiled = torch.compile(model, fullgraph=True)(x)
        replayed = graph_replay(model, x)
        torch.cuda.synchronize()
        ref, mag = reference(x, model.weight)
    rtol, atol = 1.6e-2, 1e-5  # abi.md section 6, bf16
    err = (direct.double() - ref).abs()
    bound = atol + rtol * (ref.abs() + mag)
    results.append((bool((err <= bound).all()),
                    "direct call within abi.md's bf16 bound of float64 (worst %.3g of bound)"
                    % float((err / bound).max())))
    results.append((torch.equal(eager, direct), "module == direct call, bitwise"))
    results.append((explanation.graph_break_count == 0 and explanation.graph_count == 1,
                    "torch._dynamo.explain: %d graph(s), %d graph break(s)"
                    % (explanation.graph_count, explanation.graph_break_count)))
    results.append((torch.equal(compiled, direct), "torch.compile(fullgraph=True) == direct call, bitwise"))
    results.append((torch.equal(replayed, direct), "CUDA graph replay == direct call, bitwise"))
    return results


def main(argv):
    if not torch.cuda.is_available():
        print("rmsnorm_module: no CUDA device; nothing to run")
        return 77
    workdir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="tecc-torch-example.")
    results = run(workdir)
    for passed, what in results:
        print("%s - %s" % ("ok" if passed else "FAILED", what))
    failed = sum(1 for passed, _ in results if not passed)
    print("rmsnorm_module: %d of %d checks passed on %s"
          % (len(results) - failed, len(results), torch.cuda.get_device_name()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
