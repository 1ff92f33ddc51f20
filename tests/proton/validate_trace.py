#!/usr/bin/env python3
"""validate_trace.py — checks Chrome-trace JSON files the way Perfetto reads them.

Rules (docs/formats.md §2, reference/profilers.md §4.2):
  * the file is a JSON object with a "traceEvents" list (or a bare list of events);
  * every event is an object with a known "ph", a pid and a tid;
  * every non-metadata event has a finite numeric "ts";
  * "X" events have a finite numeric "dur" >= 0, and on every (pid, tid) they nest
    properly: an event that starts inside another ends inside it;
  * "B"/"E" events balance per (pid, tid) and E never comes without its B;
  * "C" events carry only numeric args;
  * every "M" event has a name; process_name/thread_name carry args.name (a string),
    *_sort_index carry a numeric args.sort_index.

Use as a module (validate(obj) -> list of problems, empty when valid) or from the
command line: validate_trace.py FILE... (exit status 1 when any file has problems);
validate_trace.py --self-test checks the validator against broken traces.
Plain python3, no dependencies.
"""
import json
import math
import sys

KNOWN_PH = set("BEXiICbneSTpFstfPONDMVvRc()")
EPS_US = 1e-6  # timestamps are microseconds; allow float rounding, not real overlap


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_event(i, e, problems):
    if not isinstance(e, dict):
        problems.append(f"event {i}: not an object")
        return None
    ph = e.get("ph")
    if ph not in KNOWN_PH:
        problems.append(f"event {i}: unknown ph {ph!r}")
        return None
    if "pid" not in e or "tid" not in e:
        if ph != "M" or "pid" not in e:
            problems.append(f"event {i} ({ph}): missing pid/tid")
    if ph == "M":
        name = e.get("name")
        args = e.get("args", {})
        if not isinstance(name, str) or not name:
            problems.append(f"event {i}: metadata event without a name")
        elif name in ("process_name", "thread_name"):
            if not isinstance(args, dict) or not isinstance(args.get("name"), str):
                problems.append(f"event {i}: {name} without a string args.name")
        elif name in ("process_sort_index", "thread_sort_index"):
            if not isinstance(args, dict) or not _num(args.get("sort_index")):
                problems.append(f"event {i}: {name} without a numeric args.sort_index")
        return None
    if not _num(e.get("ts")):
        problems.append(f"event {i} ({ph}): ts is not a finite number: {e.get('ts')!r}")
        return None
    if ph == "X":
        if not _num(e.get("dur")):
            problems.append(f"event {i}: X without a numeric dur")
            return None
        if e["dur"] < 0:
            problems.append(f"event {i}: negative dur {e['dur']}")
            return None
    if ph == "C":
        args = e.get("args")
        if not isinstance(args, dict) or not all(_num(v) for v in args.values()):
            problems.append(f"event {i}: counter event with non-numeric args")
    return ph


def _check_nesting(track, spans, problems):
    """spans: (ts, end, index). X events on one track must form a laminar family."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    stack = []  # (end, index) of the events enclosing the current one
    for ts, end, idx in spans:
        while stack and ts >= stack[-1][0] - EPS_US:
            stack.pop()  # ended before this one starts
        if stack and end > stack[-1][0] + EPS_US:
            problems.append(
                f"track {track}: event {idx} [{ts}, {end}] overlaps event {stack[-1][1]} "
                f"ending at {stack[-1][0]} without nesting")
        stack.append((end, idx))


def validate(obj):
    """Returns a list of problems (strings); empty when the trace is valid."""
    problems = []
    if isinstance(obj, dict):
        events = obj.get("traceEvents")
        if not isinstance(events, list):
            return ["no traceEvents list"]
        unit = obj.get("displayTimeUnit")
        if unit is not None and unit not in ("ms", "ns"):
            problems.append(f"displayTimeUnit {unit!r} is neither 'ms' nor 'ns'")
    elif isinstance(obj, list):
        events = obj
    else:
        return ["not a JSON object or array"]
    spans = {}
    open_b = {}
    for i, e in enumerate(events):
        ph = _check_event(i, e, problems)
        if ph is None:
            continue
        track = (e.get("pid"), e.get("tid"))
        if ph == "X":
            spans.setdefault(track, []).append((e["ts"], e["ts"] + e["dur"], i))
        elif ph == "B":
            open_b.setdefault(track, []).append(i)
        elif ph == "E":
            if not open_b.get(track):
                problems.append(f"event {i}: E without B on track {track}")
            else:
                open_b[track].pop()
    for track, left in open_b.items():
        for i in left:
            problems.append(f"event {i}: B never ended on track {track}")
    for track, s in spans.items():
        _check_nesting(track, s, problems)
    return problems


def validate_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except (OSError, ValueError) as e:
        return [f"cannot read JSON: {e}"]
    return validate(obj)


def _self_test():
    ok = {"displayTimeUnit": "ns", "traceEvents": [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "p"}},
        {"name": "a", "ph": "X", "pid": 1, "tid": 0, "ts": 0, "dur": 10},
        {"name": "b", "ph": "X", "pid": 1, "tid": 0, "ts": 1, "dur": 2},
        {"name": "c", "ph": "X", "pid": 1, "tid": 0, "ts": 3, "dur": 7},
        {"name": "d", "ph": "X", "pid": 1, "tid": 0, "ts": 10, "dur": 0},
        {"name": "e", "ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 100},
        {"name": "c", "ph": "C", "pid": 1, "tid": 0, "ts": 1, "args": {"value": 3}},
        {"name": "B", "ph": "B", "pid": 1, "tid": 2, "ts": 1},
        {"name": "B", "ph": "E", "pid": 1, "tid": 2, "ts": 2},
    ]}
    assert validate(ok) == [], validate(ok)
    bad = [
        ({"traceEvents": [{"ph": "Q", "pid": 1, "tid": 1, "ts": 0}]}, "unknown ph"),
        ({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": "0", "dur": 1}]}, "ts is not"),
        ({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": -1}]}, "negative dur"),
        ({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0}]}, "without a numeric dur"),
        ({"traceEvents": [{"ph": "M", "pid": 1, "tid": 1, "args": {}}]}, "without a name"),
        ({"traceEvents": [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {}}]},
         "string args.name"),
        ({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
                          {"ph": "X", "pid": 1, "tid": 1, "ts": 3, "dur": 5}]}, "overlaps"),
        ({"traceEvents": [{"ph": "E", "pid": 1, "tid": 1, "ts": 0}]}, "E without B"),
        ({"traceEvents": [{"ph": "B", "pid": 1, "tid": 1, "ts": 0}]}, "never ended"),
        ({"traceEvents": [{"ph": "C", "pid": 1, "tid": 1, "ts": 0, "args": {"v": "x"}}]}, "non-numeric"),
        ({"displayTimeUnit": "s", "traceEvents": []}, "displayTimeUnit"),
        ({"events": []}, "no traceEvents"),
    ]
    for obj, what in bad:
        p = validate(obj)
        assert any(what in x for x in p), (what, p)
    print("validate_trace self-test: ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        _self_test()
        return 0
    if len(argv) < 2:
        print("usage: validate_trace.py FILE... | --self-test", file=sys.stderr)
        return 2
    bad = 0
    for path in argv[1:]:
        problems = validate_file(path)
        if problems:
            bad += 1
            print(f"{path}: {len(problems)} problem(s)")
            for p in problems[:20]:
                print(f"  {p}")
        else:
            print(f"{path}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
