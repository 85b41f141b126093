// The page's sections (conformance, stress, compare) from the inlined data, drawn with the
// helpers of page.js; etwhStart() draws everything and marks the page done for the browser test.

// ---- Conformance: the rule-by-platform matrix --------------------------------------------

// Statuses that mean something went wrong: their rows come first, marked "bad".
var BAD_STATUSES = ["FAIL", "XPASS", "TIMEOUT", "CRASH", "HARNESS_ERROR"];
function isBad(status) { return BAD_STATUSES.indexOf(status) >= 0; }

// `rows` with those `bad` says first, each part in its order.
function badFirst(rows, bad) {
  return rows.filter(bad).concat(rows.filter(function (r) { return !bad(r); }));
}

function ruleIsBad(r) { return r.cells.some(function (cell) { return cell && isBad(cell.status); }); }

function conformanceSection(view) {
  var section = el("section", { id: "conformance" }, [el("h2", { text: "Conformance" })]);
  var cols = view.columns;
  if (cols.length === 0) {
    section.appendChild(el("p", { "class": "note", text: "No etwh run report among the inputs." }));
    return section;
  }
  cols.forEach(function (c) {
    var counts = Object.keys(c.counts).sort().map(function (k) {
      return el("span", { "data-tip": k + ": " + c.counts[k] + " cases" }, [statusBadge(k), " " + c.counts[k]]);
    });
    section.appendChild(el("div", { "class": "summary" }, [el("strong", { text: c.label + ":" })].concat(counts,
      [el("span", { "class": "muted", text: c.file + (c.start_time ? ", " + c.start_time : "") })])));
  });
  var details = el("div", { id: "conformance-details" });
  var onlyDiff = el("input", { type: "checkbox", id: "only-diff" });
  var withCases = el("input", { type: "checkbox", id: "with-cases", checked: "checked" });
  var tableBox = el("div");
  function draw() {
    var rules = view.rules.filter(function (r) {
      var seen = r.cells.map(function (cell) { return cell ? cell.status : "-"; });
      if (onlyDiff.checked && !seen.some(function (s) { return s !== seen[0]; })) return false;
      return !withCases.checked || r.cells.some(function (cell) { return cell && cell.cases.length > 0; });
    });
    tableBox.textContent = "";
    var bad = rules.filter(ruleIsBad).length;
    tableBox.appendChild(el("p", { "class": bad ? "v-slower" : "muted", text: rules.length + " of " + view.rules.length +
      " rules shown" + (bad ? "; " + bad + " failed, first" : "") }));
    tableBox.appendChild(matrixTable(cols, badFirst(rules, ruleIsBad), details));
  }
  onlyDiff.addEventListener("change", draw);
  withCases.addEventListener("change", draw);
  section.appendChild(el("p", {}, [withCases, el("label", { "for": "with-cases", text: " only rules some case of a report checks" }), " ",
    onlyDiff, el("label", { "for": "only-diff", text: " only rules whose verdict differs between the reports" }),
    el("span", { "class": "muted", text: " (click a verdict for its cases, expected and observed; click a heading to sort)" })]));
  section.appendChild(tableBox);
  section.appendChild(details);
  draw();
  return section;
}

function matrixTable(cols, rules, details) {
  var columns = [{ title: "Rule", value: function (r) { return r.id; } }];
  cols.forEach(function (c, i) {
    columns.push({
      title: c.label,
      value: function (r) { return r.cells[i] ? r.cells[i].status : null; },
      cell: function (r) {
        var cell = r.cells[i];
        if (!cell) return statusBadge(null);
        var link = statusBadge(cell.status, "#cases/" + i + "/" + encodeURIComponent(r.id));
        link.setAttribute("data-tip", r.id + " on " + c.label + ": " + cell.status + " (" + cell.cases.length + " cases)" + (cell.reason ? "\n" + cell.reason : ""));
        link.addEventListener("click", function () { showCases(details, c, r.id, cell); });
        return link;
      }
    });
  });
  return sortableTable(columns, rules, { rowClass: function (r) { return ruleIsBad(r) ? "bad" : null; } });
}

