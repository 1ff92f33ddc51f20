"""Compiler remarks travel with the kernel into every view (issue 12, item 5).

A gather (`tl.load(x_ptr + idx * idx)` with a loaded index and a mask on it) cannot be
lowered to a strided copy, so the compiler remarks on it. One child process profiles
it next to a plain add kernel into a .hatchet file; then the remark, naming the kernel
source line of that load, must appear in
* the kernel node's "remarks" metric (a string, like device_type), and only there;
* llnl-hatchet's dataframe (GraphFrame.from_literal, reference venv), with upstream
  proton-viewer still displaying the file;
* `proton-cli report --remarks` (text and json) and the page `proton-cli html` writes.
"""
import json
import os
import subprocess

import pytest

import proton_util as pu

PRODUCER = """
import triton.profiler as proton

@triton.jit
def gather_kernel(x_ptr, i_ptr, o_ptr, BLOCK: tl.constexpr):
    idx = tl.load(i_ptr + tl.arange(0, BLOCK))
    v = tl.load(x_ptr + idx * idx, mask=idx < 8, other=0.0)  # GATHER
    tl.store(o_ptr + tl.arange(0, BLOCK), v)

x, i, o = torch.randn(64), torch.randint(0, 16, (16,), dtype=torch.int32), torch.zeros(64)
b = Bufs()
proton.start("rm", backend="cpu")
with proton.scope("step"):
    gather_kernel[(1,)](x, i, o, BLOCK=16)
    launch_add(b)
proton.finalize()
m = i < 8
assert torch.equal(o[:16][m], x[(i[m] * i[m]).long()]) and torch.all(o[:16][~m] == 0)
print("DONE")
"""

MSG = "tl.load lowered to element-wise guarded loads (pointer or mask not analysable)"


@pytest.fixture(scope="module")
def hatchet(tmp_path_factory):
    pu.warm_up()
    d = tmp_path_factory.mktemp("remarks")
    p = pu.check_ok(pu.run_child(PRODUCER, d, name="gk.py"))
    assert p.stdout == "DONE\n"
    src = (d / "gk.py").read_text().splitlines()
    line = next(k + 1 for k, t in enumerate(src) if "# GATHER" in t)
    return d / "rm.hatchet", f"{d / 'gk.py'}:{line}:"


def test_hatchet_kernel_node_carries_the_remark(hatchet):
    path, where = hatchet
    paths = pu.tree_paths(pu.load_json(path))
    g = paths[("ROOT", "step", "gather_kernel")]
    lines = g["remarks"].split("\n")
    assert any(ln.startswith(where) and ln.endswith(MSG) for ln in lines), lines
    # a kernel the compiler had nothing to say about, scopes and ROOT carry no remarks
    assert [p for p, m in paths.items() if "remarks" in m] == [("ROOT", "step", "gather_kernel")]


def test_llnl_hatchet_and_proton_viewer_read_it(hatchet):
    path, where = hatchet
    py, viewer = pu.ref_venv_python()
    code = ("import json, sys, hatchet as ht\n"
            "db = json.load(open(sys.argv[1]))\n"
            "gf = ht.GraphFrame.from_literal([db[0]])\n"
            "gf.update_inclusive_columns()\n"
            "df = gf.dataframe\n"
            "print(json.dumps({r['name']: (r['remarks'] if isinstance(r['remarks'], str) else None, r['count'])"
            " for _, r in df.iterrows()}))\n")
    r = subprocess.run([py, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout.strip().splitlines()[-1])
    assert rows["gather_kernel"][0].startswith(where) and MSG in rows["gather_kernel"][0]
    assert rows["gather_kernel"][1] == 1 and rows["add_kernel"][0] is None
    r = subprocess.run([viewer, "-m", "time/ns", str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert {"gather_kernel", "add_kernel", "step", "ROOT"} <= {ln.split()[-1] for ln in r.stdout.splitlines() if ln.strip()}


def test_report_remarks(hatchet):
    path, where = hatchet
    r = subprocess.run([pu.PROTON_CLI, "report", "--remarks", "-m", "count", str(path)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.endswith(" gather_kernel"))
    assert lines[k + 1].strip() == f"remark: {where}" + lines[k + 1].split(where, 1)[1]
    assert lines[k + 1].endswith(MSG) and where in lines[k + 1]
    assert sum("remark:" in ln for ln in lines) == 1
    plain = subprocess.run([pu.PROTON_CLI, "report", "-m", "count", str(path)], capture_output=True, text=True)
    assert "remark" not in plain.stdout  # only on request
    j = subprocess.run([pu.PROTON_CLI, "report", "--remarks", "--format", "json", str(path)], capture_output=True,
                       text=True, timeout=60)
    assert j.returncode == 0, j.stderr

    def walk(n):
        yield n
        for c in n["children"]:
            yield from walk(c)
    nodes = {n["name"]: n for n in walk(json.loads(j.stdout)[0]["tree"])}
    assert len(nodes["gather_kernel"]["remarks"]) == 1 and nodes["gather_kernel"]["remarks"][0].startswith(where)
    assert "remarks" not in nodes["add_kernel"]


def test_html_lists_the_remark(hatchet, tmp_path):
    path, where = hatchet
    out = tmp_path / "r.html"
    fixed_roofs = dict(os.environ, TRITIUM_ROOFLINE_PEAKS=os.path.join(pu.REPO, "tests/viewers/fixtures/peaks_zen4.json"))
    r = subprocess.run([pu.PROTON_CLI, "html", str(path), "-o", str(out)], capture_output=True, text=True, timeout=60,
                       env=fixed_roofs)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    sec = page[page.index('<section id="remarks-section">'):]
    sec = sec[:sec.index("</section>")]
    assert ">gather_kernel</b><pre>" in sec and where in sec and MSG in sec and "add_kernel" not in sec
    assert '<a href="#remarks-section">' in page
