#!/usr/bin/env python3
"""browser_test.py — opens pages written by `proton-cli html` in headless Chromium.

Drives Debian's chromium over the DevTools protocol (--remote-debugging-pipe, Python
standard library only) and checks, per page: no console errors or uncaught exceptions,
the script ran (body[data-ready]), the icicle view, table, timeline (traces) and roofline
(when expected) are present and non-empty; hovering an icicle cell (real mouse events)
shows its details with the node's name; clicking the Name and Time table headers sorts
the rows; no text of the roofline (roof label, axis labels, point labels) reaches past
the chart's edges, no two point labels overlap and the roof line and its label lie inside
the plot area, also when every point is above the roof (boxes measured with getBBox);
the compiler remarks section shows the remark (:remarks); the header's kernel count is
the number of distinct kernel names in the tree (not of kernel nodes); then the same page
with JavaScript disabled still shows the table (and the remarks). A
full-page screenshot of each (taken before the mouse moves) goes to tests/out/<name>.png.

usage: browser_test.py OUTDIR PAGE.html[:timeline][:roofline][:remarks] ...
Exit status 0 when every page passes; prints one line per check.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


class Chrome:
    def __init__(self):
        exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if not exe:
            raise RuntimeError("chromium not found")
        self.profile = tempfile.mkdtemp(prefix="tritium-chrome-")
        r1, w1 = os.pipe()  # we write commands -> browser reads fd 3
        r2, w2 = os.pipe()  # browser writes fd 4 -> we read
        def setup():  # in the child: our pipe ends become fds 3 and 4, inheritable
            a, b = os.dup(r1), os.dup(w2)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-dev-shm-usage",
             "--user-data-dir=" + self.profile, "about:blank"],
            close_fds=False, preexec_fn=setup, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r1)
        os.close(w2)
        self.w = os.fdopen(w1, "wb", buffering=0)
        self.r = os.fdopen(r2, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = self.r.read(65536)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=20):
        self.next_id += 1
        mid = self.next_id
        m = {"id": mid, "method": method, "params": params or {}}
        if session:
            m["sessionId"] = session
        self.w.write(json.dumps(m).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            msg = self._read_message(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method, timeout=20):
        deadline = time.time() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def errors_in(events):
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: " + d.get("text", "") + " " + str(d.get("exception", {}).get("description", "")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append("log: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
    return out


CHECK_JS = """JSON.stringify({
  ready: document.body.getAttribute('data-ready'),
  flame: document.querySelectorAll('#flame .fl').length,
  rows: document.querySelectorAll('#nodes tbody tr').length,
  spans: document.querySelectorAll('#timeline svg rect[rx]').length,
  points: document.querySelectorAll('#roofline circle').length,
  cards: document.querySelectorAll('header .card').length,
  remarks: (document.querySelector('#remarks-section') || {innerText: ''}).innerText,
  injected: document.querySelectorAll('img, body > b, td b, .card b').length +
            document.querySelectorAll('script').length - 2,
  title: document.title})"""


# Text boxes of the roofline against the SVG's bounds, and point labels against each
# other; the header's kernel count against the distinct kernel names of the tree.
LAYOUT_JS = """(function () {
  var out = {clipped: [], overlaps: [], outside: [], timeline: [], labels: 0, kernels_card: null, kernels: 0};
  var svg = document.querySelector('#roofline svg');
  if (svg) {
    var W = svg.width.baseVal.value, H = svg.height.baseVal.value, boxes = [];
    Array.prototype.forEach.call(svg.querySelectorAll('text'), function (t) {
      if (t.style.display === 'none' || !t.textContent) return;
      var b = t.getBBox();
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > W + 0.5 || b.y + b.height > H + 0.5)
        out.clipped.push(t.textContent + ' [' + [b.x, b.y, b.width, b.height].map(Math.round) + ' in ' + W + 'x' + H + ']');
      if (t.classList.contains('pt-label')) boxes.push([t.textContent, b]);
    });
    out.labels = boxes.length;
    /* the roof line and its label inside the plot area (not over the axes' labels) */
    var plot = svg.querySelector('rect.plot').getBBox();
    [svg.querySelector('polyline.roof'), svg.querySelector('text.roof-label')].forEach(function (x) {
      var b = x.getBBox();
      if (b.x < plot.x - 1.5 || b.y < plot.y - 1.5 || b.x + b.width > plot.x + plot.width + 1.5 ||
          b.y + b.height > plot.y + plot.height + 1.5)
        out.outside.push((x.textContent || 'roof line') + ' [' + [b.x, b.y, b.width, b.height].map(Math.round) +
                         ' outside the plot ' + [plot.x, plot.y, plot.width, plot.height].map(Math.round) + ']');
    });
    for (var i = 0; i < boxes.length; i++)
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i][1], b = boxes[j][1];
        if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
          out.overlaps.push(boxes[i][0] + ' / ' + boxes[j][0]);
      }
  }
  Array.prototype.forEach.call(document.querySelectorAll('header .card'), function (c) {
    if (c.querySelector('.k').textContent === 'Kernels') out.kernels_card = c.querySelector('.v').textContent;
  });
  /* the timeline's tick labels: inside the chart, none over another */
  var tsvg = document.querySelector('#timeline svg');
  if (tsvg) {
    var tw = tsvg.width.baseVal.value, ticks = Array.prototype.map.call(tsvg.querySelectorAll('text.tick'),
      function (t) { return [t.textContent, t.getBBox()]; });
    ticks.forEach(function (a, i) {
      if (a[1].x < -0.5 || a[1].x + a[1].width > tw + 0.5) out.timeline.push('tick ' + a[0] + ' clipped');
      for (var j = i + 1; j < ticks.length; j++) {
        var b = ticks[j][1];
        if (a[1].x < b.x + b.width && b.x < a[1].x + a[1].width) out.timeline.push('ticks ' + a[0] + ' / ' + ticks[j][0] + ' overlap');
      }
    });
  }
  var rf = JSON.parse(document.getElementById('tritium-data').textContent).roofline;
  out.above = rf ? rf.points.filter(function (p) { return p.g > Math.min(rf.peakG, p.ai * rf.peakBW) * 1.0001; }).length : 0;
  out.measured = rf ? !!rf.measured : false;
  var hint = document.querySelector('#roofline p.hint');
  out.note = hint ? hint.textContent : '';
  var names = {};
  (function walk(n) {
    if (n.k === 'kernel') names[n.n] = 1;
    (n.ch || []).forEach(walk);
  })(JSON.parse(document.getElementById('tritium-data').textContent).tree);
  out.kernels = Object.keys(names).length;
  return JSON.stringify(out);
})()"""


def check_layout(c, s):
    """No clipped roofline text, no overlapping point labels, the right kernel count."""
    r = evaluate(c, s, LAYOUT_JS)
    problems = [f"roofline text clipped: {x}" for x in r["clipped"]]
    problems += [f"roofline labels overlap: {x}" for x in r["overlaps"]]
    problems += [f"roofline roof not in the plot: {x}" for x in r["outside"]]
    problems += [f"timeline {x}" for x in r["timeline"]]
    said = re.search(r"(\d+) points? (?:is|are) above the roof", r["note"])
    if (int(said.group(1)) if said else 0) != (0 if r["measured"] else r["above"]):
        problems.append(f"roofline note says {said.group(0) if said else 'nothing'} about points above the roof, "
                        f"{r['above']} are")
    if r["kernels_card"] is not None and r["kernels_card"] != str(r["kernels"]):
        problems.append(f"header says {r['kernels_card']} kernels, the tree has {r['kernels']} kernel names")
    return problems, r


def open_page(c, path, js=True):
    t = c.send("Target.createTarget", {"url": "about:blank"})
    s = c.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})["sessionId"]
    for m in ("Runtime.enable", "Log.enable", "Page.enable"):
        c.send(m, session=s)
    c.send("Emulation.setDeviceMetricsOverride",
           {"width": 1360, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
    if not js:
        c.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=s)
    c.events.clear()
    c.send("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=s)
    c.wait_event("Page.loadEventFired")
    time.sleep(0.3)
    res = c.send("Runtime.evaluate", {"expression": CHECK_JS, "returnByValue": True}, session=s)
    return s, t["targetId"], json.loads(res["result"]["value"])


# A flame cell wide enough to carry its name, preferably below ROOT, that is really the
# element at its own centre; scrolled into view. Returns its name and where to point.
FLAME_CELL_JS = """(function () {
  var cells = Array.prototype.filter.call(document.querySelectorAll('#flame .fl'), function (d) {
    return d.textContent && d.getBoundingClientRect().width > 30;
  });
  cells.sort(function (a, b) { return (a.style.top === '0px') - (b.style.top === '0px'); });
  for (var i = 0; i < cells.length; i++) {
    cells[i].scrollIntoView({block: 'center'});
    var r = cells[i].getBoundingClientRect(), x = r.left + Math.min(r.width / 2, 40), y = r.top + r.height / 2;
    if (document.elementFromPoint(x, y) === cells[i])
      return JSON.stringify({name: cells[i].textContent, x: x, y: y});
  }
  return 'null';
})()"""

TIP_JS = """JSON.stringify({shown: !document.getElementById('tip').hidden,
  title: (document.querySelector('#tip b') || {}).textContent || '',
  text: document.getElementById('tip').textContent})"""

# Where the header cell of column COL is on screen (scrolled into view).
HEADER_JS = """(function (col) {
  var th = document.querySelectorAll('#nodes thead th')[col];
  th.scrollIntoView({block: 'center'});
  var r = th.getBoundingClientRect();
  return JSON.stringify({x: r.left + r.width / 2, y: r.top + r.height / 2, text: th.textContent});
})(%d)"""

# Column COL of every body row: the text and the data-v attribute, and the header's class.
COLUMN_JS = """(function (col) {
  var rows = document.querySelectorAll('#nodes tbody tr');
  return JSON.stringify({cls: document.querySelectorAll('#nodes thead th')[col].className,
    cells: Array.prototype.map.call(rows, function (tr) {
      return [tr.cells[col].textContent, tr.cells[col].getAttribute('data-v')]; }),
    sorted: Array.prototype.map.call(rows, function (tr) { return tr.cells[col].textContent; })
      .sort(function (a, b) { return a.localeCompare(b); })});
})(%d)"""


def evaluate(c, s, expr):
    r = c.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=s)
    return json.loads(r["result"]["value"])


def mouse(c, s, kind, x, y):
    p = {"type": kind, "x": x, "y": y}
    if kind != "mouseMoved":
        p.update(button="left", clickCount=1)
    c.send("Input.dispatchMouseEvent", p, session=s)


def check_hover(c, s):
    """Points at a flame cell: the tooltip must show up with that node's name."""
    cell = evaluate(c, s, FLAME_CELL_JS)
    if not cell:
        return ["no flame cell to hover"], "-"
    mouse(c, s, "mouseMoved", cell["x"], cell["y"])
    time.sleep(0.1)
    tip = evaluate(c, s, TIP_JS)
    if not tip["shown"]:
        return [f"hovering {cell['name']!r} shows no details"], cell["name"]
    if tip["title"] != cell["name"] or "path:" not in tip["text"]:
        return [f"hover details of {cell['name']!r} read {tip['text'][:80]!r}"], cell["name"]
    return [], cell["name"]