function showCases(details, column, ruleId, cell) {
  details.textContent = "";
  var box = el("div", { "class": "details" }, [el("h3", { text: ruleId + " on " + column.label + ": " + cell.status })]);
  if (cell.reason) box.appendChild(el("p", { text: cell.reason }));
  if (cell.cases.length === 0) box.appendChild(el("p", { "class": "note", text: "No case of this report checks the rule." }));
  cell.cases.forEach(function (id) {
    var c = column.cases[id];
    box.appendChild(el("h4", {}, [statusBadge(c.status), " " + c.id + " ", el("span", { "class": "muted", text: fmt(c.duration) + " s" })]));
    var v = c.verdicts && c.verdicts[ruleId];
    if (v) box.appendChild(el("p", {}, [el("strong", { text: ruleId + " in this case: " + v.verdict }), v.reason ? " (" + v.reason + ")" : ""]));
    if (c.message) box.appendChild(el("p", { text: c.message }));
    c.findings.forEach(function (f) { box.appendChild(findingLine(f)); });
  });
  details.appendChild(box);
  details.scrollIntoView({ block: "nearest" });
}

function findingLine(f) {
  var where = f.step ? (f.step.pointer || "") + (f.step.op ? " (" + f.step.op + ")" : "") : "";
  var parts = [el("strong", { text: (f.severity || "finding") + " " }), (f.rule ? f.rule + " " : "") + (f.check ? "[" + f.check + "] " : "")];
  if (f.text) parts.push(f.text);
  if (f.expected !== undefined) parts.push(" expected ", el("code", { text: String(f.expected) }));
  if (f.observed !== undefined) parts.push(" observed ", el("code", { text: String(f.observed) }));
  if (where) parts.push(el("span", { "class": "muted", text: " at step " + where }));
  return el("div", { "class": "finding" }, parts);
}

// ---- Stress: per profile, latency CDFs and time series; then the sweeps -----------------

function stressSection(view) {
  var section = el("section", { id: "stress" }, [el("h2", { text: "Stress" })]);
  if (view.runs.length === 0) {
    section.appendChild(el("p", { "class": "note", text: "No etwh stress results among the inputs." }));
    return section;
  }
  var profiles = [];
  var byProfile = {};
  view.runs.forEach(function (r) {
    if (!byProfile[r.profile]) { byProfile[r.profile] = []; profiles.push(r.profile); }
    byProfile[r.profile].push(r);
  });
  // The profiles with a run that failed first.
  function failed(p) { return byProfile[p].some(function (r) { return r.status !== "PASS"; }); }
  badFirst(profiles, failed).forEach(function (p) { section.appendChild(profileBlock(p, byProfile[p])); });
  section.appendChild(sweepBlock(view));
  return section;
}

// Every session of the runs with the name its lines get: [{name, session}].
function namedSessions(runs) {
  var out = [];
  runs.forEach(function (r) {
    r.sessions.forEach(function (s) {
      var name = r.id + " #" + r.repetition + (r.sessions.length > 1 ? " " + s.label : "") + " (" + baseName(r.file) + ")";
      out.push({ name: name, session: s });
    });
  });
  return out;
}

function sessionSeries(runs, make) {
  return namedSessions(runs).map(function (x) { return { name: x.name, line: make(x.session) }; });
}

function baseName(path) { return String(path).split(/[\\/]/).pop(); }

// The runs' floors, one CDF per placement and input file (their runs' buckets added up; files
// may come from different machines): what a delivery to a sleeping consumer pays at least (the
// wake-up), and what a record written while etwrt's reader naps waits at most (the nap).
function floorSeries(runs) {
  var placements = [{ key: "same_cpu", label: "wake-up floor on the same CPU", dashed: true },
    { key: "other_cpu", label: "wake-up floor on another CPU", dotted: true },
    { key: "reader_nap", label: "etwrt's reader nap, as slept", color: 9 }];
  var files = [];
  runs.forEach(function (r) { if (files.indexOf(r.file) < 0) files.push(r.file); });
  var out = [];
  files.forEach(function (file) {
    placements.forEach(function (pl) {
      var counts = {}, measured = 0;
      runs.forEach(function (r) {
        if (r.file !== file) return;
        (r.floors || []).forEach(function (f) {
          if (f.placement !== pl.key) return;
          measured++;
          f.buckets.forEach(function (b) { counts[b[0]] = (counts[b[0]] || 0) + b[1]; });
        });
      });
      if (measured === 0) return;
      var tops = Object.keys(counts).map(Number).sort(function (a, b) { return a - b; });
      var total = tops.reduce(function (t, k) { return t + counts[k]; }, 0), seen = 0;
      out.push({ name: pl.label + " (" + (files.length > 1 ? baseName(file) + ", " : "") +
          measured + (measured > 1 ? " runs)" : " run)"),
        dashed: pl.dashed, dotted: pl.dotted, color: pl.color !== undefined ? pl.color : 8,
        line: tops.map(function (k) { seen += counts[k]; return [k, seen / total]; }) });
    });
  });
  return out;
}

