// app.js - the page: the time range (live 5 min / 1 h / 24 h, or a fixed custom one), the data it
// needs from /api/v1/data (with a step, so long ranges come from the roll-ups), the 1 s live
// update, the theme, and the runs: selecting one shows its window and report, ticking two or more
// compares them. The page's state is in its URL: #run=ID, #compare=A,B,...; none: live. Each is a
// history entry, so the browser's back button returns to the view before.
"use strict";
var PL = window.PL || (window.PL = {});

(function () {
  var fmt = PL.fmt, charts = PL.charts, runs = PL.runs, api = PL.api, compare = PL.compare;
  var MAX_COMPARE = 20; // GET /api/v1/runs/compare takes 2 to 20 runs
  // About one point per pixel of a laptop-wide chart: any range draws in a few milliseconds.
  var TARGET_POINTS = 1200;
  // Steps the API serves well: a few seconds from the raw ticks, whole minutes from the minute
  // roll-ups, whole hours from the hour roll-ups (docs/api.md, bucketed mode).
  var STEPS = [2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
  var LIVE_MS = 1000;

  var state = {
    live: true,       // the range ends now and moves
    span: 300000,     // ms, of a live range
    from: 0, to: 0,   // ms, of a fixed range
    step: 0,          // s; 0: raw ticks
    ts: [],           // ms
    paths: [],        // the series' counter paths, in answer order
    series: {},       // path -> values
    gen: 0,           // bumped when the range changes, so a late answer of the old one is dropped
    firstPaint: false,
    busy: false,
  };

  function stepFor(spanMs) {
    var raw = spanMs / 1000 / TARGET_POINTS;
    if (raw <= 1) return 0;
    for (var i = 0; i < STEPS.length; i++) if (STEPS[i] >= raw) return STEPS[i];
    return STEPS[STEPS.length - 1];
  }

  function range() {
    if (!state.live) return [state.from, state.to];
    var last = state.ts.length ? state.ts[state.ts.length - 1] : Date.now();
    var end = Math.max(last, state.step ? last + state.step * 1000 : last);
    return [end - state.span, end];
  }

  function status(text, bad) {
    var s = document.getElementById("status");
    s.textContent = text;
    s.classList.toggle("bad", !!bad);
  }

  function banner(text) {
    var b = document.getElementById("banner");
    b.hidden = !text;
    b.textContent = text || "";
  }

  // Replace what we hold from the first timestamp of `ans` on with `ans` (a live update repeats
  // the newest tick or bucket, which may have grown), then drop what fell out of a live range.
  function merge(ans) {
    var first = ans.timestamps.length ? ans.timestamps[0] : Infinity;
    var keep = 0;
    while (keep < state.ts.length && state.ts[keep] < first) keep++;
    var newPaths = ans.series.map(function (s) { return s.path; });
    var all = state.paths.slice();
    newPaths.forEach(function (p) { if (all.indexOf(p) < 0) all.push(p); });
    var series = {};
    all.forEach(function (p) {
      var old = (state.series[p] || []).slice(0, keep);
      while (old.length < keep) old.push(null); // a device that appeared now
      var idx = newPaths.indexOf(p);
      var add = idx >= 0 ? ans.series[idx].values : ans.timestamps.map(function () { return null; });
      series[p] = old.concat(add);
    });
    state.ts = state.ts.slice(0, keep).concat(ans.timestamps);
    state.paths = all;
    state.series = series;
    if (state.live) {
      var r = range(), cut = 0;
      while (cut < state.ts.length && state.ts[cut] < r[0] - state.step * 1000) cut++;
      if (cut) {
        state.ts = state.ts.slice(cut);
        all.forEach(function (p) { state.series[p] = state.series[p].slice(cut); });
      }
    }
  }

  function draw() {
    charts.update(state.paths, { ts: state.ts, series: state.series, stepMs: (state.step || 1) * 1000 },
                  range, pickRange);
    var last = state.ts.length ? state.ts[state.ts.length - 1] : null;
    var what = state.live ? "live" : "fixed range";
    status(what + (state.step ? " \u00b7 " + fmt.secs(state.step) + " buckets" : " \u00b7 1 s ticks") +
      (last ? " \u00b7 newest " + fmt.time(last) : " \u00b7 no data yet"));
  }

  // One frame after the charts got their data, the browser paints them: mark that moment.
  function markPainted(name) {
    return new Promise(function (resolve) {
      requestAnimationFrame(function () {
        performance.mark(name);
        resolve();
      });
    });
  }

  // Load the whole current range afresh.
  async function load(measure) {
    var gen = ++state.gen;
    var r = state.live ? [Date.now() - state.span, null] : [state.from, state.to];
    state.step = stepFor(state.live ? state.span : state.to - state.from);
    if (measure) performance.mark("perflog:range-start:" + measure);
    var ans = null;
    // The very first load takes the answer that boot.js asked for while the scripts loaded.
    var early = PL.boot && PL.boot.data;
    PL.boot = null;
    if (early && state.live && state.span === PL.LIVE_SPAN_MS && !state.step) {
      var resp = await early;
      if (resp && resp.ok) ans = await resp.json();
    }
    if (!ans) ans = await api.json(PL.dataUrl(r[0], r[1], state.step));
    if (gen !== state.gen) return;
    if (!state.firstPaint) performance.mark("perflog:first-data");
    state.ts = [];
    state.paths = [];
    state.series = {};
    merge(ans);
    draw();
    if (!state.firstPaint) {
      state.firstPaint = true;
      await markPainted("perflog:live-first-paint");
    }
    if (measure) {
      await markPainted("perflog:range-end:" + measure);
      performance.measure("perflog:range-render:" + measure, "perflog:range-start:" + measure,
                          "perflog:range-end:" + measure);
      document.body.dataset.rendered = measure;
    }
  }

  // The live update: from the newest point we hold (inclusive) to now.
  async function tick() {
    if (!state.live || state.busy || !state.ts.length) return;
    state.busy = true;
    var gen = state.gen;
    try {
      var last = state.ts[state.ts.length - 1];
      var ans = await api.json(PL.dataUrl(last, null, state.step));
      if (gen === state.gen) {
        merge(ans);
        draw();
      }
    } catch (e) {
      status("update failed: " + e.message, true);
    } finally {
      state.busy = false;
    }
  }

  function setActive(key) {
    document.querySelectorAll("#ranges button[data-range]").forEach(function (b) {
      b.classList.toggle("active", b.dataset.range === key);
    });
    document.getElementById("custom").hidden = key !== "custom";
  }

  async function setLive(spanS) {
    state.live = true;
    state.span = spanS * 1000;
    setActive(String(spanS));
    liveBands(state.runList || []);
    await load(String(spanS));
  }

  async function setFixed(fromMs, toMs, key) {
    state.live = false;
    liveBands([]);
    state.from = Math.round(fromMs);
    state.to = Math.round(toMs);
    setActive(key || "custom");
    fillCustom();
    await load("custom");
  }

  // A drag on any chart picks that stretch as a fixed range.
  function pickRange(fromMs, toMs) {
    setFixed(fromMs, toMs).catch(fail);
  }

  function localInput(ms) {
    var d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
    return d.toISOString().slice(0, 19);
  }

  function fillCustom() {
    var r = range();
    document.getElementById("custom-from").value = localInput(r[0]);
    document.getElementById("custom-to").value = localInput(r[1]);
  }

  function fail(e) {
    status(e.message, true);
  }

  // ---- runs ----

  // The runs as bands on the live charts (a selected run is shaded instead, on a fixed range).
  function liveBands(list) {
    var now = Date.now();
    charts.setBands(!state.live ? [] : list.map(function (r) {
      return { id: r.id, label: "#" + r.id + " " + (r.label || r.command || "run"), from: r.start_ms,
               to: r.settled_ms != null ? r.settled_ms : r.end_ms != null ? r.end_ms : now };
    }));
  }

  // The compare button: enabled for 2 to MAX_COMPARE ticked runs.
  function ticked(ids) {
    var b = document.getElementById("compare-go");
    b.disabled = ids.length < 2 || ids.length > MAX_COMPARE;
    b.textContent = ids.length >= 2 ? "compare " + ids.length : "compare";
  }

  async function refreshRuns() {
    var list = await runs.list();
    runs.renderList(list, function (id) { go("run=" + id); }, ticked);
    ticked(runs.picked());
    document.getElementById("runs").dataset.loaded = String(list.length);
    state.runList = list;
    liveBands(list);
  }

  var runTimer = null;

  async function selectRun(id) {
    clearTimeout(runTimer);
    compare.hide();
    document.body.dataset.view = "run";
    var run = await runs.get(id);
    runs.setSelected(run);
    runs.renderReport(run);
    var w = runs.windows(run, Date.now());
    charts.setShade(w);
    var end = w.tail ? w.tail[1] : w.run[1];
    var pad = Math.max(15000, (end - w.run[0]) * 0.25);
    await setFixed(w.run[0] - pad, end + pad, "run");
    document.getElementById("report").dataset.ready = runs.final(run) ? "1" : "0";
    if (!runs.final(run))
      runTimer = setTimeout(function () { if (runs.selected() && runs.selected().id === id) selectRun(id).catch(fail); }, 2000);
  }

  async function closeRun() {
    clearTimeout(runTimer);
    runs.setSelected(null);
    charts.setShade(null);
    compare.hide();
    document.body.dataset.view = "live";
    await setLive(300);
  }

  // Runs side by side: the live charts stop, the overlaid ones and the table take their place.
  async function showCompare(ids) {
    clearTimeout(runTimer);
    runs.setSelected(null);
    charts.setShade(null);
    state.live = false;
    state.gen++;
    runs.setPicked(ids);
    ticked(ids);
    setActive("compare");
    document.body.dataset.view = "compare";
    await compare.show(ids, function (spanMs) { return stepFor(spanMs); });
    status("comparing " + ids.map(function (id) { return "#" + id; }).join(", ") +
      " \u00b7 x: seconds from each run's start");
  }

  // ---- the URL: #run=ID, #compare=A,B,...; anything else is the live view ----

  // Go to the view of `hash` (without '#'; "" the live view) as a new history entry.
  function go(hash) {
    if (location.hash.replace(/^#/, "") === hash) route();
    else location.hash = hash;
  }

  // Leave the URL's view without a new view of its own (a range button): drop the hash.
  function dropHash() {
    if (location.hash) history.pushState(null, "", location.pathname + location.search);
  }

  function route() {
    var h = location.hash.replace(/^#/, ""), m;
    if ((m = /^run=([1-9][0-9]{0,14})$/.exec(h))) return selectRun(Number(m[1])).catch(fail);
    if ((m = /^compare=([1-9][0-9]{0,14}(?:,[1-9][0-9]{0,14})+)$/.exec(h))) {
      var ids = m[1].split(",").map(Number);
      if (ids.length <= MAX_COMPARE) return showCompare(ids).catch(fail);
      fail(new Error("at most " + MAX_COMPARE + " runs can be compared"));
    }
    return closeRun().catch(fail);
  }

  async function downloadRun(kind) {
    var run = runs.selected();
    if (!run) return;
    var name = kind === "csv"
      ? await api.download("/api/v1/runs/" + run.id + "/export", "perflog-run-" + run.id + ".csv")
      : await api.download("/api/v1/runs/" + run.id, "perflog-run-" + run.id + ".json");
    status("saved " + name);
  }

  // ---- theme: follows the system until the button picks one; remembered in localStorage ----

  var THEMES = ["auto", "dark", "light"];

  function applyTheme(t) {
    var root = document.documentElement;
    if (t === "auto") root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", t);
    var b = document.getElementById("theme");
    b.textContent = "theme: " + t;
    b.title = t === "auto" ? "theme: follows the system" : "theme: " + t;
  }

  function savedTheme() {
    try {
      var t = localStorage.getItem("perflog.theme");
      return THEMES.indexOf(t) >= 0 ? t : "auto";
    } catch (e) {
      return "auto";
    }
  }

  function cycleTheme() {
    var t = THEMES[(THEMES.indexOf(savedTheme()) + 1) % THEMES.length];
    try {
      localStorage.setItem("perflog.theme", t);
    } catch (e) {
      // no storage: the choice lasts until the page is closed
    }
    applyTheme(t);
    charts.rebuildAll();
    draw();
  }

  // ---- start ----

  function wire() {
    document.querySelectorAll("#ranges button[data-range]").forEach(function (b) {
      b.addEventListener("click", function () {
        if (b.dataset.range === "custom") {
          fillCustom();
          setActive("custom");
          return;
        }
        dropHash();
        runs.setSelected(null);
        charts.setShade(null);
        compare.hide();
        document.body.dataset.view = "live";
        setLive(Number(b.dataset.range)).catch(fail);
      });
    });
    document.getElementById("custom-apply").addEventListener("click", function () {
      var f = new Date(document.getElementById("custom-from").value).getTime();
      var t = new Date(document.getElementById("custom-to").value).getTime();
      if (!(f < t)) {
        status("custom range: 'from' must be before 'to'", true);
        return;
      }
      setFixed(f, t).catch(fail);
    });
    document.getElementById("theme").addEventListener("click", cycleTheme);
    document.getElementById("runs-refresh").addEventListener("click", function () { refreshRuns().catch(fail); });
    document.getElementById("run-close").addEventListener("click", function () { go(""); });
    document.getElementById("compare-close").addEventListener("click", function () { go(""); });
    document.getElementById("compare-go").addEventListener("click", function () {
      go("compare=" + runs.picked().join(","));
    });
    window.addEventListener("hashchange", route);
    document.getElementById("dl-csv").addEventListener("click", function () { downloadRun("csv").catch(fail); });
    document.getElementById("dl-json").addEventListener("click", function () { downloadRun("json").catch(fail); });
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        charts.resize();
        compare.resize();
      }, 100);
    });
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", function () {
      if (savedTheme() === "auto") {
        charts.rebuildAll();
        draw();
      }
    });
  }

  async function start() {
    applyTheme(savedTheme());
    wire();
    if (!charts.available)
      banner("Charts are unavailable: this perflogd was built without uPlot (run `npm ci --prefix " +
        "web/dashboard` in the source tree, then build again). The newest values and the runs are shown.");
    try {
      await load(null);
      var h = await api.json("/api/v1/health");
      document.getElementById("host").textContent = h.host + " \u00b7 " + h.version;
      document.title = "perflog \u00b7 " + h.host;
      await refreshRuns();
      if (location.hash) await route();
      else document.body.dataset.view = "live";
    } catch (e) {
      fail(e);
    }
    setInterval(function () { tick(); }, LIVE_MS);
    setInterval(function () { if (state.live) refreshRuns().catch(fail); }, 5000);
  }

  PL.app = { state: state, setLive: setLive, setFixed: setFixed, selectRun: selectRun, stepFor: stepFor,
             showCompare: showCompare };
  start();
})();
