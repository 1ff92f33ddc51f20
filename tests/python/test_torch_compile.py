"""torch.compile with inductor's Triton CPU backend on Tritium (issue 15).

`torch._inductor.config.cpu_backend = "triton"` makes inductor write Triton kernels for
CPU graphs; Tritium compiles, launches and profiles them. Each case compiles a graph,
compares it with eager torch (torch.testing.assert_close; the tolerances are torch's
float32 defaults unless a case says why not), and reads a Proton session back to check
that the kernels really ran through Tritium's launcher: every kernel inductor generated
(torch._inductor.metrics.generated_kernel_count) shows up as a `triton_*` kernel in the
session's tree, so nothing fell back to inductor's C++ backend unnoticed.

Inductor's own cache goes to a per-module temporary directory (TORCHINDUCTOR_CACHE_DIR);
kernels land in the session's TRITON_CACHE_DIR (conftest.py).
"""
import atexit
import os
import shutil
import tempfile

import pytest
import torch

import proton_util as pu

_INDUCTOR_CACHE = tempfile.mkdtemp(prefix="tritium-inductor-")
atexit.register(shutil.rmtree, _INDUCTOR_CACHE, True)
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", _INDUCTOR_CACHE)

import torch._dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
from torch._inductor import metrics  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.profiler as proton  # noqa: E402


@triton.jit
def twice(x, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, tl.load(x + i, mask=i < n) * 2, mask=i < n)


@pytest.fixture(autouse=True)
def _triton_cpu_backend():
    old = inductor_config.cpu_backend
    inductor_config.cpu_backend = "triton"
    torch._dynamo.reset()
    metrics.reset()
    torch.manual_seed(0)
    yield
    inductor_config.cpu_backend = old
    torch._dynamo.reset()


def _compiled(fn, args, tmp_path, **tol):
    """Compiles fn, checks it against eager, runs it once more inside a Proton session
    and returns {kernel name: launches} of that run."""
    with torch.no_grad():
        expect = fn(*args)
        g = torch.compile(fn)
        got = g(*args)
        torch.testing.assert_close(got, expect, **tol)
        path = str(tmp_path / "run")
        proton.start(path, backend="cpu")
        with proton.scope("step"):
            again = g(*args)
        proton.finalize()
    torch.testing.assert_close(again, expect, **tol)
    tree = pu.load_json(path + ".hatchet")
    kernels = {}
    for p, count in pu.kernel_counts(tree).items():
        assert p[:2] == ("ROOT", "step"), f"kernel outside the step scope: {p}"
        kernels[p[-1]] = kernels.get(p[-1], 0) + count
    assert kernels, "inductor launched no Triton kernel through Tritium"
    assert all(k.startswith("triton_") for k in kernels), kernels
    # every kernel inductor generated is a Triton kernel that ran here (no C++ kernels)
    assert len(kernels) == metrics.generated_kernel_count, (kernels, metrics.generated_kernel_count)
    return kernels


def test_pointwise_chain(tmp_path):
    x, y = torch.randn(1000), torch.randn(1000)
    k = _compiled(lambda a, b: torch.relu(a * b + 1.0).sin() - torch.sigmoid(b), (x, y), tmp_path)
    assert len(k) == 1 and next(iter(k)).startswith("triton_poi_")


def test_pointwise_broadcast_2d(tmp_path):
    x, b = torch.randn(37, 129), torch.randn(129)
    _compiled(lambda a, c: torch.tanh(a - c) * torch.exp(-a.abs()), (x, b), tmp_path)


def test_reductions(tmp_path):
    """sum and amax over rows and over columns (one graph: four reduction kernels)."""
    x = torch.randn(64, 300)
    k = _compiled(lambda a: (a.sum(1), a.sum(0), a.amax(1), a.amax(0)), (x,), tmp_path)
    assert sum(n.startswith(("triton_per_", "triton_red_")) for n in k) >= 2, k


def test_amax_propagates_nan(tmp_path):
    x = torch.randn(8, 300)
    x[3, 17] = float("nan")
    x[5, 0] = float("nan")
    got = _compiled(lambda a: a.amax(1), (x,), tmp_path, equal_nan=True)
    assert got


def test_softmax(tmp_path):
    _compiled(lambda a: torch.softmax(a, -1), (torch.randn(64, 300),), tmp_path)


def test_layer_norm(tmp_path):
    ln = torch.nn.LayerNorm(300).eval()
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    _compiled(ln, (torch.randn(64, 300),), tmp_path)


def test_matmul_epilogue(tmp_path):
    a, b, c = torch.randn(64, 96), torch.randn(96, 80), torch.randn(80)
    # inductor calls the extern mm and fuses bias + relu into one Triton kernel
    _compiled(lambda x, w, bias: torch.relu(x @ w + bias), (a, b, c), tmp_path)


def test_mlp(tmp_path):
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval()
    _compiled(mlp, (torch.randn(32, 64),), tmp_path)


def test_transformer_encoder_layer(tmp_path):
    # the fast path would make the whole layer one fused aten op (no kernels to generate)
    old = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True).eval()
        # attention and the two matmuls run in different orders than eager: torch's
        # transformer tests compare float32 at 1e-5..1e-4; 1e-4 here
        k = _compiled(layer, (torch.randn(2, 16, 64),), tmp_path, atol=1e-4, rtol=1e-4)
    finally:
        torch.backends.mha.set_fastpath_enabled(old)
    assert sum("layer_norm" in n for n in k) == 2, k


