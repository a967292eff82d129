// charts.js - the five charts: which counters each one shows, how they are drawn with uPlot (a
// heat strip for the CPUs, so one pegged core stands out as a red band), and the shading of a
// selected run (its window, and its settle tail in another colour) on every chart.
"use strict";
var PL = window.PL || (window.PL = {});

PL.charts = (function () {
  var fmt = PL.fmt;
  var available = typeof window.uPlot === "function";

  var SPECS = PL.SPECS;

  var PALETTE = ["#3b82f6", "#f97316", "#10b981", "#e11d48", "#8b5cf6", "#eab308", "#06b6d4",
                 "#ec4899", "#84cc16", "#64748b"];

  // "\Object(Instance)\Counter" -> {object, instance, counter}; instance null when there is none.
  function parsePath(p) {
    var m = /^\\([^\\(]+)(?:\((.*)\))?\\([^\\]+)$/.exec(p);
    return m ? { object: m[1], instance: m[2] === undefined ? null : m[2], counter: m[3] } : null;
  }

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function instanceOrder(a, b) {
    var na = /^\d+$/.test(a), nb = /^\d+$/.test(b);
    if (na && nb) return Number(a) - Number(b);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // The series of one chart in a data answer: [{path, label, style, instance}], in a fixed order
  // (by instance, then the spec's order), so colours stay with their device.
  function pick(spec, answer) {
    var out = [];
    answer.series.forEach(function (s, idx) {
      var p = parsePath(s.path);
      if (!p || p.instance === "_Total") return;
      spec.series.forEach(function (def, k) {
        if (def.object === p.object && def.counter === p.counter)
          out.push({ path: s.path, idx: idx, def: def, k: k, instance: p.instance });
      });
    });
    out.sort(function (a, b) {
      return instanceOrder(a.instance || "", b.instance || "") || a.k - b.k;
    });
    return out;
  }

  // Heat colour of a CPU share in [0, 100]: the theme's idle colour through amber to red.
  function heat(pct, idle) {
    if (pct == null) return null;
    var t = Math.max(0, Math.min(1, pct / 100));
    var stops = [idle, [245, 158, 11], [220, 38, 38]];
    var seg = t < 0.5 ? 0 : 1, f = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    var a = stops[seg], b = stops[seg + 1];
    return "rgb(" + Math.round(a[0] + (b[0] - a[0]) * f) + "," + Math.round(a[1] + (b[1] - a[1]) * f) +
      "," + Math.round(a[2] + (b[2] - a[2]) * f) + ")";
  }

  function rgb(hex) {
    var m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
    return m ? [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)] : [30, 41, 59];
  }

  // Draw the heat strip: one row per core (core 0 on top), one cell per timestamp.
  function drawHeat(u) {
    var ctx = u.ctx, xs = u.data[0], n = u.series.length - 1;
    var idle = rgb(css("--heat-idle"));
    if (!xs || !xs.length || n < 1) return;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    var step = u._plStep || 1;
    for (var i = 1; i <= n; i++) {
      var vals = u.data[i];
      var y0 = Math.round(u.valToPos(n - i + 1, "y", true)), y1 = Math.round(u.valToPos(n - i, "y", true));
      var h = Math.max(1, y1 - y0 - 1);
      for (var j = 0; j < xs.length; j++) {
        var c = heat(vals[j], idle);
        if (!c) continue;
        var next = j + 1 < xs.length ? xs[j + 1] : xs[j] + step;
        var x0 = Math.floor(u.valToPos(xs[j], "x", true));
        var x1 = Math.ceil(u.valToPos(next, "x", true));
        ctx.fillStyle = c;
        ctx.fillRect(x0, y0, Math.max(1, x1 - x0), h);
      }
    }
    ctx.restore();
  }

  // The run's window and settle tail as two boxes under the plot (so the lines stay on top),
  // placed at every draw from the x scale: they follow zooms, resizes and live scrolling.
  function placeShades(u) {
    var sh = u._plShade;
    if (!sh) return;
    [["run", sh.run], ["tail", sh.tail]].forEach(function (p) {
      var el = u._plShadeEls[p[0]], w = p[1];
      if (!w || w[1] <= w[0]) {
        el.hidden = true;
        return;
      }
      var width = u.under.clientWidth;
      var x0 = Math.max(0, Math.min(width, u.valToPos(w[0] / 1000, "x")));
      var x1 = Math.max(0, Math.min(width, u.valToPos(w[1] / 1000, "x")));
      el.hidden = x1 - x0 < 0.5;
      el.style.left = x0 + "px";
      el.style.width = (x1 - x0) + "px";
      el.dataset.fromMs = String(w[0]);
      el.dataset.toMs = String(w[1]);
    });
    placePhases(u, sh.phases || []);
  }

  // The verdict's phases (report.verdict and tail_verdict, docs/report.md) as a strip along the
  // bottom of the plot, one box per phase that named a limit, coloured by the limit.
  function placePhases(u, phases) {
    var els = u._plPhaseEls || (u._plPhaseEls = []);
    while (els.length < phases.length) {
      var e = document.createElement("div");
      u.under.appendChild(e);
      els.push(e);
    }
    var width = u.under.clientWidth;
    els.forEach(function (el, i) {
      var p = phases[i];
      if (!p) {
        el.hidden = true;
        el.dataset.limit = "";
        return;
      }
      var x0 = Math.max(0, Math.min(width, u.valToPos(p.from_ms / 1000, "x")));
      var x1 = Math.max(0, Math.min(width, u.valToPos(p.to_ms / 1000, "x")));
      el.className = "phase phase-" + p.limit;
      el.hidden = x1 - x0 < 0.5;
      el.style.left = x0 + "px";
      el.style.width = (x1 - x0) + "px";
      el.dataset.fromMs = String(p.from_ms);
      el.dataset.toMs = String(p.to_ms);
      el.dataset.limit = p.limit;
      el.dataset.instance = p.instance || "";
      el.title = p.limit + (p.instance ? " " + p.instance : "");
    });
  }

  function seriesOpts(spec, picked) {
    var colorOf = {}, next = 0;
    var out = [{}];
    picked.forEach(function (p) {
      var key = p.instance || p.def.label;
      if (!(key in colorOf)) colorOf[key] = PALETTE[next++ % PALETTE.length];
      var label = spec.heat ? "cpu " + p.instance
        : (p.instance ? p.instance + " " : "") + p.def.label;
      var kind = spec.kind;
      out.push({
        label: label,
        stroke: spec.heat ? "transparent" : colorOf[key],
        width: spec.heat ? 0 : 1.5,
        dash: p.def.dash ? [6, 3] : undefined,
        scale: p.def.right ? "y2" : "y",
        points: { show: false },
        paths: spec.heat ? function () { return null; } : undefined,
        value: function (u, v) { return fmt.value(kind, v); },
      });
    });
    return out;
  }

  function pad2(n) {
    return (n < 10 ? "0" : "") + n;
  }

  // Time ticks in 24-hour local time: seconds only when the ticks are less than a minute apart,
  // the date when they are a day apart or more.
  function timeTicks(u, splits, axisIdx, space, incr) {
    return splits.map(function (t) {
      var d = new Date(t * 1000);
      var hm = pad2(d.getHours()) + ":" + pad2(d.getMinutes());
      if (incr < 60) return hm + ":" + pad2(d.getSeconds());
      if (incr < 86400) return hm;
      return (d.getMonth() + 1) + "/" + d.getDate();
    });
  }

  // Ticks of byte axes step by 1, 2 or 5 times a power of ten of a binary unit (1024^k): 100, 200,
  // 500 MiB, 1, 2, 5 GiB. The labels (format.axis) are then whole numbers of the step's unit, so
  // an axis never reads 0.3 / 0.5 / 0.8 GiB from quarter steps rounded.
  var BYTE_INCRS = (function () {
    var out = [];
    for (var k = 0; k < 7; k++)
      [1, 2, 5, 10, 20, 50, 100, 200, 500].forEach(function (m) {
        out.push(m * Math.pow(1024, k));
      });
    return out;
  })();

  // An axis' tick labels, kept on the chart (u._plTicks[axis]) as uPlot draws them on the canvas:
  // the page's tests read the units there.
  function keepTicks(f) {
    return function (u, splits, axisIdx, space, incr) {
      var out = f(u, splits, axisIdx, space, incr);
      (u._plTicks || (u._plTicks = {}))[axisIdx] = out;
      return out;
    };
  }

  // The runs of the live view as labelled bands: PL.charts.bands, [{id, label, from, to}] (ms),
  // rebuilt at every draw from the x scale, so they scroll with the live data.
  function placeBands(u) {
    var host = u.under, old = host.querySelectorAll(".band");
    for (var i = 0; i < old.length; i++) old[i].remove();
    var width = host.clientWidth;
    (PL.charts.bands || []).forEach(function (b) {
      var x0 = Math.max(0, Math.min(width, u.valToPos(b.from / 1000, "x")));
      var x1 = Math.max(0, Math.min(width, u.valToPos(b.to / 1000, "x")));
      if (x1 - x0 < 0.5) return;
      var el = document.createElement("div");
      el.className = "band";
      el.dataset.runId = String(b.id);
      el.style.left = x0 + "px";
      el.style.width = (x1 - x0) + "px";
      var tag = document.createElement("span");
      tag.textContent = b.label;
      el.appendChild(tag);
      host.appendChild(el);
    });
  }

  // Build (or rebuild) the uPlot of `spec` in its box for the series `picked`.
  function build(spec, picked, getRange, onSelect) {
    var box = document.getElementById("chart-" + spec.id);
    var old = box.querySelector(".uplot");
    if (old && box._plot) box._plot.destroy();
    var axisColor = css("--fg-dim"), gridColor = css("--grid");
    var n = picked.length;
    var yAxis = {
      scale: "y", stroke: axisColor, grid: { stroke: gridColor, width: 1 },
      ticks: { stroke: gridColor }, size: 80, values: keepTicks(fmt.axis(spec.kind)),
    };
    if (spec.kind === "bytes" || spec.kind === "bytes/s") yAxis.incrs = BYTE_INCRS;
    if (spec.heat) {
      yAxis.splits = function () {
        var s = [];
        for (var i = 0; i < n; i++) s.push(n - i - 0.5);
        return s;
      };
      yAxis.values = keepTicks(function (u, splits) {
        return splits.map(function (v) { return "cpu " + picked[Math.round(n - v - 0.5)].instance; });
      });
      yAxis.grid = { show: false };
    }
    var axes = [
      { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor },
        values: keepTicks(timeTicks) },
      yAxis,
    ];
    var scales = {
      x: { time: true, range: function () { var r = getRange(); return [r[0] / 1000, r[1] / 1000]; } },
      y: spec.heat ? { range: [0, Math.max(1, n)] }
        : { range: function (u, min, max) { return [0, max > 0 ? max * 1.08 : 1]; } },
    };
    if (spec.series.some(function (s) { return s.right; })) {
      scales.y2 = { range: function (u, min, max) { return [0, max > 0 ? max * 1.08 : 1]; } };
      axes.push({ scale: "y2", side: 1, stroke: axisColor, grid: { show: false }, size: 80,
                  values: keepTicks(fmt.axis(spec.kind)), incrs: BYTE_INCRS });
    }
    var width = box.clientWidth || 800;
    var height = spec.heat ? Math.max(90, 24 * n + 50) : 200;
    var opts = {
      width: width, height: height, series: seriesOpts(spec, picked), axes: axes, scales: scales,
      // the legend's markers are short lines in the series' own style (style.css), so "write"
      // reads as the dashed line and "read" as the solid one
      legend: { live: true, markers: { width: 2, fill: "transparent",
        dash: function (u, i) { return u.series[i].dash ? "dashed" : "solid"; } } },
      cursor: { sync: { key: "perflog" }, drag: { x: true, y: false, setScale: false }, points: { show: !spec.heat } },
      hooks: {
        draw: [placeShades, placeBands],
        setSelect: [function (u) {
          if (u.select.width > 2) {
            onSelect(u.posToVal(u.select.left, "x") * 1000,
                     u.posToVal(u.select.left + u.select.width, "x") * 1000);
          }
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        }],
      },
    };
    if (spec.heat) opts.hooks.draw = [drawHeat, placeShades, placeBands];
    var xsEmpty = [[]];
    for (var i = 0; i < n; i++) xsEmpty.push([]);
    var u = new window.uPlot(opts, xsEmpty, box);
    u._plShadeEls = {};
    ["run", "tail"].forEach(function (k) {
      var el = document.createElement("div");
      el.className = "shade " + k;
      el.hidden = true;
      // under the lines of a line chart; over the opaque cells of the heat strip
      (spec.heat ? u.over : u.under).appendChild(el);
      u._plShadeEls[k] = el;
    });
    box._plot = u;
    box._plPaths = picked.map(function (p) { return p.path; }).join("\n");
    return u;
  }

  // Without uPlot: each box lists its series' newest values instead of a chart.
  function showLatest(spec, picked, answerSeries) {
    var box = document.getElementById("chart-" + spec.id);
    var list = box.querySelector(".latest");
    if (!list) {
      list = document.createElement("ul");
      list.className = "latest";
      box.appendChild(list);
    }
    list.textContent = "";
    picked.forEach(function (p) {
      // the newest tick's value: a device gone since has none ("—"), not its last old one
      var vals = answerSeries[p.path] || [];
      var v = vals.length ? vals[vals.length - 1] : null;
      var li = document.createElement("li"), name = document.createElement("span");
      var b = document.createElement("b");
      name.textContent = spec.heat ? "cpu " + p.instance : (p.instance ? p.instance + " " : "") + p.def.label;
      b.textContent = fmt.value(spec.kind, v == null ? null : v * (p.def.mul || 1));
      li.appendChild(name);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(b);
      list.appendChild(li);
    });
  }

  // The uPlot data of `picked`: seconds on x, values times the spec's factor, and a null point
  // after the last sample before a gap (a daemon that was stopped), so no line bridges the gap and
  // no heat cell stretches over it.
  function withGaps(d, picked) {
    var ts = d.ts, gap = d.stepMs * 2.5;
    var xs = [], cols = picked.map(function () { return []; });
    for (var j = 0; j < ts.length; j++) {
      if (j && ts[j] - ts[j - 1] > gap) {
        xs.push((ts[j - 1] + d.stepMs) / 1000);
        cols.forEach(function (c) { c.push(null); });
      }
      xs.push(ts[j] / 1000);
      picked.forEach(function (p, k) {
        var v = (d.series[p.path] || [])[j];
        cols[k].push(v == null ? null : v * (p.def.mul || 1));
      });
    }
    return [xs].concat(cols);
  }

  // Put the data `d` ({ts: [ms], series: {path: values}, stepMs}) on every chart, rebuilding a chart whose
  // set of series changed. `getRange` gives the x range [from_ms, to_ms] to show.
  function update(answerPaths, d, getRange, onSelect) {
    var fake = { series: answerPaths.map(function (p) { return { path: p }; }) };
    SPECS.forEach(function (spec) {
      var picked = pick(spec, fake);
      var box = document.getElementById("chart-" + spec.id);
      if (!available) {
        showLatest(spec, picked, d.series);
        return;
      }
      var key = picked.map(function (p) { return p.path; }).join("\n");
      var u = box._plot;
      if (!u || box._plPaths !== key) u = build(spec, picked, getRange, onSelect);
      var data = withGaps(d, picked);
      var xs = data[0];
      u._plStep = d.stepMs / 1000;
      u._plShade = PL.charts.shade;
      u.setData(data);
      box.dataset.points = String(xs.length);
      box.dataset.series = String(picked.length);
    });
  }

  // Shade a run on every chart: {run: [from_ms, to_ms], tail: [from_ms, to_ms] or null, phases:
  // [{from_ms, to_ms, limit, instance}]}, or null.
  function setShade(sh) {
    PL.charts.shade = sh;
    SPECS.forEach(function (spec) {
      var u = document.getElementById("chart-" + spec.id)._plot;
      if (u) {
        u._plShade = sh;
        if (sh) placeShades(u);
        else {
          Object.keys(u._plShadeEls).forEach(function (k) { u._plShadeEls[k].hidden = true; });
          placePhases(u, []);
        }
      }
    });
  }

  // Mark runs on every chart (the live view): [{id, label, from, to}], or [] for none.
  function setBands(list) {
    PL.charts.bands = list;
    SPECS.forEach(function (spec) {
      var u = document.getElementById("chart-" + spec.id)._plot;
      if (u) placeBands(u);
    });
  }

  // Redraw every chart at its box's width (window resize) or from scratch (theme change).
  function resize() {
    SPECS.forEach(function (spec) {
      var box = document.getElementById("chart-" + spec.id);
      if (box._plot) box._plot.setSize({ width: box.clientWidth, height: box._plot.height });
    });
  }

  function rebuildAll() {
    SPECS.forEach(function (spec) {
      var box = document.getElementById("chart-" + spec.id);
      if (box._plot) {
        box._plot.destroy();
        box._plot = null;
        box._plPaths = null;
      }
    });
  }

  return { available: available, update: update, setShade: setShade,
           resize: resize, rebuildAll: rebuildAll, shade: null, SPECS: SPECS,
           setBands: setBands, bands: [],
           BYTE_INCRS: BYTE_INCRS };
})();