def click_header(c, s, col):
    h = evaluate(c, s, HEADER_JS % col)
    mouse(c, s, "mousePressed", h["x"], h["y"])
    mouse(c, s, "mouseReleased", h["x"], h["y"])
    time.sleep(0.1)
    return h["text"]


def check_sorting(c, s):
    """Clicks the Name header (text: ascending) and the Time header (numbers: largest
    first, missing last): the rows must come out in that order, and move when they
    were not in it before."""
    problems = []
    before = evaluate(c, s, COLUMN_JS % 0)
    name = click_header(c, s, 0)
    after = evaluate(c, s, COLUMN_JS % 0)
    texts = [x[0] for x in after["cells"]]
    if texts != after["sorted"] or "asc" not in after["cls"]:
        problems.append(f"clicking {name!r} did not sort the rows by name")
    elif [x[0] for x in before["cells"]] == texts and before["sorted"] != [x[0] for x in before["cells"]]:
        problems.append(f"clicking {name!r} did not move any row")
    name = click_header(c, s, 3)
    vals = [x[1] for x in evaluate(c, s, COLUMN_JS % 3)["cells"]]
    nums = [float(v) for v in vals if v != ""]
    if vals[:len(nums)] != [v for v in vals if v != ""] or nums != sorted(nums, reverse=True):
        problems.append(f"clicking {name!r} did not sort the rows by time, largest first")
    return problems, texts != [x[0] for x in before["cells"]]


