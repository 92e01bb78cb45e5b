"""Training with tecc kernels and their gradient kernels as PyTorch operators.

block.te holds the memory-bound ops of a tiny classifier block -- RMSNorm,
SwiGLU and the cross-entropy against one-hot targets -- and, for each, a
gradient kernel made by `grad` (language.md section 13).  tecc.register_ops
pairs every kernel with its gradient kernels, so loss.backward() runs
them; the matrix products stay torch's.  The script trains the block for a
few full-batch SGD steps with the tecc operators and, from the same
initial weights on the same data, with the same block written in plain
PyTorch, and checks:

  - the two loss curves and the final weights agree within a stated
    tolerance (f32 throughout, so that the only differences are the
    rounding of tecc's fused kernels against PyTorch's separate ones: bf16
    would need tolerances loose enough to hide a wrong gradient);
  - the loss went down;
  - each step ran the forward kernels and, for the backward, the gradient
    kernels autograd asked for: rmsnorm_dw, not rmsnorm_bwd, since the
    block's input needs no gradient (ctx.needs_input_grad);
  - one step under torch.compile(fullgraph=True), backward included, ran
    the same tecc kernels and gave the eager step's loss and gradients.

    PYTHONPATH=python TECC=src/tecc python3 examples/torch/train.py [WORKDIR]

Needs tecc ($TECC or on PATH), nvcc ($NVCC, $CUDA_HOME/bin or PATH), a
CUDA GPU and PyTorch 2.4 or newer.  Prints one line per check and exits 0
when all pass (77 when there is no GPU to run on).
"""

import copy
import math
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

import tecc

HERE = os.path.dirname(os.path.abspath(__file__))
NAMESPACE = "tecc_train"

# Agreement of the tecc run with the PyTorch run: the loss at every step
# within LOSS_RTOL of PyTorch's (of a hundredth of the first loss, where
# it has fallen below that), each final weight within WEIGHT_ATOL plus
# WEIGHT_RTOL of its magnitude.  They leave room for f32 kernels that round
# differently from PyTorch's (results that differ in the last bits, steps
# that drift apart slowly); a wrong gradient would move them far more.
# The checks print the worst differences seen, to tighten them by.
LOSS_RTOL = 1e-4
WEIGHT_ATOL, WEIGHT_RTOL = 1e-4, 1e-3
# One compiled step against the eager one: the same kernels, other code
# around them.
STEP_RTOL = 1e-5


def ops():
    return getattr(torch.ops, NAMESPACE)


class Block(torch.nn.Module):
    """x [B, D] -> RMSNorm -> SwiGLU(x W_a, x W_b) -> W_o -> class logits
    [B, C] -> mean cross-entropy against one-hot targets [B, C]; the
    memory-bound ops are tecc's (use_tecc) or PyTorch's."""

    def __init__(self, d, f, c, use_tecc):
        super().__init__()
        self.use_tecc = use_tecc
        self.norm = torch.nn.Parameter(torch.ones(d, device="cuda"))
        self.w_a = torch.nn.Parameter(torch.randn(d, f, device="cuda") / math.sqrt(d))
        self.w_b = torch.nn.Parameter(torch.randn(d, f, device="cuda") / math.sqrt(d))
        self.w_o = torch.nn.Parameter(torch.randn(f, c, device="cuda") / math.sqrt(f))

    def forward(self, x, onehot):
        if self.use_tecc:
            h = ops().rmsnorm(x, self.norm)
            u = ops().swiglu(h @ self.w_a, h @ self.w_b)
            return ops().xent(u @ self.w_o, onehot).mean()
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm
        u = F.silu(h @ self.w_a) * (h @ self.w_b)
        return F.cross_entropy(u @ self.w_o, onehot)  # probabilities as targets


_LOADED = {}


def load(workdir):
    """block.te built (tecc, nvcc; cached), its kernels registered as
    NAMESPACE::NAME once per process; returns (library, calls), calls the
    list every kernel call appends its name to."""
    if not _LOADED:
        # arch None: the GPU PyTorch sees; $TECC_ARCH to choose.
        so, header = tecc.build(os.path.join(HERE, "block.te"), out_dir=workdir,
                                arch=os.environ.get("TECC_ARCH"))
        lib = tecc.load(so, header)
        calls = []
        for name, kernel in lib.kernels.items():
            def recording(values, name=name, call_c=kernel.call_c):
                calls.append(name)
                return call_c(values)
            kernel.call_c = recording  # the operators call the kernel, which calls this
        tecc.register_ops(lib, NAMESPACE)
        _LOADED.update(lib=lib, calls=calls)
    return _LOADED["lib"], _LOADED["calls"]


def data(b, d, c):
    """Inputs and one-hot targets: the class a fixed random linear teacher
    picks, so that there is something to learn.  One batch, the whole
    data set, so that the loss of successive steps falls without the noise
    of drawing batches."""
    teacher = torch.randn(d, c, device="cuda")
    x = torch.randn(b, d, device="cuda")
    labels = (x @ teacher).argmax(-1)
    return x, F.one_hot(labels, c).float()


