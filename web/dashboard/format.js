// format.js - numbers for people: bytes and bytes/s with binary prefixes (B, KiB ... TiB),
// bits/s with decimal ones (bit/s, kbit/s ... Gbit/s, as links are rated), counts, percent and
// seconds. Every function takes null/undefined/NaN and gives "—" (the API's "unknown").
"use strict";
var PL = window.PL || (window.PL = {});

PL.fmt = (function () {
  var DASH = "\u2014";
  var BIN = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  var DEC = ["", "k", "M", "G", "T", "P"];

  function known(v) {
    return typeof v === "number" && isFinite(v);
  }

  // Three significant digits (at least: 1234 stays 1234).
  function num(v) {
    var a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }

  // The prefix index for a value: the largest unit the value reaches (base 1024 or 1000).
  function scaleOf(v, base, n) {
    var i = 0, a = Math.abs(v);
    while (i < n - 1 && a >= Math.pow(base, i + 1)) i++;
    return i;
  }

  function bytes(v, suffix) {
    if (!known(v)) return DASH;
    var i = scaleOf(v, 1024, BIN.length);
    return num(v / Math.pow(1024, i)) + " " + BIN[i] + (suffix || "");
  }

  function bits(v) {
    if (!known(v)) return DASH;
    var i = scaleOf(v, 1000, DEC.length);
    return num(v / Math.pow(1000, i)) + " " + DEC[i] + "bit/s";
  }

  // A count with a decimal prefix glued to the number: "12.0 pkt/s", "1.20k pkt/s".
  function count(v, unit) {
    if (!known(v)) return DASH;
    var i = scaleOf(v, 1000, DEC.length);
    return num(v / Math.pow(1000, i)) + DEC[i] + (unit ? " " + unit : "");
  }

  function pct(v) {
    return known(v) ? num(v) + " %" : DASH;
  }

  function secs(v) {
    if (!known(v)) return DASH;
    if (Math.abs(v) >= 120) return num(v / 60) + " min";
    return num(v) + " s";
  }

  function integer(v) {
    return known(v) ? String(Math.round(v)) : DASH;
  }

  // Axis ticks of one axis share one unit, so "512 KiB/s" and "1.00 MiB/s" never mix on an axis:
  // for byte axes the unit of the tick step (uPlot's incr, 1-2-5 times 1024^k, see charts.js), so
  // every label is a whole number ("200 MiB/s ... 1200 MiB/s", "1 GiB/s, 2 GiB/s"); else the unit
  // of the largest tick. kind: "bytes", "bytes/s", "bits/s", "pkt/s", "%".
  function axis(kind) {
    return function (u, splits, axisIdx, space, incr) {
      var max = 0;
      for (var k = 0; k < splits.length; k++)
        if (splits[k] != null) max = Math.max(max, Math.abs(splits[k]));
      if (kind === "%") return splits.map(function (v) { return v == null ? "" : num(v) + " %"; });
      var bin = kind === "bytes" || kind === "bytes/s";
      var base = bin ? 1024 : 1000;
      var names = bin ? BIN : DEC;
      var i = bin && incr > 0 ? scaleOf(incr, base, names.length) : scaleOf(max, base, names.length);
      var unit = bin ? " " + names[i] + (kind === "bytes/s" ? "/s" : "")
        : kind === "bits/s" ? " " + names[i] + "bit/s" : names[i] + " " + kind;
      return splits.map(function (v) {
        if (v == null) return "";
        if (v === 0) return "0";
        var x = v / Math.pow(base, i);
        // ticks are round numbers: show as few decimals as tell them apart
        var s = Math.abs(x) >= 10 || x === Math.round(x) ? x.toFixed(0) : x.toFixed(1);
        return s + unit;
      });
    };
  }

  function value(kind, v) {
    if (kind === "bytes/s") return bytes(v, "/s");
    if (kind === "bytes") return bytes(v);
    if (kind === "bits/s") return bits(v);
    if (kind === "pkt/s") return count(v, "pkt/s");
    if (kind === "%") return pct(v);
    return known(v) ? num(v) : DASH;
  }

  function time(ms) {
    var d = new Date(ms);
    function p(n) { return (n < 10 ? "0" : "") + n; }
    return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " +
      p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
  }

  return { DASH: DASH, known: known, bytes: bytes, bits: bits, count: count, pct: pct, secs: secs,
           integer: integer, axis: axis, value: value, time: time };
})();
