// boot.js - loaded first, in the page's head: what the charts show (PL.SPECS), and the request for
// the live view's first data, sent before the other scripts (uPlot among them) are even parsed, so
// the answer is there when they are ready. app.js takes it from PL.boot.
"use strict";
var PL = window.PL || (window.PL = {});

// Each chart: the counters it shows (by object and counter name; _Total is left out, the charts
// are per device), the unit kind of its axis, and per series a style (dashed, right axis, a factor).
PL.SPECS = [
  { id: "disk", kind: "bytes/s", series: [
    { object: "PhysicalDisk", counter: "Disk Read Bytes/sec", label: "read" },
    { object: "PhysicalDisk", counter: "Disk Write Bytes/sec", label: "write", dash: true }] },
  { id: "nic-bits", kind: "bits/s", series: [
    { object: "Network Interface", counter: "Bytes Received/sec", label: "rx", mul: 8 },
    { object: "Network Interface", counter: "Bytes Sent/sec", label: "tx", mul: 8, dash: true }] },
  { id: "nic-pkts", kind: "pkt/s", series: [
    { object: "Network Interface", counter: "Packets Received/sec", label: "rx" },
    { object: "Network Interface", counter: "Packets Sent/sec", label: "tx", dash: true }] },
  { id: "cpu", kind: "%", heat: true, series: [
    { object: "Processor", counter: "% Processor Time", label: "cpu" }] },
  { id: "mem", kind: "bytes", series: [
    { object: "Memory", counter: "Dirty Bytes", label: "dirty" },
    { object: "Memory", counter: "Writeback Bytes", label: "writeback" },
    { object: "Memory", counter: "Cache Bytes", label: "cache", right: true, dash: true }] },
];

// The counter patterns of every chart, for one /api/v1/data request.
PL.patterns = function () {
  var out = [];
  PL.SPECS.forEach(function (c) {
    c.series.forEach(function (s) {
      out.push("\\" + s.object + (s.object === "Memory" ? "" : "(*)") + "\\" + s.counter);
    });
  });
  return out;
};

// The URL of /api/v1/data for the patterns over [from, to] (ms; to null: now) with a step (s).
PL.dataUrl = function (fromMs, toMs, step) {
  var p = PL.patterns().map(function (c) { return "counter=" + encodeURIComponent(c); });
  p.push("from=" + (fromMs / 1000).toFixed(3));
  p.push("to=" + (toMs == null ? "now" : (toMs / 1000).toFixed(3)));
  if (step) p.push("step=" + step);
  return "/api/v1/data?" + p.join("&");
};

PL.LIVE_SPAN_MS = 300000;

// The first request, with the token of this tab if there is one; app.js handles a 401 or an
// error as for any request (by asking again through PL.api).
PL.boot = (function () {
  var headers = {};
  try {
    var t = sessionStorage.getItem("perflog.token");
    if (t) headers.Authorization = "Bearer " + t;
  } catch (e) {
    // no storage: no token yet
  }
  return {
    from: Date.now() - PL.LIVE_SPAN_MS,
    data: fetch(PL.dataUrl(Date.now() - PL.LIVE_SPAN_MS, null, 0), { headers: headers, cache: "no-store" })
      .catch(function () { return null; }),
  };
})();
