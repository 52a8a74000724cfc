/* streamfat report: the page's script (embedded by cmake/embed_text.cmake). It draws the
 * charts from the JSON block "sf-data" (cli/report/report_html.c) on canvases and makes the
 * tables sortable; it fetches nothing.
 *
 * Series come as levels: level k is a flat array [min0, max0, min1, max1, ...] of columns
 * (counts and sums: [min0, max0, total0, ...], the total giving the column's mean), each
 * level a quarter as many columns as the one before; column j of n covers the buckets
 * floor(j * used / n) .. floor((j + 1) * used / n) - 1, a bucket being w ns from t0. A chart
 * takes the coarsest level that still has a column per pixel in view and draws, per
 * column, the band from min to max: a spike in any bucket stays visible at every zoom.
 * All time charts share one view (ns from t0): the wheel zooms, dragging pans,
 * double-click shows everything. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('sf-data').textContent);
  var SPAN = Math.max(D.used * D.w, D.end, 1);
  var view = { a: 0, b: SPAN };
  var charts = [];
  var tip = document.getElementById('tip');
  var pending = false;
  var PAD_L = 84, PAD_R = 12, PAD_T = 8, PAD_B = 22;
  var COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
                '#ff9da7', '#9c755f', '#bab0ac'];

  function pad2(n, w) { var s = String(n); while (s.length < (w || 2)) s = '0' + s; return s; }

  /* ns from t0 as UTC time of day with ms, and the offset from the start */
  function fmtAbs(ns) {
    var ms = D.t0 * 1000 + ns / 1e6;
    var d = new Date(ms);
    return d.getUTCFullYear() + '-' + pad2(d.getUTCMonth() + 1) + '-' + pad2(d.getUTCDate()) +
      ' ' + pad2(d.getUTCHours()) + ':' + pad2(d.getUTCMinutes()) + ':' +
      pad2(d.getUTCSeconds()) + '.' + pad2(d.getUTCMilliseconds(), 3) + ' UTC';
  }
  /* digits: decimals of the seconds (default: to the microsecond below 1 s, else ms) */
  function fmtRel(ns, digits) {
    var s = ns / 1e9;
    if (digits === undefined) digits = Math.abs(s) < 1 ? 6 : 3;
    if (Math.abs(s) >= 60) {
      var m = Math.floor(s / 60);
      return '+' + m + 'm' + (s - 60 * m).toFixed(Math.min(digits, 3)) + 's';
    }
    return '+' + s.toFixed(digits) + ' s';
  }
  function fmtNum(v) {
    if (v === null || v === undefined || isNaN(v)) return '-';
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + 'G';
    if (a >= 1e6) return (v / 1e6).toFixed(2) + 'M';
    if (a >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    if (a >= 100) return v.toFixed(0);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }

  /* 1-2-5 ticks from lo to hi, about n of them */
  function ticks(lo, hi, n) {
    var span = hi - lo;
    if (!(span > 0)) return [lo];
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    var step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
  }

  function levelOf(levels, px, stride) {
    var k = 0;
    for (var i = 0; i < levels.length; i++) {
      var ncol = levels[i].length / stride;
      if (ncol * (view.b - view.a) / SPAN >= px) k = i;
    }
    return k;
  }
  function colStart(j, ncol) { return Math.floor(j * D.used / ncol) * D.w; }

  /* Only the charts near the window are drawn (a page of 256 channels has 768): the others
   * are marked and drawn when they scroll into view. */
  var io = window.IntersectionObserver ? new window.IntersectionObserver(function (es) {
    for (var i = 0; i < es.length; i++) {
      var c = es[i].target.sfChart;
      c.visible = es[i].isIntersecting;
      if (c.visible && c.dirty) c.draw();
    }
  }, { rootMargin: '300px' }) : null;

  function redrawAll() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      for (var i = 0; i < charts.length; i++) {
        if (charts[i].visible) charts[i].draw();
        else charts[i].dirty = true;
      }
    });
  }
  function setView(a, b) {
    var min = Math.max(D.w * 4, 1000);
    if (b - a < min) { var c = (a + b) / 2; a = c - min / 2; b = c + min / 2; }
    if (b - a > SPAN) { a = 0; b = SPAN; }
    if (a < 0) { b -= a; a = 0; }
    if (b > SPAN) { a -= b - SPAN; b = SPAN; }
    view.a = a; view.b = b;
    redrawAll();
  }

  function showTip(ev, text) {
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = ev.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight) y = ev.clientY - tip.offsetHeight - 10;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.hidden = true; }

  /* A chart on element el. o.series: [{name, levels, scale, color}], o.unit, o.timeline */
  function Chart(el, o) {
    var self = this, cv = document.createElement('canvas'), drag = null;
    el.appendChild(cv);
    this.el = el; this.cv = cv; this.o = o;
    this.x = function (t) {
      return PAD_L + (t - view.a) / (view.b - view.a) * (cv.clientWidth - PAD_L - PAD_R);
    };
    this.t = function (x) {
      return view.a + (x - PAD_L) / (cv.clientWidth - PAD_L - PAD_R) * (view.b - view.a);
    };
    cv.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var r = cv.getBoundingClientRect(), t = self.t(ev.clientX - r.left);
      var f = ev.deltaY < 0 ? 0.8 : 1.25;
      setView(t - (t - view.a) * f, t + (view.b - t) * f);
    }, { passive: false });
    cv.addEventListener('mousedown', function (ev) {
      drag = { x: ev.clientX, a: view.a, b: view.b };
    });
    window.addEventListener('mouseup', function () { drag = null; });
    cv.addEventListener('mousemove', function (ev) {
      var r = cv.getBoundingClientRect();
      if (drag) {
        var dt = (ev.clientX - drag.x) / (cv.clientWidth - PAD_L - PAD_R) * (drag.b - drag.a);
        setView(drag.a - dt, drag.b - dt);
        return;
      }
      var text = self.hover(ev.clientX - r.left, ev.clientY - r.top);
      if (text) showTip(ev, text); else hideTip();
    });
    cv.addEventListener('mouseleave', hideTip);
    cv.addEventListener('dblclick', function () { setView(0, SPAN); });
    this.visible = !io;
    this.dirty = true;
    el.sfChart = this;
    if (io) io.observe(el);
    charts.push(this);
  }

  Chart.prototype.size = function () {
    var cv = this.cv, dpr = window.devicePixelRatio || 1;
    var w = Math.max(cv.clientWidth, 100), h = Math.max(cv.clientHeight, 60);
    if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) {
      cv.width = Math.round(w * dpr);
      cv.height = Math.round(h * dpr);
    }
    var g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    return { g: g, w: w, h: h };
  };

  /* the columns of a level in view: [{t0, t1, lo, hi, mean}] (scaled; mean: the column's
   * total over its buckets when the series has totals (stride 3), else null) */
  Chart.prototype.cols = function (levels, scale, px, stride) {
    stride = stride || 2;
    var lv = levels[levelOf(levels, px, stride)], n = lv.length / stride, out = [];
    var j0 = Math.max(0, Math.floor(view.a / SPAN * n) - 1);
    for (var j = j0; j < n; j++) {
      var t0 = colStart(j, n), t1 = colStart(j + 1, n);
      if (t0 > view.b) break;
      if (t1 < view.a) continue;
      var lo = lv[stride * j], hi = lv[stride * j + 1], mean = null;
      if (stride === 3 && hi !== null)
        mean = scale(lv[stride * j + 2] / Math.max(1, Math.round((t1 - t0) / D.w)));
      out.push({ t0: t0, t1: t1, lo: lo === null ? null : scale(lo),
                 hi: hi === null ? null : scale(hi), mean: mean });
    }
    return out;
  };

  Chart.prototype.shade = function (c, levels, color) {
    var px = c.w - PAD_L - PAD_R, cols = this.cols(levels, function (v) { return v; }, px);
    c.g.fillStyle = color;
    for (var i = 0; i < cols.length; i++) {
      if (cols[i].hi !== 1) continue;
      var x0 = Math.max(this.x(cols[i].t0), PAD_L), x1 = Math.min(this.x(cols[i].t1), c.w - PAD_R);
      c.g.fillRect(x0, PAD_T, Math.max(x1 - x0, 1.5), c.h - PAD_T - PAD_B);
    }
  };

  Chart.prototype.axes = function (c, ylo, yhi, unit) {
    var g = c.g, i, tk;
    g.strokeStyle = '#d6dbe1';
    g.fillStyle = '#5b6470';
    g.font = '11px system-ui, sans-serif';
    g.lineWidth = 1;
    g.textAlign = 'center';
    tk = ticks(view.a, view.b, Math.max(2, Math.floor((c.w - PAD_L) / 130)));
    var step = tk.length > 1 ? (tk[1] - tk[0]) / 1e9 : 1;
    var digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step) - 1e-9)));
    for (i = 0; i < tk.length; i++) {
      var x = this.x(tk[i]);
      if (x < PAD_L || x > c.w - PAD_R) continue;
      g.beginPath(); g.moveTo(x, PAD_T); g.lineTo(x, c.h - PAD_B); g.stroke();
      g.fillText(fmtRel(tk[i], digits), x, c.h - 6);
    }
    if (unit === null) return;
    g.textAlign = 'right';
    tk = ticks(ylo, yhi, 4);
    for (i = 0; i < tk.length; i++) {
      var y = this.y(c, tk[i], ylo, yhi);
      g.beginPath(); g.moveTo(PAD_L, y); g.lineTo(c.w - PAD_R, y); g.stroke();
      g.fillText(fmtNum(tk[i]), PAD_L - 4, y + 4);
    }
    g.save();
    g.translate(12, (c.h - PAD_B + PAD_T) / 2);
    g.rotate(-Math.PI / 2);
    g.textAlign = 'center';
    g.fillText(unit, 0, 0);
    g.restore();
  };
  Chart.prototype.y = function (c, v, lo, hi) {
    return c.h - PAD_B - (v - lo) / (hi - lo || 1) * (c.h - PAD_T - PAD_B);
  };

  Chart.prototype.draw = function () {
    this.dirty = false;
    if (this.o.timeline) { this.drawTimeline(); return; }
    var c = this.size(), o = this.o, px = c.w - PAD_L - PAD_R, i, k;
    var all = [], lo = o.min0 ? 0 : Infinity, hi = -Infinity;
    for (k = 0; k < o.series.length; k++) {
      var s = o.series[k], cols = this.cols(s.levels, s.scale, px, s.stride);
      all.push(cols);
      for (i = 0; i < cols.length; i++) {
        if (cols[i].hi === null) continue;
        if (cols[i].lo < lo) lo = cols[i].lo;
        if (cols[i].hi > hi) hi = cols[i].hi;
      }
    }
    if (!(hi > -Infinity)) { hi = 1; lo = 0; }
    if (lo === Infinity) lo = 0;
    if (hi <= lo) hi = lo + 1;
    hi += (hi - lo) * 0.05;
    this.shade(c, D.damage, 'rgba(120, 120, 120, 0.22)');
    this.shade(c, D.drop, 'rgba(225, 87, 89, 0.25)');
    this.axes(c, lo, hi, o.unit);
    this.lo = lo; this.hi = hi; this.all = all;
    var g = c.g;
    g.save();
    g.beginPath(); g.rect(PAD_L, 0, px, c.h); g.clip();
    for (k = 0; k < all.length; k++) {
      var cl = all[k], color = o.series[k].color;
      /* the band from min to max per column, then the mean (else the max) as a line */
      g.fillStyle = color;
      g.globalAlpha = 0.35;
      for (i = 0; i < cl.length; i++) {
        if (cl[i].hi === null) continue;
        var x0 = this.x(cl[i].t0), x1 = this.x(cl[i].t1);
        var y0 = this.y(c, cl[i].hi, lo, hi), y1 = this.y(c, cl[i].lo, lo, hi);
        g.fillRect(x0, y0, Math.max(x1 - x0, 1), Math.max(y1 - y0, 1));
      }
      g.globalAlpha = 1;
      g.strokeStyle = color;
      g.lineWidth = 1.25;
      g.beginPath();
      var open = false;
      for (i = 0; i < cl.length; i++) {
        if (cl[i].hi === null) { open = false; continue; }
        var xa = this.x(cl[i].t0), xb = this.x(cl[i].t1);
        var yv = this.y(c, cl[i].mean !== null ? cl[i].mean : cl[i].hi, lo, hi);
        if (open) g.lineTo(xa, yv); else g.moveTo(xa, yv);
        g.lineTo(xb, yv);
        open = true;
      }
      g.stroke();
    }
    g.restore();
  };

  Chart.prototype.hover = function (x, y) {
    if (this.o.timeline) return this.hoverTimeline(x, y);
    if (x < PAD_L || !this.all) return null;
    var t = this.t(x), lines = [], k, i;
    for (k = 0; k < this.all.length; k++) {
      var cl = this.all[k];
      for (i = 0; i < cl.length; i++) {
        if (t >= cl[i].t0 && t < cl[i].t1) {
          if (!lines.length)
            lines.push(fmtAbs(cl[i].t0) + '  (' + fmtRel(cl[i].t0) + ', ' +
                       fmtNum((cl[i].t1 - cl[i].t0) / 1e6) + ' ms)');
          var s = this.o.series[k];
          lines.push(s.name + ': ' + (cl[i].hi === null ? 'no data' :
            cl[i].lo === cl[i].hi ? s.fmt(cl[i].hi) :
            (cl[i].mean !== null ? 'mean ' + s.fmt(cl[i].mean) + ', ' : '') +
            'min ' + s.fmt(cl[i].lo) + ', max ' + s.fmt(cl[i].hi)) + ' ' + this.o.unit);
          break;
        }
      }
    }
    var dl = this.cols(D.drop, function (v) { return v; }, 1e9);
    for (i = 0; i < dl.length; i++)
      if (t >= dl[i].t0 && t < dl[i].t1 && dl[i].hi === 1) { lines.push('records lost here (DROP)'); break; }
    return lines.join('\n');
  };

  var LANES = ['file', 'checkpoint', 'trigger', 'annotation', 'drop', 'damage'];
  var LANE_NAME = { file: 'files', checkpoint: 'checkpoints', trigger: 'triggers',
                    annotation: 'annotations', drop: 'DROP', damage: 'damaged' };
  var LANE_COLOR = { file: '#4e79a7', checkpoint: '#8c96a0', trigger: '#e15759',
                     annotation: '#b07aa1', drop: '#e15759', damage: '#6b6b6b' };

  Chart.prototype.drawTimeline = function () {
    var c = this.size(), g = c.g, lh = (c.h - PAD_T - PAD_B) / LANES.length, i;
    this.axes(c, 0, 1, null);
    this.marks = [];
    g.font = '11px system-ui, sans-serif';
    g.textAlign = 'right';
    for (i = 0; i < LANES.length; i++) {
      g.fillStyle = '#5b6470';
      g.fillText(LANE_NAME[LANES[i]], PAD_L - 4, PAD_T + lh * (i + 0.65));
    }
    g.save();
    g.beginPath(); g.rect(PAD_L, 0, c.w - PAD_L - PAD_R, c.h); g.clip();
    for (i = 0; i < D.events.length; i++) {
      var e = D.events[i], lane = LANES.indexOf(e.k);
      if (lane < 0 || e.e < view.a || e.t > view.b) continue;
      var x0 = this.x(e.t), x1 = Math.max(this.x(e.e), x0 + 2), y = PAD_T + lh * lane;
      g.fillStyle = LANE_COLOR[e.k];
      if (e.k === 'drop' || e.k === 'damage') g.fillRect(x0, y + 2, x1 - x0, lh - 4);
      else if (e.k === 'file') g.fillRect(x0, y + 1, 2, lh - 2);
      else if (e.k === 'checkpoint') g.fillRect(x0, y + lh * 0.3, 1, lh * 0.4);
      else {
        g.beginPath();
        g.moveTo(x0, y + 2); g.lineTo(x0 + 5, y + lh - 2); g.lineTo(x0 - 5, y + lh - 2);
        g.closePath(); g.fill();
      }
      this.marks.push({ x0: x0 - 4, x1: x1 + 4, y0: y, y1: y + lh, e: e });
    }
    g.restore();
  };

  Chart.prototype.hoverTimeline = function (x, y) {
    var lines = [];
    for (var i = 0; this.marks && i < this.marks.length && lines.length < 8; i++) {
      var m = this.marks[i];
      if (x < m.x0 || x > m.x1 || y < m.y0 || y > m.y1) continue;
      var e = m.e, s = fmtAbs(e.t) + ' (' + fmtRel(e.t) + ') ' + e.k;
      if (e.k === 'drop') s += ': ' + e.c + ' records lost';
      if (e.k === 'checkpoint') s += ': block ' + e.c;
      if (e.x) s += ': ' + e.x;
      lines.push(s);
    }
    return lines.join('\n');
  };

  function div(cls, parent) {
    var d = document.createElement('div');
    d.className = cls;
    parent.appendChild(d);
    return d;
  }

  function init() {
    var i, el;
    el = document.querySelector('[data-chart="timeline"]');
    if (el) { el.className += ' tall'; new Chart(el, { timeline: true }); }
    var host = document.getElementById('chan-charts'), per = 1e9 / D.w;
    for (i = 0; i < D.chans.length; i++) {
      var ch = D.chans[i], color = COLORS[i % COLORS.length];
      if (!ch.can) continue;
      var box = div('chan', host), h = document.createElement('h3');
      h.textContent = ch.name + ' (channel ' + ch.n + ')';
      box.appendChild(h);
      new Chart(div('chart', box), { unit: 'frames/s', min0: true, series: [
        { name: ch.name, levels: ch.frames, color: color, fmt: fmtNum, stride: 3,
          scale: function (v) { return v * per; } }] });
      new Chart(div('chart', box), { unit: 'bus load %', min0: true, series: [
        { name: ch.name + ' at ' + fmtNum(ch.nominal) + '/' + fmtNum(ch.data) + ' bit/s' +
          (ch.assumed ? ' (assumed)' : ''), levels: ch.busy, color: color, stride: 3,
          fmt: function (v) { return v.toFixed(2); },
          scale: function (v) { return v / D.w * 100; } }] });
      new Chart(div('chart', box), { unit: 'error frames/s', min0: true, series: [
        { name: ch.name, levels: ch.err, color: '#e15759', fmt: fmtNum, stride: 3,
          scale: function (v) { return v * per; } }] });
    }
    var lat = document.querySelectorAll('[data-chart="latency"]');
    for (i = 0; i < lat.length; i++) {
      var n = Number(lat[i].getAttribute('data-ch'));
      for (var k = 0; k < D.chans.length; k++) {
        var c = D.chans[k];
        if (c.n !== n || !c.lat_min) continue;
        new Chart(lat[i], { unit: 'latency us', min0: false, series: [
          { name: 'lowest', levels: c.lat_min, color: '#59a14f',
            fmt: function (v) { return v.toFixed(3); }, scale: function (v) { return v / 1e3; } },
          { name: 'highest', levels: c.lat_max, color: '#e15759',
            fmt: function (v) { return v.toFixed(3); }, scale: function (v) { return v / 1e3; } }] });
      }
    }
    var sig = document.querySelectorAll('[data-chart="signal"]');
    for (i = 0; i < sig.length; i++) {
      var g = D.signals[Number(sig[i].getAttribute('data-i'))];
      if (!g) continue;
      var h3 = document.createElement('h3');
      h3.textContent = g.message + '.' + g.name + (g.unit ? ' (' + g.unit + ')' : '');
      sig[i].parentNode.insertBefore(h3, sig[i]);
      new Chart(sig[i], { unit: g.unit || g.name, min0: false, series: [
        { name: g.name, levels: band(g.lo, g.hi), color: COLORS[i % COLORS.length],
          fmt: function (v) { return String(Number(v.toPrecision(9))); },
          scale: function (v) { return v; } }] });
    }
    sortable();
    redrawAll();
    window.addEventListener('resize', redrawAll);
  }

  /* one series' levels from a signal's minima and maxima: column j is [lo_j, hi_j] */
  function band(lo, hi) {
    var out = [];
    for (var k = 0; k < lo.length; k++) {
      var a = lo[k], b = hi[k], lv = new Array(a.length);
      for (var j = 0; j < a.length; j += 2) { lv[j] = a[j]; lv[j + 1] = b[j + 1]; }
      out.push(lv);
    }
    return out;
  }

  /* click a column head: sort by it (numbers as numbers), again: the other way */
  function sortable() {
    var tables = document.querySelectorAll('table.sortable');
    for (var i = 0; i < tables.length; i++) {
      var ths = tables[i].querySelectorAll('thead th');
      for (var j = 0; j < ths.length; j++) ths[j].addEventListener('click', sorter(tables[i], j));
    }
  }
  function sorter(table, col) {
    return function (ev) {
      var th = ev.currentTarget, asc = !th.classList.contains('asc');
      var heads = table.querySelectorAll('thead th');
      for (var i = 0; i < heads.length; i++) heads[i].classList.remove('asc', 'desc');
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (p, q) {
        var a = p.cells[col].textContent, b = q.cells[col].textContent;
        var x = parseFloat(a), y = parseFloat(b), r;
        if (!isNaN(x) && !isNaN(y) && /^[-0-9.]/.test(a) && /^[-0-9.]/.test(b) &&
            !/[A-Fa-f]/.test(a + b)) r = x - y;
        else r = a < b ? -1 : a > b ? 1 : 0;
        return asc ? r : -r;
      });
      for (var k = 0; k < rows.length; k++) body.appendChild(rows[k]);
    };
  }

  /* #sf-selftest (t_report): the mouse as a person would use it, with synthetic events on
   * the first time chart: the wheel zooms in, a drag pans, hovering shows values,
   * double-click shows everything, a column head sorts; the verdicts go into the page
   * (a <pre id="sf-selftest">) for the test to read. */
  function drawNow() { for (var i = 0; i < charts.length; i++) charts[i].draw(); }
  function selftest() {
    var out = [], c = null, i;
    for (i = 0; i < charts.length && !c; i++) if (!charts[i].o.timeline) c = charts[i];
    c = c || charts[0];
    drawNow();
    var r = c.cv.getBoundingClientRect(), x = r.left + r.width * 0.6, y = r.top + r.height / 2;
    var span0 = view.b - view.a;
    c.cv.dispatchEvent(new WheelEvent('wheel', { deltaY: -100, clientX: x, clientY: y,
                                                 bubbles: true, cancelable: true }));
    out.push(view.b - view.a < span0 ? 'zoom ok' : 'zoom FAIL');
    var a1 = view.a;
    c.cv.dispatchEvent(new MouseEvent('mousedown', { clientX: x, clientY: y, bubbles: true }));
    c.cv.dispatchEvent(new MouseEvent('mousemove', { clientX: x - 40, clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mouseup', {}));
    out.push(view.a > a1 ? 'pan ok' : 'pan FAIL');
    drawNow();
    c.cv.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
    out.push(!tip.hidden && tip.textContent ? 'hover ok: ' + tip.textContent.split('\n').join(' | ')
                                            : 'hover FAIL');
    c.cv.dispatchEvent(new MouseEvent('mouseleave', {}));
    c.cv.dispatchEvent(new MouseEvent('dblclick', { clientX: x, clientY: y, bubbles: true }));
    out.push(view.a === 0 && view.b === SPAN ? 'reset ok' : 'reset FAIL');
    var t = document.getElementById('ids-table');
    if (t && t.tBodies[0].rows.length > 1) {
      var th = t.querySelectorAll('thead th')[2], rows, first, last;
      th.click();
      rows = t.tBodies[0].rows;
      first = Number(rows[0].cells[2].textContent);
      last = Number(rows[rows.length - 1].cells[2].textContent);
      th.click();
      rows = t.tBodies[0].rows;
      out.push(first <= last && Number(rows[0].cells[2].textContent) >= first &&
               Number(rows[0].cells[2].textContent) === last ? 'sort ok' : 'sort FAIL');
    }
    var pre = document.createElement('pre');
    pre.id = 'sf-selftest';
    pre.textContent = out.join('\n');
    document.body.appendChild(pre);
  }

  init();
  if (window.location.hash === '#sf-selftest') selftest();
})();