def train(model, x, onehot, steps, lr, calls):
    """steps of SGD with momentum on the batch; returns the loss of each
    step and the kernels the first step called (calls: the list load()
    fills)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses, first = [], None
    for _ in range(steps):
        del calls[:]
        opt.zero_grad(set_to_none=True)
        loss = model(x, onehot)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if first is None:
            first = list(calls)
    return losses, first


def worst(a, b, atol, rtol):
    """max |a - b| / (atol + rtol |b|): at most 1 when within tolerance."""
    return float(((a - b).abs() / (atol + rtol * b.abs())).max())


def run(workdir, steps=20, b=1024, d=128, f=256, c=64, lr=0.5):
    """Builds block.te in workdir and runs the checks; returns a list of
    (passed, description)."""
    lib, calls = load(workdir)
    matmul_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # the same f32 products in both runs
    try:
        return checks(calls, steps, b, d, f, c, lr)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul_tf32


def checks(calls, steps, b, d, f, c, lr):
    torch.manual_seed(0)
    tecc_model = Block(d, f, c, use_tecc=True)
    torch_model = copy.deepcopy(tecc_model)
    torch_model.use_tecc = False
    initial = copy.deepcopy(tecc_model.state_dict())
    x, onehot = data(b, d, c)
    results = []

    tecc_losses, ran = train(tecc_model, x, onehot, steps, lr, calls)
    want = ["rmsnorm", "swiglu", "xent", "xent_bwd", "swiglu_bwd", "rmsnorm_dw"]
    results.append((ran == want, "a step ran the tecc kernels %s (want %s)"
                    % (", ".join(ran), ", ".join(want))))
    torch_losses, ran = train(torch_model, x, onehot, steps, lr, calls)
    results.append((ran == [], "a step of the PyTorch block ran no tecc kernel (%s)"
                    % (", ".join(ran) or "none")))

    t_losses = torch.tensor(tecc_losses, dtype=torch.float64)
    p_losses = torch.tensor(torch_losses, dtype=torch.float64)
    # each loss against PyTorch's, or against a hundredth of the first
    # where the block has learned its batch and the loss falls towards 0
    # (there the last bits of a tiny loss differ relatively more)
    scale = torch.clamp(p_losses.abs(), min=1e-2 * float(p_losses[0].abs()))
    loss_err = float(((t_losses - p_losses).abs() / scale).max())
    results.append((loss_err <= LOSS_RTOL,
                    "%d steps: losses %.4f -> %.4f (tecc) and %.4f -> %.4f (PyTorch), worst "
                    "relative difference %.2g (tolerance %.0e)"
                    % (steps, tecc_losses[0], tecc_losses[-1], torch_losses[0],
                       torch_losses[-1], loss_err, LOSS_RTOL)))
    k = max(1, steps // 4)
    results.append((sum(tecc_losses[-k:]) < sum(tecc_losses[:k]),
                    "the loss went down: mean of the first %d steps %.4f, of the last %d %.4f"
                    % (k, sum(tecc_losses[:k]) / k, k, sum(tecc_losses[-k:]) / k)))
    for (name, p), q in zip(tecc_model.named_parameters(), torch_model.parameters()):
        p, q = p.detach(), q.detach()
        w = worst(p, q, WEIGHT_ATOL, WEIGHT_RTOL)
        results.append((w <= 1.0, "final %s %s: max |tecc - PyTorch| %.2g, %.2g of the "
                        "tolerance (%.0e + %.0e |w|)"
                        % (name, list(p.shape), float((p - q).abs().max()), w,
                           WEIGHT_ATOL, WEIGHT_RTOL)))

    results += compiled_step(calls, initial, x, onehot, d, f, c)
    return results


def compiled_step(calls, initial, x, onehot, d, f, c):
    """One forward and backward under torch.compile(fullgraph=True) against
    the eager step, from the initial weights."""
    eager = Block(d, f, c, use_tecc=True)
    eager.load_state_dict(initial)
    compiled = copy.deepcopy(eager)
    explanation = torch._dynamo.explain(compiled)(x, onehot)
    loss = eager(x, onehot)
    loss.backward()
    del calls[:]
    compiled_loss = torch.compile(compiled, fullgraph=True)(x, onehot)
    compiled_loss.backward()
    torch.cuda.synchronize()
    ran = list(calls)
    results = [(explanation.graph_break_count == 0,
                "torch._dynamo.explain: %d graph(s), %d graph break(s)"
                % (explanation.graph_count, explanation.graph_break_count))]
    want = {"rmsnorm", "swiglu", "xent", "xent_bwd", "swiglu_bwd", "rmsnorm_dw"}
    results.append((set(ran) == want and len(ran) == len(want),
                    "torch.compile(fullgraph=True), forward and backward, ran the tecc kernels "
                    "%s" % ", ".join(ran)))
    err = abs(float(compiled_loss) - float(loss)) / abs(float(loss))
    results.append((err <= STEP_RTOL, "compiled loss %.6f, eager %.6f (relative difference %.2g)"
                    % (float(compiled_loss), float(loss), err)))
    for (name, p), q in zip(compiled.named_parameters(), eager.parameters()):
        scale = float(q.grad.abs().max())
        diff = float((p.grad - q.grad).abs().max())
        results.append((diff <= STEP_RTOL * scale,
                        "compiled gradient of %s: max difference %.2g of max |grad| %.2g"
                        % (name, diff, scale)))
    return results


def main(argv):
    if not torch.cuda.is_available():
        print("train: no CUDA device; nothing to run")
        return 77
    workdir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="tecc-torch-train.")
    results = run(workdir)
    for passed, what in results:
        print("%s - %s" % ("ok" if passed else "FAILED", what))
    failed = sum(1 for passed, _ in results if not passed)
    print("train: %d of %d checks passed on %s"
          % (len(results) - failed, len(results), torch.cuda.get_device_name()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