function profileBlock(profile, runs) {
  var block = el("div", {}, [el("h3", { text: baseName(profile) }),
    el("p", { "class": "muted", text: (runs[0].parameters.description || "") + " (" + runs.length + " runs)" })]);
  block.appendChild(runsTable(runs));
  var charts = el("div", { "class": "charts" });
  charts.appendChild(lineChart({ title: "Latency CDF, beside its floors", xLabel: "latency µs",
    yLabel: "fraction of events", xLog: true,
    series: sessionSeries(runs, function (s) { return s.cdf; }).concat(floorSeries(runs)) }));
  charts.appendChild(lineChart({ title: "Throughput over time", xLabel: "ms", yLabel: "delivered events/s",
    series: sessionSeries(runs, deliveredRate) }));
  charts.appendChild(lineChart({ title: "Loss over time", xLabel: "ms", yLabel: "lost events (cumulative)",
    series: sessionSeries(runs, function (s) { return s.series.map(function (p) { return [p.t_ms, p.lost]; }); }) }));
  charts.appendChild(lineChart({ title: "Consumer lag over time", xLabel: "ms", yLabel: "events written, not yet delivered",
    series: sessionSeries(runs, function (s) { return s.series.map(function (p) { return [p.t_ms, p.lag_events]; }); }) }));
  tailCharts(runs).forEach(function (c) { charts.appendChild(c); });
  block.appendChild(charts);
  return block;
}

// True when some session's series carries `field` (stress JSON gained fields over time).
function seriesHave(runs, field) {
  return runs.some(function (r) { return r.sessions.some(function (s) {
    return s.series.length > 0 && s.series[0][field] !== undefined; }); });
}

// Per session, over the steps `keep` accepts, a solid line and (where its series has those
// fields) a dashed and a dotted one of the same colour; `solid`, `dashed` and the optional
// `dotted` are [name suffix, field].
function pairedSeries(runs, keep, solid, dashed, dotted) {
  var out = [];
  namedSessions(runs).forEach(function (x, i) {
    var steps = x.session.series.filter(keep);
    function line(field) { return steps.map(function (p) { return [p.t_ms, p[field]]; }); }
    function add(pair, style) {
      if (!pair || steps.length === 0 || steps[0][pair[1]] === undefined) return;
      var s = { name: x.name + pair[0], color: i, line: line(pair[1]) };
      s[style] = true;
      out.push(s);
    }
    out.push({ name: x.name + solid[0], color: i, line: line(solid[1]) });
    add(dashed, "dashed");
    add(dotted, "dotted");
  });
  return out;
}

// The steps whose silence in the slowest wait is only a lower bound (the consumer's ring of
// callback times did not reach back to the write), over all sessions.
function partialSilences(runs) {
  var n = 0;
  namedSessions(runs).forEach(function (x) {
    x.session.series.forEach(function (p) { if (p.latency_max_silence_partial) n++; });
  });
  return n;
}

// Where the latency tail happened and why (stress JSON since latency_max_us; the split, the
// batches and then the silence in the wait came later): the slowest delivery per step with its
// quiet part below it (the consumer delivered nothing since the write or its previous
// callback), the longest silence within its wait (quiet <= silence <= latency), and the
// records per BufferCallback.
function tailCharts(runs) {
  var out = [];
  if (seriesHave(runs, "latency_max_us")) {
    // The legend names the dashed and dotted lines; the title must fit the chart's width.
    var partial = partialSilences(runs);
    var note = partial > 0 ? " (" + partial + " silences: lower bounds)" :
      seriesHave(runs, "latency_max_quiet_us") ? " (dashed: its quiet part)" : "";
    out.push(lineChart({ title: "Slowest delivery per step" + note, xLabel: "ms",
      yLabel: "latency µs", series: pairedSeries(runs, function (p) { return p.latency_max_us > 0; },
        ["", "latency_max_us"], [" quiet", "latency_max_quiet_us"],
        [" longest silence in its wait", "latency_max_silence_us"]) }));
  }
  if (seriesHave(runs, "batch_mean")) {
    // Log axis: the mean is a few records, the largest batch hundreds. A step with no
    // BufferCallback (mean 0) has no batch to draw.
    out.push(lineChart({ title: "Batch size per step (dashed: largest)", xLabel: "ms", yLog: true,
      yLabel: "records per BufferCallback", series: pairedSeries(runs, function (p) { return p.batch_mean > 0; },
        [" mean", "batch_mean"], [" max", "batch_max"]) }));
  }
  if (seriesHave(runs, "consumer_cpu_share")) {
    // Beside lag and loss: a consumer short of CPU while events wait is behind for want of a core.
    out.push(lineChart({ title: "Consumer thread's CPU per step", xLabel: "ms",
      yLabel: "share of one CPU", series: pairedSeries(runs, function () { return true; },
        ["", "consumer_cpu_share"]) }));
  }
  return out;
}