def screenshot(c, s, out):
    m = c.send("Page.getLayoutMetrics", session=s)
    h = int(min(m.get("cssContentSize", m.get("contentSize"))["height"], 6000))
    c.send("Emulation.setDeviceMetricsOverride",
           {"width": 1360, "height": max(h, 600), "deviceScaleFactor": 1, "mobile": False}, session=s)
    time.sleep(0.2)
    png = c.send("Page.captureScreenshot", {"format": "png"}, session=s)["data"]
    with open(out, "wb") as f:
        f.write(base64.b64decode(png))


def main():
    outdir, pages = sys.argv[1], sys.argv[2:]
    os.makedirs(outdir, exist_ok=True)
    c = Chrome()
    failed = 0
    try:
        for spec in pages:
            path, *want = spec.split(":")
            name = os.path.splitext(os.path.basename(path))[0]
            s, tid, r = open_page(c, path)
            errs = errors_in(c.events)
            problems = []
            if r["ready"] != "1":
                problems.append("script did not finish")
            if r["flame"] < 2:
                problems.append(f"icicle view has {r['flame']} boxes")
            if r["rows"] < 1:
                problems.append("table is empty")
            if r["cards"] < 5:
                problems.append("summary header incomplete")
            if "timeline" in want and r["spans"] < 1:
                problems.append("timeline is empty")
            if "roofline" in want and r["points"] < 1:
                problems.append("roofline has no points")
            if "remarks" in want and "guarded loads" not in r["remarks"]:
                problems.append("no compiler remark shown")
            if r["injected"]:
                problems.append(f"{r['injected']} elements injected from kernel names")
            problems += errs
            png = os.path.join(outdir, name + ".png")
            screenshot(c, s, png)
            p, layout = check_layout(c, s)
            problems += p
            p, hovered = check_hover(c, s)
            problems += p
            p, moved = check_sorting(c, s)
            problems += p
            problems += errors_in(c.events)
            c.send("Target.closeTarget", {"targetId": tid})
            s, tid, r2 = open_page(c, path, js=False)
            if r2["rows"] < 1:
                problems.append("without JavaScript the table is missing")
            if "remarks" in want and "guarded loads" not in r2["remarks"]:
                problems.append("without JavaScript the compiler remarks are missing")
            if r2["flame"] != 0:
                problems.append("without JavaScript the icicle view was drawn?")
            c.send("Target.closeTarget", {"targetId": tid})
            status = "ok" if not problems else "FAILED: " + "; ".join(problems)
            print(f"{name}: flame={r['flame']} rows={r['rows']} spans={r['spans']} "
                  f"points={r['points']} labels={layout['labels']} kernels={layout['kernels_card']} "
                  f"nojs_rows={r2['rows']} hover={hovered!r} "
                  f"sorted={'moved' if moved else 'kept'} screenshot={png} {status}")
            failed += bool(problems)
    finally:
        c.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
