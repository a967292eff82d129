// runs.js - the list of copy runs and the report of the selected one, with the numbers exactly as
// GET /api/v1/runs/{id} gives them (only formatted: each value's element carries its key in the
// report, data-key, so a reader, or a test, can tell which number is which).
"use strict";
var PL = window.PL || (window.PL = {});

PL.runs = (function () {
  var fmt = PL.fmt;
  var selected = null; // the selected run's JSON (with its report)

  // The report fields shown, in order: [label, key path in the report, kind].
  var FIELDS = [
    ["status", "status", "text"],
    ["limit", "verdict.limit", "text"],
    ["limit instance", "verdict.instance", "text"],
    ["limit utilisation", "verdict.utilisation", "share"],
    ["tail limit", "tail_verdict.limit", "text"],
    ["duration", "duration_s", "s"],
    ["durable throughput", "throughput.durable", "bytes/s"],
    ["returned throughput", "throughput.returned", "bytes/s"],
    ["claimed throughput", "tool.claimed_bytes_per_s", "bytes/s"],
    ["tool", "tool.name", "text"],
    ["cache-served reads", "process.cache_served_read_pct", "%"],
    ["dirty at exit", "memory.dirty_bytes_at_end", "bytes"],
    ["settle tail", "tail_s", "s"],
    ["written back in the tail", "memory.writeback_tail_bytes", "bytes"],
    ["payload on disk at exit", "payload.on_disk_at_end_pct", "%"],
    ["write amplification", "payload.write_amplification", "x"],
    ["CPU average", "cpu.avg_pct", "%"],
    ["busiest core", "cpu.busiest.instance", "text"],
    ["busiest core average", "cpu.busiest.avg_pct", "%"],
    ["busiest core kernel share", "cpu.busiest.privileged_pct", "%"],
  ];
  var DISK_COLS = [["device", "instance", "text"], ["written", "write_bytes", "bytes"],
                   ["in the tail", "tail_write_bytes", "bytes"], ["avg write", "avg_write_bytes_per_s", "bytes/s"],
                   ["peak write", "peak_write_bytes_per_s", "bytes/s"], ["read", "read_bytes", "bytes"],
                   ["busy", "busy_pct", "%"]];
  // The run's own processes (the report lists the busiest first); at most PROCS_SHOWN rows.
  var PROC_COLS = [["process", "instance", "text"], ["read", "io_read_bytes", "bytes"],
                   ["from storage", "storage_read_bytes", "bytes"], ["written", "io_write_bytes", "bytes"],
                   ["CPU", "cpu_s", "s"]];
  var PROCS_SHOWN = 8;

  function get(obj, path) {
    return path.split(".").reduce(function (o, k) { return o == null ? null : o[k]; }, obj);
  }

  function show(kind, v) {
    if (v == null) return fmt.DASH;
    if (kind === "text") return String(v);
    if (kind === "s") return fmt.secs(v);
    if (kind === "share") return fmt.value("%", 100 * v);
    if (kind === "x") return fmt.known(v) ? (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + " \u00d7" : fmt.DASH;
    return fmt.value(kind, v);
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text != null) e.textContent = text;
    return e;
  }

  function label(r) {
    return "#" + r.id + " " + (r.label || r.command || "run");
  }

  // The runs ticked for a comparison (ids), kept across the list's reloads.
  var picked = [];

  function renderList(runs, onPick, onTick) {
    var ul = document.getElementById("runs");
    ul.textContent = "";
    if (!runs.length) {
      ul.appendChild(el("li", { "class": "empty" }, "No runs yet: start one with perflog run -- CMD"));
      return;
    }
    runs.forEach(function (r) {
      var li = el("li");
      var b = el("button", { type: "button", "data-run-id": String(r.id), "class": "run-item" });
      if (selected && selected.id === r.id) b.classList.add("active");
      b.appendChild(el("span", { "class": "run-label" }, label(r)));
      var dur = r.end_ms && r.start_ms ? fmt.secs((r.end_ms - r.start_ms) / 1000) : "\u2026";
      b.appendChild(el("span", { "class": "run-meta" },
        fmt.time(r.start_ms) + " \u00b7 " + dur + " \u00b7 " + r.status +
        (r.verdict ? " \u00b7 " + r.verdict.limit + (r.verdict.instance ? " " + r.verdict.instance : "") : "")));
      b.addEventListener("click", function () { onPick(r.id); });
      var box = el("input", { type: "checkbox", "class": "run-pick", "data-run-id": String(r.id),
                              title: "compare this run", "aria-label": "compare run #" + r.id });
      box.checked = picked.indexOf(r.id) >= 0;
      // only a run with its report can be compared
      box.disabled = ["settled", "interrupted", "failed"].indexOf(r.status) < 0;
      box.addEventListener("change", function () {
        picked = picked.filter(function (id) { return id !== r.id; });
        if (box.checked) picked.push(r.id);
        if (onTick) onTick(picked.slice());
      });
      li.appendChild(box);
      li.appendChild(b);
      ul.appendChild(li);
    });
  }

  function renderReport(run) {
    var box = document.getElementById("report");
    var rep = run.report;
    box.hidden = false;
    box.dataset.runId = String(run.id);
    document.getElementById("report-title").textContent = label(run);
    var dl = document.getElementById("report-fields");
    dl.textContent = "";
    var tbl = document.getElementById("report-disks");
    tbl.textContent = "";
    var ptbl = document.getElementById("report-procs");
    ptbl.textContent = "";
    if (!rep) {
      dl.appendChild(el("dt", {}, "status"));
      dl.appendChild(el("dd", { "data-key": "status" }, run.status));
      dl.appendChild(el("dd", { "class": "wait" },
        "The report is made when the run has settled (dirty and writeback data back to their level at the start)."));
      return;
    }
    FIELDS.forEach(function (f) {
      dl.appendChild(el("dt", {}, f[0]));
      dl.appendChild(el("dd", { "data-key": f[1], "data-kind": f[2] }, show(f[2], get(rep, f[1]))));
    });
    table(tbl, DISK_COLS, "disks", rep.disks || []);
    table(ptbl, PROC_COLS, "processes", (rep.processes || []).slice(0, PROCS_SHOWN));
    if (rep.processes_followed > PROCS_SHOWN)
      ptbl.appendChild(el("caption", {}, PROCS_SHOWN + " busiest of " + rep.processes_followed + " processes"));
  }

  // One row per item of the report's array `key`, one cell per column.
  function table(tbl, cols, key, items) {
    if (!items.length) return;
    var head = el("tr");
    cols.forEach(function (c) { head.appendChild(el("th", {}, c[0])); });
    tbl.appendChild(head);
    items.forEach(function (d, i) {
      var tr = el("tr");
      cols.forEach(function (c) {
        tr.appendChild(el("td", { "data-key": key + "." + i + "." + c[1], "data-kind": c[2] }, show(c[2], d[c[1]])));
      });
      tbl.appendChild(tr);
    });
  }

  // The windows to shade: the run [start, end] and its tail [end, settled]; an open end is now.
  // With them the verdict's phases that named a limit, of the run and of the tail.
  function windows(run, nowMs) {
    var end = run.end_ms != null ? run.end_ms : nowMs;
    var settled = run.settled_ms != null ? run.settled_ms : (run.end_ms != null ? nowMs : null);
    var rep = run.report || {}, phases = [];
    [rep.verdict, rep.tail_verdict].forEach(function (v) {
      ((v && v.phases) || []).forEach(function (p) { if (p.limit !== "none") phases.push(p); });
    });
    return { run: [run.start_ms, end], tail: settled != null && settled > end ? [end, settled] : null,
             phases: phases };
  }

  function setSelected(run) {
    selected = run;
    document.querySelectorAll("#runs .run-item").forEach(function (b) {
      b.classList.toggle("active", !!run && b.dataset.runId === String(run.id));
    });
    if (!run) document.getElementById("report").hidden = true;
  }

  return {
    list: async function () { return (await PL.api.json("/api/v1/runs")).runs; },
    get: async function (id) { return PL.api.json("/api/v1/runs/" + id); },
    renderList: renderList, renderReport: renderReport, windows: windows,
    setSelected: setSelected, selected: function () { return selected; },
    picked: function () { return picked.slice(); },
    setPicked: function (ids) {
      picked = ids.slice();
      document.querySelectorAll("#runs .run-pick").forEach(function (b) {
        b.checked = picked.indexOf(Number(b.dataset.runId)) >= 0;
      });
    },
    final: function (run) { return run.report != null && run.status !== "running" && run.status !== "ending"; },
  };
})();
