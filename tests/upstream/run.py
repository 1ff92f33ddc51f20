"""Runs upstream Triton's test_core.py against Tritium and summarises the outcome.

    run.py [--all | --sample FILE | --nodes FILE] [--expect FILE] [--jobs N] [--timeout S]

Extracts the tests (extract.py), collects the interpreter-marked set as upstream runs it
on the CPU (`pytest -m interpreter --device cpu`, is_interpreter() True, TRITON_INTERPRET
unset so Tritium compiles every kernel), runs the chosen nodes in N pytest processes
(default 2: compiling is the cost and the machine has 2 cores), restarting a process after
a hang (per-test timeout) or a crash, and prints pass/fail/error/skip per test function
and the failure categories. With --expect FILE, every node id listed there must pass
(exit 1 otherwise): the regression check `make test` runs on the sample.

--every K runs every K-th collected node (a deterministic sample). Results go to
build/upstream/results.jsonl (one line per outcome) and summary.txt beside it.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import extract  # noqa: E402

TEST = "python/test/unit/language/test_core.py"
ORDER = {"passed": 0, "skipped": 1, "xfail": 1, "xpass": 2, "failed": 3, "error": 4, "hang": 5, "crash": 6}


def pytest_env(root, results, timeout):
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["TRITIUM_UPSTREAM_ROOT"] = root
    env["TRITIUM_UPSTREAM_RESULTS"] = results
    env["TRITIUM_UPSTREAM_TIMEOUT"] = str(timeout)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TRITON_CACHE_DIR"] = os.path.join(os.path.dirname(results) if results != os.devnull else root, "cache")
    return env


def pytest_cmd(extra):
    return [sys.executable, "-m", "pytest", "-p", "plugin", "-p", "no:cacheprovider", "-m", "interpreter",
            "--device", "cpu", "-q", "--tb=line", "-o", "addopts=", *extra]


def collect(root, env):
    out = subprocess.run(pytest_cmd(["--collect-only", TEST]), cwd=root, env=env, capture_output=True, text=True)
    nodes = [ln.strip() for ln in out.stdout.splitlines() if ln.startswith(TEST + "::")]
    if not nodes:
        sys.stderr.write(out.stdout[-3000:] + out.stderr[-3000:])
        raise SystemExit("upstream: collected no tests")
    return nodes


def read_results(path):
    """node -> (outcome, record); a node that started but has no outcome is 'running'."""
    res = {}
    if not os.path.exists(path):
        return res
    with open(path) as fh:
        for ln in fh:
            try:
                r = json.loads(ln)
            except ValueError:
                continue
            node, o = r["node"], r["outcome"]
            if o == "start":
                res.setdefault(node, ("running", r))
                continue
            prev = res.get(node)
            if prev is None or prev[0] == "running" or ORDER.get(o, 9) >= ORDER.get(prev[0], 9):
                res[node] = (o, r)
    return res


def run_shard(root, nodes, results, timeout, log):
    """Runs nodes in one pytest process, restarting after a hang or crash."""
    todo = list(nodes)
    procs_log = open(log, "a")
    while todo:
        argfile = results + ".args"
        with open(argfile, "w") as fh:
            fh.write("\n".join(todo) + "\n")
        p = subprocess.Popen(pytest_cmd(["@" + argfile]),
                             cwd=root, env=pytest_env(root, results, timeout), stdout=procs_log,
                             stderr=subprocess.STDOUT)
        yield p
        done = read_results(results)
        rest = [n for n in todo if n not in done]
        running = [n for n in todo if done.get(n, ("none",))[0] == "running"]
        if running and p.returncode != 70:  # died inside a test: a crash of that node
            with open(results, "a") as fh:
                for n in running:
                    fh.write(json.dumps({"node": n, "outcome": "crash", "msg": f"process exit {p.returncode}"}) + "\n")
        if p.returncode in (0, 1, 5) or (not running and len(rest) == len(todo)):
            # pytest finished its list, or could not start (usage error): nothing to resume
            with open(results, "a") as fh:
                for n in rest:
                    fh.write(json.dumps({"node": n, "outcome": "error", "msg": f"not run: pytest exit {p.returncode}"})
                             + "\n")
            rest = []
        todo = rest


def run_nodes(root, nodes, jobs, timeout, out_dir):
    shards = [nodes[i::jobs] for i in range(jobs)]
    gens = []
    for i, sh in enumerate(shards):
        if not sh:
            continue
        res = os.path.join(out_dir, f"results.{i}.jsonl")
        if os.path.exists(res):
            os.unlink(res)
        gens.append((run_shard(root, sh, res, timeout, os.path.join(out_dir, f"pytest.{i}.log")), res))
    live = []
    for g, res in gens:
        live.append((g, next(g), res))
    while live:
        time.sleep(0.5)
        nxt = []
        for g, p, res in live:
            if p.poll() is None:
                nxt.append((g, p, res))
                continue
            try:
                nxt.append((g, g.send(None), res))
            except StopIteration:
                pass
        live = nxt
    merged = {}
    for _, res in gens:
        merged.update(read_results(res))
    return merged


def category(outcome, rec):
    if outcome in ("hang", "crash"):
        return outcome
    exc, msg = rec.get("exc", ""), rec.get("msg", "")
    msg = re.sub(r"^\S+\.py:\d+:\d+: ", "", msg)  # a CompilationError's file:line:col
    exc = exc.rsplit(".", 1)[-1]
    text = f"{exc}: {msg}" if exc else msg
    if exc == "AssertionError" or re.search(r"Mismatched elements|Not equal to tolerance|Arrays are not", text):
        return "wrong result? " + re.sub(r"\d+", "N", text)[:90]
    text = re.sub(r"0x[0-9a-f]+", "X", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r"\(at [^)]*\)|\S+\.py:N", "", text)
    return text[:110]


def summarise(results, nodes):
    per_fn = collections.OrderedDict()
    cats = collections.Counter()
    examples = {}
    total = collections.Counter()
    for n in nodes:
        o, rec = results.get(n, ("not run", {}))
        fn = n.split("::", 1)[1].split("[", 1)[0]
        per_fn.setdefault(fn, collections.Counter())[o] += 1
        total[o] += 1
        if o not in ("passed", "skipped", "xfail"):
            c = f"[{o}] " + category(o, rec)
            cats[c] += 1
            examples.setdefault(c, n.split("::", 1)[1])
    cols = ["passed", "failed", "error", "skipped", "xfail", "hang", "crash", "not run"]
    lines = [f"{'test function':40s} " + " ".join(f"{c[:7]:>7s}" for c in cols)]
    for fn, c in per_fn.items():
        lines.append(f"{fn:40s} " + " ".join(f"{c[k]:7d}" for k in cols))
    lines.append(f"{'TOTAL':40s} " + " ".join(f"{total[k]:7d}" for k in cols))
    ran = sum(total[k] for k in cols if k not in ("skipped", "xfail"))
    lines.append(f"pass rate of non-skipped nodes: {total['passed']}/{ran} = "
                 f"{100.0 * total['passed'] / max(ran, 1):.1f}%")
    lines.append("")
    lines.append("failure categories (count, category, first node):")
    for c, k in cats.most_common():
        lines.append(f"{k:6d}  {c}\n        e.g. {examples[c]}")
    return "\n".join(lines), total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git-dir", default=os.environ.get("UPSTREAM_TRITON_GIT") or extract.DEFAULT_GIT)
    ap.add_argument("--commit", default=os.environ.get("UPSTREAM_TRITON_COMMIT") or extract.DEFAULT_COMMIT)
    ap.add_argument("--out", default=os.path.join(REPO, "build", "upstream"))
    ap.add_argument("--nodes", help="file of node ids to run (default: every interpreter-marked node)")
    ap.add_argument("--every", type=int, default=1, help="run every K-th collected node")
    ap.add_argument("--offset", type=int, default=0, help="starting at this node (with --every)")
    ap.add_argument("--expect", help="file of node ids that must pass")
    ap.add_argument("--write-passing", help="write the node ids that passed to this file")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("-k", dest="kexpr", help="only nodes whose id contains this text ('a or b': either)")
    ap.add_argument("--quiet", action="store_true", help="no per-function table (summary.txt has it)")
    a = ap.parse_args()
    if not os.path.isdir(a.git_dir):
        print(f"upstream: no upstream Triton git directory at {a.git_dir} (set UPSTREAM_TRITON_GIT): skipped")
        return 0
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    root = extract.extract(a.git_dir, a.commit, a.out)
    t0 = time.time()
    if a.nodes:
        with open(a.nodes) as fh:
            nodes = [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]
    else:
        nodes = collect(root, pytest_env(root, os.devnull, a.timeout))
        print(f"upstream: {len(nodes)} interpreter-marked nodes collected at {open(root + '/COMMIT').read()[:12]}")
        nodes = nodes[a.offset::a.every]
    if a.kexpr:
        words = [w.strip() for w in a.kexpr.split(" or ")]
        nodes = [n for n in nodes if any(w in n for w in words)]
    print(f"upstream: running {len(nodes)} nodes in {a.jobs} processes, {a.timeout:.0f} s per test", flush=True)
    shutil.rmtree(os.path.join(a.out, "cache"), ignore_errors=True)  # every run compiles afresh
    results = run_nodes(root, nodes, a.jobs, a.timeout, a.out)
    text, total = summarise(results, nodes)
    text += f"\n\nwall time {time.time() - t0:.0f} s"
    with open(os.path.join(a.out, "summary.txt"), "w") as fh:
        fh.write(text + "\n")
    with open(os.path.join(a.out, "results.jsonl"), "w") as fh:
        for n in nodes:
            o, rec = results.get(n, ("not run", {}))
            fh.write(json.dumps({"node": n, "outcome": o, "exc": rec.get("exc", ""), "msg": rec.get("msg", "")}) + "\n")
    if not a.quiet:
        print(text)
    else:
        print("\n".join(ln for ln in text.splitlines() if ln.startswith(("TOTAL", "pass rate"))))
    if a.write_passing:
        with open(a.write_passing, "w") as fh:
            fh.write(f"# upstream test_core.py nodes that pass on Tritium ({open(root + '/COMMIT').read()[:12]})\n")
            for n in nodes:
                if results.get(n, ("",))[0] == "passed":
                    fh.write(n + "\n")
    if a.expect:
        with open(a.expect) as fh:
            want = [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]
        bad = [n for n in want if results.get(n, ("not run",))[0] != "passed"]
        for n in bad:
            o, rec = results.get(n, ("not run", {}))
            print(f"REGRESSION: {n}: {o} {rec.get('exc', '')} {rec.get('msg', '')}")
        print(f"upstream: {len(want) - len(bad)} passed, {len(bad)} failed (of the expected-passing list)")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