@pytest.mark.parametrize("asserts", [True, False])
def test_embedding_gather(tmp_path, asserts):
    """An index loaded from memory (inductor's indirect indexing): a gathered load,
    with inductor's bounds assert (tl.device_assert, compiled in: inductor asks for
    debug=True) and without."""
    emb = torch.nn.Embedding(100, 32)
    idx = torch.randint(0, 100, (4, 16))
    with inductor_config.patch(assert_indirect_indexing=asserts):
        _compiled(lambda i: emb(i) * 2.0 + 1.0, (idx,), tmp_path)


def test_embedding_out_of_bounds_index_raises():
    """An index out of range trips inductor's device_assert: the call raises (no read
    outside the table, no crash) and the process goes on."""
    emb = torch.nn.Embedding(100, 32)
    idx = torch.randint(0, 100, (4, 16))
    g = torch.compile(lambda i: emb(i) * 2.0 + 1.0)
    with torch.no_grad():
        torch.testing.assert_close(g(idx), emb(idx) * 2.0 + 1.0)
        idx[1, 3] = 150
        with pytest.raises(RuntimeError, match=r"program \(\d+, 0, 0\): Assertion `index out of bounds"):
            g(idx)
        idx[1, 3] = 7
        torch.testing.assert_close(g(idx), emb(idx) * 2.0 + 1.0)


@pytest.mark.parametrize("dim", [0, 1])
def test_argmax_argmin_and_max_with_indices(tmp_path, dim):
    """Reductions over several operands (value, index), as inductor writes argmax."""
    x = torch.randn(24, 40)
    x[3, 5] = x[3, 9] = 10.0  # a tie: the first index, as eager
    _compiled(lambda a: (a.argmax(dim=dim), a.argmin(dim=dim), torch.max(a, dim=dim).indices), (x,), tmp_path)


@pytest.mark.parametrize("dim", [0, 1])
def test_cumsum_and_cumprod(tmp_path, dim):
    """tl.associative_scan, as inductor writes torch.cumsum / torch.cumprod."""
    x = torch.rand(12, 33) + 0.5
    _compiled(lambda a: (torch.cumsum(a, dim) * 2, torch.cumprod(a, dim)), (x,), tmp_path, atol=1e-4, rtol=1e-4)


def test_bf16_rounding_emulated(tmp_path):
    """With emulate_precision_casts inductor keeps the bf16 rounding eager does; the
    result is then exactly eager's (without it inductor computes in fp32, in both of
    its backends)."""
    x = torch.randn(1000)
    with inductor_config.patch(emulate_precision_casts=True):
        _compiled(lambda a: (a.to(torch.bfloat16) * 2).float() + 1, (x,), tmp_path, atol=0, rtol=0)


def test_kernel_capture_names_inductor_kernels(tmp_path):
    """PROTON_KERNEL_CAPTURE=1 with no code change: the trace lists inductor's kernels."""
    code = f"""
import os
os.environ["TORCHINDUCTOR_CACHE_DIR"] = {os.environ["TORCHINDUCTOR_CACHE_DIR"]!r}
import torch
import torch._inductor.config as cfg
cfg.cpu_backend = "triton"
torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval()
g = torch.compile(mlp)
x = torch.randn(32, 64)
with torch.no_grad():
    for _ in range(3):
        torch.testing.assert_close(g(x), mlp(x))
print("DONE")
"""
    p = pu.check_ok(pu.run_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json"},
                                 timeout=300))
    assert p.stdout.strip().endswith("DONE")
    tr = pu.load_json(tmp_path / "cap.json")
    assert pu.validate_trace(tr) == []
    names = [e["name"] for e in pu.kernel_events(tr)]
    assert names and all(n.startswith("triton_") for n in names), names
    assert any("gelu" in n for n in names), names
    # every call launches every kernel (more launches: inductor's autotuning runs)
    for n in set(names):
        assert names.count(n) >= 3, (n, names.count(n))


def test_compiled_kernel_survives_pickling():
    """Inductor compiles in worker processes and pickles the CompiledKernel's __dict__
    (function/run/module replaced by None) and the JITFunction back: the copy launches
    from Tritium's kernel cache after _init_handles()."""
    import pickle

    from triton.compiler import ASTSource, CompiledKernel
    from triton.compiler import compiler as cc

    k = triton.compile(ASTSource(twice, {"x": "*fp32", "o": "*fp32", "n": "i32"}, {"B": 64}))
    state = pickle.dumps({**k.__dict__, "module": None, "function": None, "run": None})
    cc._LOADED.pop(k.hash)  # as in a fresh process
    copy = CompiledKernel.__new__(CompiledKernel)
    copy.__dict__.update(pickle.loads(state))
    copy._init_handles()
    assert copy.src.fn.arg_names == ["x", "o", "n", "B"] and copy.src.fn.constexprs == [3]
    assert copy.metadata["shared"] == 0 and copy.metadata["num_warps"] == 1
    x, o = torch.randn(100), torch.zeros(100)
    copy.run(2, 1, 1, 0, copy.function, copy.packed_metadata, None, None, None, x, o, 100, 64)
    torch.testing.assert_close(o, 2 * x)
