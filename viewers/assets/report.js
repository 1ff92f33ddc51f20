/* report.js — behaviour of the page `proton-cli html` writes (inlined; no network).
 * Reads the JSON block #tritium-data and draws the icicle view, the timeline and the
 * roofline, and makes the server-rendered table sortable. Data only ever reaches the
 * DOM through textContent / setAttribute, never as markup. */
(function () {
  'use strict';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var data = JSON.parse(document.getElementById('tritium-data').textContent);
  var tip = document.getElementById('tip');

  /* ---- helpers ---- */
  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmtNs(ns) {
    if (ns === undefined || ns === null || isNaN(ns)) return '-';
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns.toFixed(0) + ' ns';
  }
  function fmtUs(us) { return fmtNs(us * 1e3); }
  function fmtTick(us, step) {  /* as few decimals as the tick step needs */
    var unit = step >= 1e6 ? [1e6, ' s'] : step >= 1e3 ? [1e3, ' ms'] : step >= 1 ? [1, ' us'] : [1e-3, ' ns'];
    var v = us / unit[0], s = step / unit[0], d = s >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(s)));
    return v.toFixed(d) + unit[1];
  }
  function fmtNum(v, d) {
    if (v === undefined || v === null || isNaN(v)) return '-';
    if (Math.abs(v) >= 1e6) return v.toExponential(3);
    return v.toFixed(d);
  }
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  var KIND_HUE = { root: 220, host: 255, kernel: 24, scope: 150 };
  function nodeColor(kind, name) {
    var h = hash(name), hue = KIND_HUE[kind] === undefined ? 200 : KIND_HUE[kind];
    if (kind === 'root') return 'hsl(220,14%,82%)';
    return 'hsl(' + (hue + (h % 28) - 14) + ',' + (62 + (h >> 5) % 20) + '%,' + (66 + (h >> 9) % 12) + '%)';
  }
  function showTip(ev, title, rows) {
    tip.textContent = '';
    var b = document.createElement('b');
    b.textContent = title;
    tip.appendChild(b);
    rows.forEach(function (r) {
      var d = document.createElement('div'), s = document.createElement('span');
      d.className = 'row';
      d.textContent = r[0] + ': ';
      s.textContent = r[1];
      d.appendChild(s);
      tip.appendChild(d);
    });
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14, w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 8) x = ev.clientX - w - 14;
    if (y + h > window.innerHeight - 8) y = ev.clientY - h - 14;
    tip.style.left = Math.max(4, x) + 'px';
    tip.style.top = Math.max(4, y) + 'px';
  }
  function hideTip() { tip.hidden = true; }

  /* ---- icicle ---- */
  var total = data.tree.t || 0;
  function value(n) {
    if (n.t !== undefined) return n.t;
    var s = 0;
    (n.ch || []).forEach(function (c) { s += value(c); });
    return s;
  }
  function setParents(n, p) {
    n.parent = p;
    (n.ch || []).forEach(function (c) { setParents(c, n); });
  }
  function pathOf(n) {
    var parts = [];
    for (var m = n; m; m = m.parent) parts.unshift(m.n);
    return parts.join(' > ');
  }
  function nodeTip(ev, n) {
    var rows = [['kind', n.k], ['time', fmtNs(n.t) + (total > 0 && n.t !== undefined ?
      '  (' + (n.t / total * 100).toFixed(1) + '% of total)' : '')]];
    if (n.c !== undefined) rows.push(['count', fmtNum(n.c, 0)]);
    if (n.c && n.t !== undefined) rows.push(['avg', fmtNs(n.t / n.c)]);
    if (n.f !== undefined) rows.push(['GFLOP/s', fmtNum(n.f, 2)]);
    if (n.b !== undefined) rows.push(['GB/s', fmtNum(n.b, 2)]);
    rows.push(['path', pathOf(n)]);
    showTip(ev, n.n, rows);
  }
  var flame = document.getElementById('flame');
  var focus = data.tree;
  function drawFlame() {
    if (!flame) return;
    flame.textContent = '';
    var W = flame.clientWidth || 800, ROW = 21, maxDepth = 0, count = 0;
    function box(n, x, w, depth, anc) {
      var d = document.createElement('div');
      d.className = 'fl' + (anc ? ' anc' : '');
      d.style.left = (x * W) + 'px';
      d.style.width = Math.max(1, w * W - 1) + 'px';
      if (w * W < 14) { d.style.padding = '0'; d.style.borderWidth = w * W < 3 ? '0' : '1px'; }
      d.style.top = (depth * ROW) + 'px';
      d.style.background = nodeColor(n.k, n.n);
      d.textContent = w * W > 30 ? n.n : '';
      d.addEventListener('mousemove', function (ev) { nodeTip(ev, n); });
      d.addEventListener('mouseleave', hideTip);
      d.addEventListener('click', function (ev) {
        ev.stopPropagation();
        focus = (n === focus && n.parent) ? n.parent : n;
        hideTip();
        drawFlame();
      });
      flame.appendChild(d);
      count++;
      if (depth > maxDepth) maxDepth = depth;
    }
    function lay(n, x, w, depth) {
      box(n, x, w, depth, false);
      var kids = n.ch || [], sum = 0, v = value(n);
      kids.forEach(function (c) { sum += value(c); });
      if (sum <= 0) return;
      var scale = (v > 0 && sum > v) ? w / sum : (v > 0 ? w / v : w / sum);
      var cx = x;
      kids.forEach(function (c) {
        var cw = value(c) * scale;
        if (cw * W >= 0.5 && depth < 200) lay(c, cx, cw, depth + 1);
        cx += cw;
      });
    }
    var anc = [];
    for (var m = focus.parent; m; m = m.parent) anc.unshift(m);
    anc.forEach(function (a, i) { box(a, 0, 1, i, true); });
    lay(focus, 0, 1, anc.length);
    flame.style.height = ((maxDepth + 1) * ROW + 2) + 'px';
    flame.setAttribute('data-nodes', String(count));
  }

  /* ---- table sorting ---- */
  function initTable() {
    var table = document.getElementById('nodes');
    if (!table) return;
    var ths = table.tHead.rows[0].cells, body = table.tBodies[0];
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener('click', function () {
        var text = th.getAttribute('data-type') === 'text';
        var asc = th.classList.contains('desc') || (!th.classList.contains('asc') && text);
        Array.prototype.forEach.call(ths, function (h) { h.classList.remove('asc', 'desc'); });
        th.classList.add(asc ? 'asc' : 'desc');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          if (text) {
            var s = x.textContent.localeCompare(y.textContent);
            return asc ? s : -s;
          }
          var u = x.getAttribute('data-v'), v = y.getAttribute('data-v');
          if (u === '' || v === '') return (u === '') - (v === '');
          var d = parseFloat(u) - parseFloat(v);
          return asc ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  /* ---- timeline ---- */
  var CAT = ['kernel', 'program', 'scope', 'host scope', 'other'];
  var CAT_COLOR = ['#3b7ddd', '#cfd6e2', null, '#8b6fd6', '#9aa5b8'];
  function spanColor(cat, name) {
    if (CAT_COLOR[cat]) return CAT_COLOR[cat];
    var h = hash(name);
    return 'hsl(' + (100 + h % 90) + ',55%,' + (52 + (h >> 8) % 14) + '%)';
  }
  function niceStep(range, n) {
    var raw = range / n, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
  }
  var tl = data.timeline, tlView = null;
  function drawTimeline() {
    var host = document.getElementById('timeline');
    if (!host || !tl) return;
    host.textContent = '';
    var threads = tl.threads.filter(function (t) { return t.s.length > 0; });
    threads.sort(function (a, b) {
      return a.proc < b.proc ? -1 : a.proc > b.proc ? 1 : a.sort - b.sort;
    });
    if (!tlView) tlView = [tl.t0, tl.t1 > tl.t0 ? tl.t1 : tl.t0 + 1];
    var W = host.clientWidth || 900, LABEL = 170, PW = W - LABEL - 10, LV = 15, AX = 22;
    var v0 = tlView[0], v1 = tlView[1], sx = PW / (v1 - v0), y = AX, drawn = 0;
    var layout = threads.map(function (t) {
      var depth = 0;
      t.s.forEach(function (s) { if (s[2] > depth) depth = s[2]; });
      var h = (Math.min(depth, 12) + 1) * LV + 8, row = { t: t, y: y, h: h };
      y += h;
      return row;
    });
    var svg = el('svg', { width: W, height: y + 4, 'class': 'timeline' }, host);
    var step = niceStep(v1 - v0, Math.max(2, Math.floor(PW / 110)));
    var tickRight = -1e9; /* right edge of the last tick label drawn */
    for (var tk = Math.ceil((v0 - tl.t0) / step) * step; tk <= v1 - tl.t0; tk += step) {
      var tx = LABEL + (tl.t0 + tk - v0) * sx;
      el('line', { x1: tx, x2: tx, y1: AX - 4, y2: y, 'class': 'gridline' }, svg);
      var end = tx + 60 > W;
      var tt = el('text', { x: end ? tx - 2 : tx + 2, y: 12, 'class': 'axis tick', 'text-anchor': end ? 'end' : 'start' }, svg);
      tt.textContent = fmtTick(tk, step);
      var tb = tt.getBBox();  /* the last one, pulled left of its tick, may meet the one before */
      if (tb.x < tickRight + 6) tt.remove();
      else tickRight = tb.x + tb.width;
    }
    var proc = null;
    layout.forEach(function (row, i) {
      if (i % 2 === 0) el('rect', { x: 0, y: row.y, width: W, height: row.h, fill: '#fafbfc' }, svg);
      if (row.t.proc !== proc) {
        proc = row.t.proc;
        el('text', { x: 4, y: row.y + 10, 'class': 'tl-proc' }, svg).textContent = proc.slice(0, 30);
      }
      el('text', { x: 4, y: row.y + 22, 'class': 'tl-label' }, svg).textContent = row.t.name.slice(0, 26);
      var g = el('g', {}, svg);
      row.t.s.forEach(function (s) {
        var x0 = LABEL + (s[0] - v0) * sx, w = s[1] * sx;
        if (x0 + w < LABEL || x0 > LABEL + PW || s[2] > 12) return;
        if (x0 < LABEL) { w -= LABEL - x0; x0 = LABEL; }
        if (x0 + w > LABEL + PW) w = LABEL + PW - x0;
        var r = el('rect', { x: x0, y: row.y + 4 + s[2] * LV, width: Math.max(w, 0.8),
          height: LV - 2, rx: 2, fill: spanColor(s[3], s[4]) }, g);
        r.addEventListener('mousemove', function (ev) {
          showTip(ev, s[4], [['kind', CAT[s[3]] || 'other'], ['start', fmtUs(s[0] - tl.t0)],
            ['duration', fmtUs(s[1])], ['thread', row.t.name + ' (' + row.t.proc + ')']]);
        });
        r.addEventListener('mouseleave', hideTip);
        drawn++;
        if (w > 46) {
          var label = s[4].slice(0, Math.floor((w - 6) / 6.3));
          el('text', { x: x0 + 3, y: row.y + 4 + s[2] * LV + 10, 'font-size': 10,
            fill: s[3] === 1 ? '#3a4253' : '#fff', 'pointer-events': 'none' }, g).textContent = label;
        }
      });
    });
    host.setAttribute('data-spans', String(drawn));
    /* drag to zoom, double-click to reset */
    var sel = null, start = 0;
    function tAt(ev) { return v0 + (ev.clientX - svg.getBoundingClientRect().left - LABEL) / sx; }
    svg.addEventListener('mousedown', function (ev) {
      start = tAt(ev);
      sel = el('rect', { x: ev.clientX - svg.getBoundingClientRect().left, y: AX - 4, width: 0,
        height: y - AX + 4, 'class': 'sel' }, svg);
    });
    svg.addEventListener('mousemove', function (ev) {
      if (!sel) return;
      var a = LABEL + (start - v0) * sx, b = ev.clientX - svg.getBoundingClientRect().left;
      sel.setAttribute('x', Math.min(a, b));
      sel.setAttribute('width', Math.abs(b - a));
    });
    svg.addEventListener('mouseup', function (ev) {
      if (!sel) return;
      var end = tAt(ev), lo = Math.min(start, end), hi = Math.max(start, end);
      sel = null;
      if ((hi - lo) * sx > 4) { tlView = [lo, hi]; hideTip(); drawTimeline(); }
      else svg.lastChild.remove();
    });
    svg.addEventListener('dblclick', function () { tlView = null; drawTimeline(); });
    if (tl.dropped > 0) {
      var p = document.createElement('p');
      p.className = 'hint';
      p.textContent = 'Timeline decimated: showing ' + (tl.total - tl.dropped) + ' of ' + tl.total +
        ' slices (the outermost and longest); the tree and the table cover all of them. ' +
        'Open the trace in ui.perfetto.dev for every slice.';
      host.appendChild(p);
    }
    var legend = document.createElement('div');
    legend.className = 'legend';
    [[0, 'kernel launch'], [1, 'program instance'], [2, 'in-kernel scope'], [3, 'host scope']].forEach(function (c) {
      var s = document.createElement('span'), i = document.createElement('i');
      i.style.background = c[0] === 2 ? 'hsl(140,55%,55%)' : CAT_COLOR[c[0]];
      s.appendChild(i);
      s.appendChild(document.createTextNode(c[1]));
      legend.appendChild(s);
    });
    host.appendChild(legend);
  }

  /* ---- roofline ---- */
  function drawRoofline() {
    var host = document.getElementById('roofline'), rf = data.roofline;
    if (!host || !rf) return;
    host.textContent = '';
    var W = Math.min(host.clientWidth || 760, 900), H = 400, L = 78, R = 20, T = 16, B = 44;
    var pts = rf.points, ridge = rf.peakBW > 0 ? rf.peakG / rf.peakBW : 1;
    var ais = pts.map(function (p) { return p.ai; }), gs = pts.map(function (p) { return p.g; });
    var x0 = Math.min(Math.min.apply(null, ais), ridge) / 4, x1 = Math.max(Math.max.apply(null, ais), ridge) * 4;
    /* the range holds the points and the flat roof, also when every point is above it
     * (static counts larger than what ran, or roofs measured on a busy machine) */
    var y0 = Math.min(rf.peakG, Math.min.apply(null, gs)) / 4, y1 = Math.max(rf.peakG, Math.max.apply(null, gs)) * 3;
    var lx0 = Math.log10(x0), lx1 = Math.log10(x1), ly0 = Math.log10(y0), ly1 = Math.log10(y1);
    function X(v) { return L + (Math.log10(v) - lx0) / (lx1 - lx0) * (W - L - R); }
    function Y(v) { return H - B - (Math.log10(v) - ly0) / (ly1 - ly0) * (H - T - B); }
    var svg = el('svg', { width: W, height: H, 'class': 'roofline' }, host);
    function pow10(e) { return e >= 0 && e < 7 ? String(Math.pow(10, e)) : e < 0 && e > -5 ? Math.pow(10, e).toFixed(-e) : '1e' + e; }
    for (var e = Math.ceil(lx0); e <= lx1; e++) {
      el('line', { x1: X(Math.pow(10, e)), x2: X(Math.pow(10, e)), y1: T, y2: H - B, 'class': 'gridline' }, svg);
      el('text', { x: X(Math.pow(10, e)), y: H - B + 14, 'class': 'axis', 'text-anchor': 'middle' }, svg).textContent = pow10(e);
    }
    for (e = Math.ceil(ly0); e <= ly1; e++) {
      el('line', { x1: L, x2: W - R, y1: Y(Math.pow(10, e)), y2: Y(Math.pow(10, e)), 'class': 'gridline' }, svg);
      el('text', { x: L - 5, y: Y(Math.pow(10, e)) + 3, 'class': 'axis', 'text-anchor': 'end' }, svg).textContent = pow10(e);
    }
    el('rect', { x: L, y: T, width: W - L - R, height: H - T - B, fill: 'none', stroke: '#d5d9e0', 'class': 'plot' }, svg);
    el('text', { x: L + (W - L - R) / 2 - 110, y: H - 8, 'class': 'axis' }, svg).textContent =
      'arithmetic intensity (FLOP/byte, log)';
    var yl = el('text', { x: 12, y: T + (H - T - B) / 2 + 40, 'class': 'axis',
      transform: 'rotate(-90 12 ' + (T + (H - T - B) / 2 + 40) + ')' }, svg);
    yl.textContent = 'GFLOP/s (log)';
    /* the sloped roof enters the plot at its left edge, or at its floor when it is lower */
    var r0 = x0 * rf.peakBW < y0 ? [y0 / rf.peakBW, y0] : [x0, Math.min(rf.peakG, x0 * rf.peakBW)];
    var roof = [r0, [ridge, rf.peakG], [x1, rf.peakG]];
    el('polyline', { points: roof.map(function (p) { return X(p[0]) + ',' + Y(p[1]); }).join(' '),
      fill: 'none', stroke: '#d0453a', 'stroke-width': 2, 'class': 'roof' }, svg);
    /* the roof label sits on the flat roof, right-aligned inside the plot; below the
     * line when there is no room above it */
    var rl = el('text', { x: W - R - 4, y: Y(rf.peakG) - 6, 'class': 'axis roof-label', fill: '#d0453a',
      'text-anchor': 'end' }, svg);
    rl.textContent = (rf.measured ? 'highest measured: ' : rf.type ? 'measured peak ' + rf.type + ' ' : 'peak ') +
      fmtNum(rf.peakG, 1) + ' GFLOP/s, ' + fmtNum(rf.peakBW, 1) + ' GB/s';
    var rb = rl.getBBox();
    if (rb.y < T + 1) rl.setAttribute('y', Y(rf.peakG) + rb.height + 4);
    if (rl.getBBox().x < L + 2) { rl.setAttribute('text-anchor', 'start'); rl.setAttribute('x', L + 4); }
    var n = 0, placed = [rl.getBBox()], hidden = 0, seen = {};
    function fits(b) {
      if (b.x < L + 1 || b.x + b.width > W - R - 1 || b.y < T + 1 || b.y + b.height > H - B - 1) return false;
      for (var i = 0; i < placed.length; i++) {
        var q = placed[i];
        if (b.x < q.x + q.width && q.x < b.x + b.width && b.y < q.y + q.height && q.y < b.y + b.height) return false;
      }
      return true;
    }
    pts.forEach(function (p) {
      var cx = X(p.ai), cy = Y(p.g);
      var c = el('circle', { cx: cx, cy: cy, r: 5.5, fill: nodeColor('kernel', p.n),
        stroke: '#7a3a10', 'stroke-width': 1 }, svg);
      c.addEventListener('mousemove', function (ev) {
        showTip(ev, p.n, [['GFLOP/s', fmtNum(p.g, 2)], ['FLOP/byte', fmtNum(p.ai, 3)],
          ['time', fmtNs(p.t)], ['bound', p.ai < ridge ? 'memory' : 'compute'], ['path', p.p]]);
      });
      c.addEventListener('mouseleave', hideTip);
      n++;
      /* one label per name and spot; the first place (right, left, above, below, then
       * the corners) where it stays inside the chart and clear of the other labels,
       * else none (the tooltip still names the point) */
      var key = p.n + '@' + Math.round(cx / 4) + ',' + Math.round(cy / 4);
      if (seen[key]) return;
      seen[key] = 1;
      var t = el('text', { 'font-size': 10.5, fill: '#394150', 'class': 'pt-label' }, svg);
      t.textContent = p.n.length > 28 ? p.n.slice(0, 27) + '\u2026' : p.n;
      var spots = [[cx + 8, cy + 4, 'start'], [cx - 8, cy + 4, 'end'], [cx, cy - 9, 'middle'], [cx, cy + 17, 'middle'],
        [cx - 4, cy + 17, 'end'], [cx - 4, cy - 9, 'end'], [cx + 4, cy + 17, 'start'], [cx + 4, cy - 9, 'start']];
      for (var i = 0; i < spots.length; i++) {
        t.setAttribute('x', spots[i][0]);
        t.setAttribute('y', spots[i][1]);
        t.setAttribute('text-anchor', spots[i][2]);
        var b = t.getBBox();
        if (fits(b)) { placed.push(b); return; }
      }
      t.style.display = 'none';
      hidden++;
    });
    host.setAttribute('data-points', String(n));
    var above = pts.filter(function (p) { return p.g > Math.min(rf.peakG, p.ai * rf.peakBW) * 1.0001; }).length;
    var note = document.createElement('p');
    note.className = 'hint';
    note.textContent = 'Roof: ' + rf.source + '. Ridge at ' + fmtNum(ridge, 2) + ' FLOP/byte.' +
      (!rf.measured && above > 0 ? ' ' + above + ' point' + (above > 1 ? 's are' : ' is') + ' above the roof: the static ' +
       'counts are larger than what ran, or the roofs were measured on a busy machine.' : '') +
      (hidden ? ' ' + hidden + ' point label' + (hidden > 1 ? 's' : '') + ' left out where they would overlap; ' +
       'hover a point for its name.' : '');
    host.appendChild(note);
  }

  setParents(data.tree, null);
  initTable();
  drawFlame();
  drawTimeline();
  drawRoofline();
  var pending = 0;
  window.addEventListener('resize', function () {
    clearTimeout(pending);
    pending = setTimeout(function () { drawFlame(); drawTimeline(); drawRoofline(); }, 150);
  });
  document.body.setAttribute('data-ready', '1');
})();
