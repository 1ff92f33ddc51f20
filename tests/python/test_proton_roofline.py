"""`proton-cli roofline` and the HTML roofline use the same measured roofs (issue 12, item 6).

One child process profiles a K-loop matmul (with an in-kernel "load" scope) and the add
kernel on this machine into a .hatchet file. Then, with an empty cache directory:
* `proton-cli html` measures this machine once (progress on stderr) and caches the roofs;
  the page's roof is exactly the cached fp32 peak and read bandwidth, not a value
  observed in the profile;
* `proton-cli roofline --format json` reads the same cache without measuring, and each
  row's intensity, rate, roof and fraction follow from the file's static flops and bytes
  and its times (checked here from the hatchet itself);
* a corrupt cache is reported and measured again.
"""
import json
import os
import re
import subprocess

import pytest

import proton_util as pu

PRODUCER = """
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
pl.enable_semantic("triton")
flags.instrumentation_on = True

@triton.jit
def mm_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        pl.enter_scope("load")
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        pl.exit_scope("load")
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)

A, B, C = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
b = Bufs()
proton.start("rl", backend="cpu")
for _ in range(2):
    mm_kernel[(4, 4)](A, B, C, 128, 128, 128, BM=32, BN=32, BK=32)
    launch_add(b)
proton.finalize()
assert torch.allclose(C, A @ B, atol=1e-3, rtol=1e-4)
print("DONE")
"""


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    pu.warm_up()
    d = tmp_path_factory.mktemp("roofline")
    p = pu.check_ok(pu.run_child(PRODUCER, d, name="rl.py"))
    assert p.stdout == "DONE\n"
    return d / "rl.hatchet"


def cli(args, cache):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    env.pop("TRITIUM_ROOFLINE_PEAKS", None)
    return subprocess.run([pu.PROTON_CLI, *args], capture_output=True, text=True, timeout=120, env=env)


def page_data(path):
    page = path.read_text()
    m = re.search(r'<script type="application/json" id="tritium-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def kernels(path):
    """{kernel name: its hatchet node} of the file."""
    out = {}

    def walk(n):
        if n["metrics"].get("device_type") == "CPU":
            out[n["frame"]["name"]] = n
        for c in n["children"]:
            walk(c)
    walk(pu.load_json(path)[0])
    return out


def test_html_and_roofline_share_the_measured_roofs(profile, tmp_path):
    cache = tmp_path / "cache"
    r = cli(["html", str(profile), "-o", str(tmp_path / "r.html")], cache)
    assert r.returncode == 0, r.stderr
    assert "measuring the roofs of this machine" in r.stderr
    files = list((cache / "tritium").glob("roofline-*.json"))
    assert len(files) == 1
    roofs = json.loads(files[0].read_text())
    assert roofs["format"] == "tritium-roofline-peaks" and roofs["threads"] == os.cpu_count()
    assert roofs["fma_gflops"]["fp32"] > 0 and roofs["fma_gflops"]["fp64"] > 0 and roofs["read_gbps"] > 0
    rf = page_data(tmp_path / "r.html")["roofline"]
    assert rf["measured"] is False and rf["type"] == "fp32"
    assert rf["peakG"] == pytest.approx(roofs["fma_gflops"]["fp32"], rel=1e-12)
    assert rf["peakBW"] == pytest.approx(roofs["read_gbps"], rel=1e-12)
    assert str(files[0]) in rf["source"]

    r = cli(["roofline", "--format", "json", str(profile)], cache)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    f = json.loads(r.stdout)["files"][0]
    assert f["roofs"]["fma_gflops"] == roofs["fma_gflops"] and f["roofs"]["read_gbps"] == roofs["read_gbps"]
    rows = {row["name"]: row for row in f["rows"]}
    ks = kernels(profile)
    for name in ("mm_kernel", "add_kernel"):
        m, row = ks[name]["metrics"], rows[name]
        assert row["kind"] == "kernel"
        assert row["flop_per_byte"] == pytest.approx(m["flops32"] / m["bytes"], rel=1e-9)
        assert row["gflops"] == pytest.approx(m["flops32"] / m["time (ns)"], rel=1e-9)
        roof = min(roofs["fma_gflops"]["fp32"], row["flop_per_byte"] * roofs["read_gbps"])
        assert row["roof_gflops"] == pytest.approx(roof, rel=1e-9)
        assert row["of_roof"] == pytest.approx(row["gflops"] / roof, rel=1e-9)
        compute = row["flop_per_byte"] * roofs["read_gbps"] >= roofs["fma_gflops"]["fp32"]
        assert row["bound"] == ("compute" if compute else "memory")
    assert ks["mm_kernel"]["metrics"]["flops32"] == 2 * 2 * 128 ** 3  # 2 launches of 2*M*N*K
    assert rows["add_kernel"]["bound"] == "memory"
    load = next(row for row in f["rows"] if row["kind"] == "scope" and row["name"] == "load")
    assert load["type"] == "bytes" and load["roof_gbytes"] == roofs["read_gbps"] and load["gbytes"] > 0


def test_corrupt_cache_is_measured_again(profile, tmp_path):
    cache = tmp_path / "cache"
    path = cli(["roofline", "--cache-path"], cache).stdout.strip()
    assert path.startswith(str(cache / "tritium" / "roofline-"))
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write('{"format": "tritium-roofline-peaks", "version": 1, "cpu_model": 7}')
    r = cli(["roofline"], cache)
    assert r.returncode == 0, r.stderr
    assert "is not usable ('cpu_model' is not a string); measuring again" in r.stderr
    assert "measuring the roofs" in r.stderr and r.stdout.startswith("roofs: ")
    assert json.loads(open(path).read())["read_gbps"] > 0
    again = cli(["roofline"], cache)
    assert again.stderr == "" and again.stdout == r.stdout