// Events/s between two samples of the cumulative series.
function deliveredRate(s) {
  var out = [], prevT = 0, prevD = 0;
  s.series.forEach(function (p) {
    if (p.t_ms > prevT) out.push([p.t_ms, (p.delivered - prevD) * 1000 / (p.t_ms - prevT)]);
    prevT = p.t_ms;
    prevD = p.delivered;
  });
  return out;
}

function runsTable(runs) {
  var rows = [];
  runs.forEach(function (r) {
    if (r.sessions.length === 0) rows.push({ r: r, s: null });
    r.sessions.forEach(function (s) { rows.push({ r: r, s: s }); });
  });
  function num(get) { return function (x) { return x.s ? get(x.s) : null; }; }
  function bad(x) { return x.r.status !== "PASS"; }
  rows = badFirst(rows, bad);
  return sortableTable([
    { title: "run", value: function (x) { return x.r.id + " #" + x.r.repetition; } },
    { title: "file", value: function (x) { return baseName(x.r.file); } },
    { title: "status", value: function (x) { return x.r.status; }, cell: function (x) {
      var b = statusBadge(x.r.status);
      if (x.r.message) b.setAttribute("data-tip", x.r.message);
      return b;
    } },
    { title: "session", value: function (x) { return x.s ? x.s.label : "-"; } },
    { title: "written", num: true, value: num(function (s) { return s.written; }) },
    { title: "delivered", num: true, value: num(function (s) { return s.delivered; }) },
    { title: "lost", num: true, value: num(function (s) { return s.reported_lost; }) },
    { title: "lost while behind > buffers last", num: true, value: num(function (s) { return s.lost_behind_longer_than_buffers === undefined ? null : s.lost_behind_longer_than_buffers; }) },
    { title: "events/s", num: true, value: num(function (s) { return s.events_per_s; }) },
    { title: "MB/s", num: true, value: num(function (s) { return s.mb_per_s; }) },
    { title: "p50 µs", num: true, value: num(function (s) { return s.latency_us.p50; }) },
    { title: "p99 µs", num: true, value: num(function (s) { return s.latency_us.p99; }) },
    { title: "p99.9 µs", num: true, value: num(function (s) { return s.latency_us.p999; }) },
    { title: "p99 × floor, same CPU", num: true, value: num(function (s) { return s.p99_vs_floor ? s.p99_vs_floor.same_cpu : null; }) },
    { title: "p99 × floor, other CPU", num: true, value: num(function (s) { return s.p99_vs_floor ? s.p99_vs_floor.other_cpu : null; }) },
    { title: "p99 × reader nap", num: true, value: num(function (s) { return s.p99_vs_floor ? s.p99_vs_floor.reader_nap : null; }) },
    { title: "max µs", num: true, value: num(function (s) { return s.latency_us.max; }) },
    { title: "lag ms", num: true, value: num(function (s) { return s.consumer_lag_ms; }) },
    { title: "file MB/s", num: true, value: num(function (s) { return s.file ? s.file.mb_per_s : null; }) },
    { title: "file × disk", num: true, value: num(function (s) { return s.file ? s.file.of_disk_rate : null; }) },
    { title: "file full", value: function (x) { return x.s && x.s.file && x.s.file.at_maximum_size ? "at MaximumFileSize: the rest lost, MB/s a bound" : ""; } },
    { title: "buffers last ms", num: true, value: num(function (s) { return s.buffers_span_ms === undefined ? null : s.buffers_span_ms; }) },
    { title: "consumer CPU %", num: true, value: num(function (s) { return s.consumer_cpu_share === undefined ? null : 100 * s.consumer_cpu_share; }) },
    { title: "preempted", num: true, value: num(function (s) { return s.consumer_preemptions === undefined ? null : s.consumer_preemptions; }) }
  ], rows, { rowClass: function (x) { return bad(x) ? "bad" : null; } });
}

