// compare.js - two or more runs side by side: their disk, network, dirty/writeback and CPU charts
// overlaid, each run's x axis in seconds from its own start (t = 0), and the table of
// GET /api/v1/runs/compare beside them, with the numbers as the API gives them (only formatted:
// each cell carries its figure's name and run, data-figure and data-run).
"use strict";
var PL = window.PL || (window.PL = {});

PL.compare = (function () {
  var fmt = PL.fmt;
  var PALETTE = ["#3b82f6", "#f97316", "#10b981", "#e11d48", "#8b5cf6", "#eab308", "#06b6d4",
                 "#ec4899", "#84cc16", "#64748b"];
  // Each overlaid chart: per run, one line per series; a series is the machine's total (a _Total
  // instance or an object without instances), or with `sum` the sum over the instances.
  var CHARTS = [
    { id: "disk", kind: "bytes/s", series: [
      { object: "PhysicalDisk", instance: "_Total", counter: "Disk Read Bytes/sec", label: "read" },
      { object: "PhysicalDisk", instance: "_Total", counter: "Disk Write Bytes/sec", label: "write", dash: true }] },
    { id: "nic", kind: "bits/s", series: [
      { object: "Network Interface", sum: true, counter: "Bytes Received/sec", label: "rx", mul: 8 },
      { object: "Network Interface", sum: true, counter: "Bytes Sent/sec", label: "tx", mul: 8, dash: true }] },
    { id: "mem", kind: "bytes", series: [
      { object: "Memory", counter: "Dirty Bytes", label: "dirty" },
      { object: "Memory", counter: "Writeback Bytes", label: "writeback", dash: true }] },
    { id: "cpu", kind: "%", series: [
      { object: "Processor", instance: "_Total", counter: "% Processor Time", label: "cpu" }] },
  ];

  function parsePath(p) {
    var m = /^\\([^\\(]+)(?:\((.*)\))?\\([^\\]+)$/.exec(p);
    return m ? { object: m[1], instance: m[2] === undefined ? null : m[2], counter: m[3] } : null;
  }

  function patterns() {
    var out = [];
    CHARTS.forEach(function (c) {
      c.series.forEach(function (s) {
        var inst = s.sum ? "(*)" : s.instance ? "(" + s.instance + ")" : "";
        out.push("\\" + s.object + inst + "\\" + s.counter);
      });
    });
    return out;
  }

  // The run's window: from its start to its settled time (else its end, else now), in ms.
  function windowOf(rep) {
    var start = Date.parse(rep.start_utc);
    var end = Date.parse(rep.settled_utc || rep.end_utc || "") || Date.now();
    return [start, Math.max(end, start)];
  }

  // The values of series `s` in a /api/v1/data answer, one per timestamp (null: none).
  function valuesOf(ans, s) {
    var out = ans.timestamps.map(function () { return null; });
    ans.series.forEach(function (ser) {
      var p = parsePath(ser.path);
      if (!p || p.object !== s.object || p.counter !== s.counter) return;
      if (s.sum ? p.instance === "_Total" : p.instance !== (s.instance || null)) return;
      ser.values.forEach(function (v, j) {
        if (v == null) return;
        out[j] = (s.sum ? out[j] || 0 : 0) + v * (s.mul || 1);
      });
    });
    return out;
  }

  // One run's ticks, from its start: [{t: s from the start, values per chart and series}].
  async function load(rep, stepFor) {
    var w = windowOf(rep);
    var step = stepFor(w[1] - w[0]);
    // the tick that covers the window's end lies up to a step after it
    var p = patterns().map(function (c) { return "counter=" + encodeURIComponent(c); });
    p.push("from=" + (w[0] / 1000).toFixed(3), "to=" + ((w[1] + (step || 1) * 1000) / 1000).toFixed(3));
    if (step) p.push("step=" + step);
    var ans = await PL.api.json("/api/v1/data?" + p.join("&"));
    var keep = [];
    ans.timestamps.forEach(function (t, j) { if (t > w[0]) keep.push(j); });
    return {
      t: keep.map(function (j) { return (ans.timestamps[j] - w[0]) / 1000; }),
      charts: CHARTS.map(function (c) {
        return c.series.map(function (s) {
          var v = valuesOf(ans, s);
          return keep.map(function (j) { return v[j]; });
        });
      }),
    };
  }

  // uPlot data of chart k: the union of every run's seconds on x, each run's series on it (null
  // where a run has no tick; the lines span those).
  function overlay(runsData, k) {
    var xs = [];
    runsData.forEach(function (d) { xs = xs.concat(d.t); });
    xs = xs.sort(function (a, b) { return a - b; }).filter(function (x, i, a) { return !i || x !== a[i - 1]; });
    var cols = [];
    runsData.forEach(function (d) {
      d.charts[k].forEach(function (vals) {
        var col = xs.map(function () { return null; });
        d.t.forEach(function (t, j) { col[xs.indexOf(t)] = vals[j]; });
        cols.push(col);
      });
    });
    return [xs].concat(cols);
  }

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function secTicks(u, splits) {
    return splits.map(function (v) { return v == null ? "" : fmt.secs(v); });
  }

  function drawChart(c, k, reports, runsData) {
    var box = document.getElementById("cmp-" + c.id);
    if (box._plot) box._plot.destroy();
    box._plot = null;
    if (typeof window.uPlot !== "function") return;
    var series = [{ label: "s from start", value: function (u, v) { return v == null ? "" : fmt.secs(v); } }];
    reports.forEach(function (rep, i) {
      c.series.forEach(function (s) {
        series.push({
          label: "#" + rep.id + " " + s.label, stroke: PALETTE[i % PALETTE.length], width: 1.5,
          dash: s.dash ? [6, 3] : undefined, spanGaps: true, points: { show: false },
          value: function (u, v) { return fmt.value(c.kind, v); },
        });
      });
    });
    var axisColor = css("--fg-dim"), gridColor = css("--grid");
    var opts = {
      width: box.clientWidth || 800, height: 200, series: series,
      scales: {
        x: { time: false, range: function (u, min, max) { return [0, max > 0 ? max : 1]; } },
        y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.08 : 1]; } },
      },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor }, values: secTicks },
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor }, size: 80,
          values: fmt.axis(c.kind), incrs: c.kind === "bytes" || c.kind === "bytes/s" ? PL.charts.BYTE_INCRS : undefined },
      ],
      legend: { live: true },
      cursor: { sync: { key: "perflog-compare" }, points: { show: false } },
    };
    box._plot = new window.uPlot(opts, overlay(runsData, k), box);
    box.dataset.runs = reports.map(function (r) { return r.id; }).join(",");
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text != null) e.textContent = text;
    return e;
  }

  // A figure's value in its unit (docs/api.md: B, B/s, s, ms, %, count, "" for text).
  function show(unit, v) {
    if (v == null) return fmt.DASH;
    if (typeof v === "string") return v;
    if (unit === "B") return fmt.value("bytes", v);
    if (unit === "B/s") return fmt.value("bytes/s", v);
    if (unit === "s") return fmt.secs(v);
    if (unit === "ms") return fmt.value("", v) + " ms";
    if (unit === "%") return fmt.pct(v);
    return fmt.value("", v);
  }

  function renderTable(cmp) {
    var box = document.getElementById("compare");
    var tbl = document.getElementById("compare-table");
    tbl.textContent = "";
    var head = el("tr");
    head.appendChild(el("th", {}, "figure"));
    cmp.runs.forEach(function (rep, i) {
      var th = el("th", { "data-run": String(i), "data-run-id": String(rep.id) }, "#" + rep.id);
      th.style.borderBottom = "2px solid " + PALETTE[i % PALETTE.length];
      th.title = rep.label || rep.command || "";
      head.appendChild(th);
    });
    tbl.appendChild(head);
    cmp.figures.forEach(function (f) {
      var tr = el("tr");
      tr.appendChild(el("td", { title: f.name }, f.title));
      f.values.forEach(function (v, i) {
        var td = el("td", { "data-figure": f.name, "data-run": String(i), "data-unit": f.unit });
        td.appendChild(el("span", { "class": "val" }, show(f.unit, v)));
        if (i > 0 && f.ratios[i] != null)
          td.appendChild(el("span", { "class": "ratio" }, " \u00d7" + fmt.value("", f.ratios[i])));
        tr.appendChild(td);
      });
      tbl.appendChild(tr);
    });
    document.getElementById("compare-title").textContent = cmp.runs.map(function (r) { return "#" + r.id; }).join(" vs ");
    box.hidden = false;
  }

  // Show the runs `ids` compared; stepFor(span_ms) gives the data step for a run's window.
  async function show_(ids, stepFor) {
    var cmp = await PL.api.json("/api/v1/runs/compare?ids=" + ids.join(","));
    var runsData = await Promise.all(cmp.runs.map(function (rep) { return load(rep, stepFor); }));
    document.getElementById("charts").hidden = true;
    document.getElementById("compare-charts").hidden = false;
    renderTable(cmp);
    CHARTS.forEach(function (c, k) { drawChart(c, k, cmp.runs, runsData); });
    document.getElementById("compare").dataset.ready = ids.join(",");
    return cmp;
  }

  function hide() {
    document.getElementById("charts").hidden = false;
    document.getElementById("compare-charts").hidden = true;
    document.getElementById("compare").hidden = true;
    document.getElementById("compare").dataset.ready = "";
    CHARTS.forEach(function (c) {
      var box = document.getElementById("cmp-" + c.id);
      if (box._plot) box._plot.destroy();
      box._plot = null;
    });
  }

  function resize() {
    CHARTS.forEach(function (c) {
      var box = document.getElementById("cmp-" + c.id);
      if (box._plot) box._plot.setSize({ width: box.clientWidth, height: box._plot.height });
    });
  }

  return { show: show_, hide: hide, resize: resize, CHARTS: CHARTS };
})();