function sweepBlock(view) {
  var block = el("div", { id: "sweeps" }, [el("h3", { text: "Sweeps" })]);
  view.sweeps.forEach(function (sw) {
    block.appendChild(el("p", {}, [el("strong", { text: baseName(sw.group) }),
      " against " + sw.dimension + (sw.series_by.length ? ", one line per " + sw.series_by.join(", ") : "") + " (dots: each run; line: median)"]));
    var charts = el("div", { "class": "charts" });
    sw.figures.forEach(function (f) {
      charts.appendChild(lineChart({ title: f.name, xLabel: sw.dimension, yLabel: f.name, xFromZero: true, series: f.series }));
    });
    block.appendChild(charts);
  });
  if (view.sweeps.length === 0 && view.no_sweep.length === 0) {
    block.appendChild(el("p", { "class": "note", text: "No sweep." }));
  }
  view.no_sweep.forEach(function (why) { block.appendChild(el("p", { "class": "note", text: "No sweep: " + why })); });
  return block;
}

// ---- Compare: the figures with their verdicts --------------------------------------------

function compareSection(list) {
  var section = el("section", { id: "compare" }, [el("h2", { text: "Comparisons" })]);
  if (list.length === 0) section.appendChild(el("p", { "class": "note", text: "No etwh compare output among the inputs." }));
  list.forEach(function (c) {
    section.appendChild(el("h3", { text: baseName(c.old) + " → " + baseName(c.new) + " (" + c.kind + ")" }));
    section.appendChild(el("p", { "class": c.regressions > 0 ? "v-slower" : "v-same",
      text: c.regressions + " regression" + (c.regressions === 1 ? "" : "s") + " (" + c.file + ")" }));
    if (c.figures.length) section.appendChild(figuresTable(c.figures));
    if (c.cases.length) {
      section.appendChild(sortableTable([
        { title: "case", value: function (x) { return x.id; } },
        { title: "old", value: function (x) { return x.old; }, cell: function (x) { return statusBadge(x.old); } },
        { title: "new", value: function (x) { return x.new; }, cell: function (x) { return statusBadge(x.new); } },
        { title: "change", value: function (x) { return x.change; } }
      ], c.cases));
    }
  });
  return section;
}

function figuresTable(figures) {
  function bad(f) { return f.verdict === "slower"; }  // regressions first
  return sortableTable([
    { title: "figure", value: function (f) { return f.name; } },
    { title: "unit", value: function (f) { return f.unit; } },
    { title: "better", value: function (f) { return f.better; } },
    { title: "old median", num: true, value: function (f) { return f.old_median; } },
    { title: "new median", num: true, value: function (f) { return f.new_median; } },
    { title: "n", num: true, value: function (f) { return f.old_n + "/" + f.new_n; } },
    { title: "change", num: true, value: function (f) { return f.change; },
      cell: function (f) { return f.change === null ? "-" : (f.change >= 0 ? "+" : "") + (100 * f.change).toFixed(1) + " %"; } },
    { title: "p", num: true, value: function (f) { return f.p_value; } },
    { title: "verdict", value: function (f) { return f.verdict; },
      cell: function (f) { return el("span", { "class": "v-" + f.verdict, text: f.verdict }); } }
  ], badFirst(figures, bad), { rowClass: function (f) { return bad(f) ? "bad" : null; } });
}

// ---- Timelines of --trace files: a lane per process/thread, a mark per event -------------

var TL = { left: 230, right: 16, lane: 18, top: 24 };

function timelineSection(list) {
  var section = el("section", { id: "timeline" }, [el("h2", { text: "Timelines" })]);
  if (list.length === 0) section.appendChild(el("p", { "class": "note", text: "No --trace timeline among the inputs." }));
  list.forEach(function (t) { section.appendChild(timelineBlock(t)); });
  return section;
}

// One trace: its lanes, its marks (slices as bars as long as they lasted, instants and counter
// samples as ticks), a time axis in ms; zoom in and out by 2 (the page scrolls sideways).
function timelineBlock(t) {
  var block = el("div", { "class": "timeline" }, [el("h3", { text: baseName(t.file) }),
    el("p", { "class": "muted", text: t.marks.length + " events on " + t.lanes.length + " lanes (slices as bars; instants and counters as ticks; pointer: the event)" })]);
  var lo = Infinity, hi = -Infinity;
  t.marks.forEach(function (m) { lo = Math.min(lo, m.ts); hi = Math.max(hi, m.ts + (m.dur || 0)); });
  if (t.marks.length === 0) { lo = 0; hi = 1; }
  var zoom = 1, box = el("div", { style: "overflow-x: auto" });
  function draw() {
    var width = Math.max(400, Math.round(900 * zoom));
    var height = TL.top + t.lanes.length * TL.lane + 8;
    var svg = svgEl("svg", { "class": "timeline-chart", width: TL.left + width + TL.right, height: height,
      "data-events": t.marks.length });
    var x = function (us) { return TL.left + (us - lo) / Math.max(hi - lo, 1) * width; };
    var ms = function (us) { return (us - lo) / 1000; };
    var ticks = niceTicks(0, ms(hi), Math.max(2, Math.round(width / 90)));
    thinTicks(ticks, function (v) { return x(lo + v * 1000); }, labelWidth).forEach(function (v) {
      var px = x(lo + v * 1000);
      svg.appendChild(svgEl("line", { "class": "grid", x1: px, x2: px, y1: TL.top - 4, y2: height - 8, stroke: "#eef1f5" }));
      svg.appendChild(svgEl("text", { "class": "tick", x: px, y: TL.top - 8, "text-anchor": "middle", "font-size": 11, text: tickFmt(v) + " ms" }));
    });
    t.lanes.forEach(function (name, i) {
      var y = TL.top + i * TL.lane;
      svg.appendChild(svgEl("text", { x: TL.left - 6, y: y + 12, "text-anchor": "end", "font-size": 11,
        text: name.length > 34 ? name.slice(0, 33) + "…" : name }, [svgEl("title", { text: name })]));
      svg.appendChild(svgEl("line", { x1: TL.left, x2: TL.left + width, y1: y + TL.lane - 1, y2: y + TL.lane - 1, stroke: "#eef1f5" }));
    });
    t.marks.forEach(function (m) {
      var y = TL.top + m.lane * TL.lane + 2, px = x(m.ts);
      var tip = m.name + "\n" + fmt(ms(m.ts)) + " ms" + (m.dur !== undefined ? ", lasted " + fmt(m.dur / 1000) + " ms" : "") +
        (m.args ? "\n" + JSON.stringify(m.args) : "");
      var color = m.ph === "X" ? PALETTE[m.lane % PALETTE.length] : "#333";
      svg.appendChild(m.ph === "X"
        ? svgEl("rect", { "class": "timeline-mark", x: px, y: y, width: Math.max(1, x(m.ts + m.dur) - px), height: TL.lane - 5,
          fill: color, "fill-opacity": 0.55, stroke: color, "data-tip": tip })
        : svgEl("rect", { "class": "timeline-mark", x: px - 1, y: y, width: 2, height: TL.lane - 5, fill: color, "data-tip": tip }));
    });
    box.textContent = "";
    box.appendChild(svg);
  }
  block.appendChild(el("p", {}, [
    el("button", { type: "button", text: "zoom in", onclick: function () { zoom *= 2; draw(); } }), " ",
    el("button", { type: "button", text: "zoom out", onclick: function () { zoom = Math.max(1, zoom / 2); draw(); } })]));
  block.appendChild(box);
  draw();
  return block;
}

// ---- The page ----------------------------------------------------------------------------

function inputsSection(data) {
  return el("section", { id: "inputs" }, [el("h2", { text: "Inputs" }),
    el("p", { "class": "muted", text: "Made by " + data.generator + " from:" }),
    sortableTable([
      { title: "file", value: function (i) { return i.file; } },
      { title: "kind", value: function (i) { return i.kind; } }
    ], data.inputs)]);
}

function etwhStart() {
  var data = JSON.parse(document.getElementById("etwh-data").textContent);
  installTooltips();
  document.title = data.title || "etwh report";
  document.getElementById("title").textContent = document.title;
  var nav = document.getElementById("nav");
  [["conformance", "Conformance"], ["stress", "Stress"], ["sweeps", "Sweeps"], ["compare", "Comparisons"], ["timeline", "Timelines"], ["inputs", "Inputs"]]
    .forEach(function (n) { nav.appendChild(el("a", { href: "#" + n[0], text: n[1] })); });
  var app = document.getElementById("app");
  app.appendChild(conformanceSection(data.conformance));
  app.appendChild(stressSection(data.stress));
  app.appendChild(compareSection(data.compare));
  app.appendChild(timelineSection(data.timeline || []));
  app.appendChild(inputsSection(data));
  var root = document.documentElement;
  root.setAttribute("data-series", String(document.querySelectorAll("path.series").length));
  root.setAttribute("data-rendered", "done");
}

etwhStart();
