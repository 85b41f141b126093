// The page of `etwh report`: draws the data inlined in #etwh-data (built by report_html/*.cc)
// as tables and SVG charts. Plain DOM, no library; every text from the data goes in as text.
"use strict";

var SVG_NS = "http://www.w3.org/2000/svg";
var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
  "#17becf", "#7f7f7f", "#bcbd22"];
// Line patterns: solid, dashed, dotted, dash-dot, long dash. With more series than colours, a
// chart tells them apart by colour and pattern together (chartStyles: never the same pair twice).
var DASHES = [null, "6 3", "1.5 2.5", "10 3 2 3", "14 4"];

// ---- DOM helpers -------------------------------------------------------------------------

function el(tag, attrs, children) {
  var node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function svgEl(tag, attrs, children) {
  var node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function setAttrs(node, attrs) {
  Object.keys(attrs || {}).forEach(function (k) {
    if (attrs[k] === undefined || attrs[k] === null) return;
    if (k === "text") node.textContent = attrs[k];
    else if (k === "onclick") node.addEventListener("click", attrs[k]);
    else node.setAttribute(k, attrs[k]);
  });
}

function append(node, children) {
  (children || []).forEach(function (c) {
    if (c === null || c === undefined) return;
    node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  });
}

function fmt(v) {
  if (v === null || v === undefined) return "-";
  if (typeof v !== "number") return String(v);
  var a = Math.abs(v);
  if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toExponential(2);
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  return v.toLocaleString("en-US", { maximumFractionDigits: a < 10 ? 3 : 1 });
}

function statusBadge(status, href) {
  var s = status || "none";
  return el(href ? "a" : "span", { "class": "status s-" + s, href: href, text: status || "-" });
}

// ---- Tooltip: any element with data-tip; charts set it as the pointer moves ---------------

var tooltip = null;
function showTip(text, x, y) {
  tooltip.textContent = text;
  tooltip.hidden = false;
  var w = tooltip.offsetWidth;
  tooltip.style.left = Math.min(x + 14, window.innerWidth - w - 8) + "px";
  tooltip.style.top = (y + 14) + "px";
}
function hideTip() { tooltip.hidden = true; }

function installTooltips() {
  tooltip = document.getElementById("tooltip");
  document.addEventListener("mouseover", function (e) {
    var t = e.target.closest ? e.target.closest("[data-tip]") : null;
    if (t) showTip(t.getAttribute("data-tip"), e.clientX, e.clientY);
  });
  document.addEventListener("mouseout", function (e) {
    if (e.target.closest && e.target.closest("[data-tip]")) hideTip();
  });
}

// ---- Sortable tables ---------------------------------------------------------------------
// columns: [{title, value(row) -> sort key, cell(row) -> node or text, num}]

// opts.rowClass(row): a class for the row's <tr> ("bad": a failure, shown first by the caller).
function sortableTable(columns, rows, opts) {
  var tbody = el("tbody");
  var state = { col: -1, dir: 1 };
  var heads = columns.map(function (c, i) {
    return el("th", { "class": "sortable", title: "sort", text: c.title, onclick: function () {
      state.dir = state.col === i ? -state.dir : 1;
      state.col = i;
      heads.forEach(function (h, j) {
        h.classList.remove("sorted-asc", "sorted-desc");
        if (j === i) h.classList.add(state.dir > 0 ? "sorted-asc" : "sorted-desc");
      });
      fill(rows.slice().sort(function (a, b) { return state.dir * compareKeys(c.value(a), c.value(b)); }));
    } });
  });
  function fill(list) {
    tbody.textContent = "";
    list.forEach(function (r) {
      tbody.appendChild(el("tr", { "class": opts && opts.rowClass ? opts.rowClass(r) : null }, columns.map(function (c) {
        var v = c.cell ? c.cell(r) : fmt(c.value(r));
        return el("td", { "class": c.num ? "num" : null }, [v]);
      })));
    });
  }
  fill(rows);
  return el("table", {}, [el("thead", {}, [el("tr", {}, heads)]), tbody]);
}

function compareKeys(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b));
}

// ---- Charts ------------------------------------------------------------------------------
// spec: {title, xLabel, yLabel, xLog, yLog, series: [{name, line: [[x, y]...], points: [[x, y]...]}]}
// Each series is one <path class="series">; its points (if any) are dots. A series may name its
// colour (`color`: an index into PALETTE, to pair two series of one run) and be `dashed` or
// `dotted`.

var W = 460, H = 300, M = { left: 64, right: 16, top: 28, bottom: 44 };

function niceTicks(lo, hi, count) {
  if (hi <= lo) { hi = lo + 1; }
  var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / count)));
  var err = (hi - lo) / count / step;
  step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
  var ticks = [];
  for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(t);
  return ticks;
}

function logTicks(lo, hi) {
  var ticks = [];
  for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) ticks.push(Math.pow(10, e));
  return ticks;
}

function extent(series, i) {
  var lo = Infinity, hi = -Infinity;
  series.forEach(function (s) {
    (s.line || []).concat(s.points || []).forEach(function (p) {
      lo = Math.min(lo, p[i]);
      hi = Math.max(hi, p[i]);
    });
  });
  return [lo, hi];
}

function makeScale(range, pixels, log, startAtZero) {
  var lo = range[0], hi = range[1];
  if (log) {
    lo = Math.pow(10, Math.floor(Math.log10(Math.max(lo, 1e-3))));
    hi = Math.pow(10, Math.ceil(Math.log10(Math.max(hi, lo * 10))));
    var f = function (v) { return pixels[0] + (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * (pixels[1] - pixels[0]); };
    f.ticks = logTicks(lo, hi);
    return f;
  }
  if (startAtZero) lo = Math.min(0, lo);
  if (hi === lo) { hi = lo + 1; }
  var ticks = niceTicks(lo, hi, 5);
  lo = Math.min(lo, ticks[0]);
  hi = Math.max(hi, ticks[ticks.length - 1]);
  var g = function (v) { return pixels[0] + (v - lo) / (hi - lo) * (pixels[1] - pixels[0]); };
  g.ticks = ticks;
  return g;
}

// A tick's label, short: 1.5k, 2M, 0.25 (the tooltips give values in full).
function tickFmt(v) {
  var a = Math.abs(v);
  var units = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (var i = 0; i < units.length; i++) {
    if (a >= units[i][0]) return String(+(v / units[i][0]).toPrecision(3)) + units[i][1];
  }
  if (a !== 0 && a < 1e-3) return v.toExponential(0);
  return String(+v.toPrecision(3));
}

// Every k-th tick, k the least that keeps the labels `size(label)` pixels long from touching
// (`at(t)`: where a tick is drawn).
function thinTicks(ticks, at, size) {
  if (ticks.length < 2) return ticks;
  var gap = Infinity, longest = 0;
  for (var i = 1; i < ticks.length; i++) gap = Math.min(gap, Math.abs(at(ticks[i]) - at(ticks[i - 1])));
  ticks.forEach(function (t) { longest = Math.max(longest, size(tickFmt(t))); });
  var k = Math.max(1, Math.ceil((longest + 6) / Math.max(gap, 1e-9)));
  return ticks.filter(function (t, i) { return i % k === 0; });
}

// An axis label's width at the charts' 11 px: about 6.5 px per character, a bit more for digits.
function labelWidth(text) { return 7 * text.length; }

function drawAxes(svg, x, y, spec) {
  var axis = svgEl("g", { "class": "axis" });
  var xTicks = thinTicks(x.ticks, x, labelWidth);
  // Both axes labelled at the corner would overlap: the x label stays.
  var corner = xTicks.some(function (t) { return Math.abs(x(t) - M.left) < 1; });
  xTicks.forEach(function (t) {
    var px = x(t);
    axis.appendChild(svgEl("line", { "class": "grid", x1: px, x2: px, y1: M.top, y2: H - M.bottom }));
    axis.appendChild(svgEl("text", { "class": "tick", x: px, y: H - M.bottom + 14, "text-anchor": "middle", text: tickFmt(t) }));
  });
  thinTicks(y.ticks, y, function () { return 12; }).forEach(function (t) {
    var py = y(t);
    if (corner && Math.abs(py - (H - M.bottom)) < 1) return;
    axis.appendChild(svgEl("line", { "class": "grid", x1: M.left, x2: W - M.right, y1: py, y2: py }));
    axis.appendChild(svgEl("text", { "class": "tick", x: M.left - 4, y: py + 4, "text-anchor": "end", text: tickFmt(t) }));
  });
  axis.appendChild(svgEl("path", { d: "M" + M.left + "," + M.top + "V" + (H - M.bottom) + "H" + (W - M.right), fill: "none" }));
  axis.appendChild(svgEl("text", { x: (M.left + W - M.right) / 2, y: H - 8, "text-anchor": "middle", text: spec.xLabel + (spec.xLog ? " (log)" : "") }));
  axis.appendChild(svgEl("text", { x: 12, y: (M.top + H - M.bottom) / 2, "text-anchor": "middle",
    transform: "rotate(-90 12 " + (M.top + H - M.bottom) / 2 + ")", text: spec.yLabel + (spec.yLog ? " (log)" : "") }));
  axis.appendChild(svgEl("text", { "class": "title", x: M.left, y: 16, text: spec.title }));
  svg.appendChild(axis);
}

function lineChart(spec) {
  var series = spec.series.filter(function (s) { return (s.line || s.points || []).length > 0; });
  var box = el("div", { "class": "chart" });
  if (series.length === 0) {
    box.appendChild(el("p", { "class": "note", text: spec.title + ": no data" }));
    return box;
  }
  var svg = svgEl("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": spec.title });
  var x = makeScale(extent(series, 0), [M.left, W - M.right], spec.xLog, !spec.xLog && spec.xFromZero);
  var y = makeScale(extent(series, 1), [H - M.bottom, M.top], spec.yLog, true);
  drawAxes(svg, x, y, spec);
  var all = [];
  var styles = chartStyles(series);
  series.forEach(function (s, i) {
    var color = styles[i].color;
    var line = s.line || s.points;
    var d = line.map(function (p, j) { return (j ? "L" : "M") + x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1); }).join("");
    svg.appendChild(svgEl("path", { "class": "series", d: d, stroke: color, "data-series": s.name,
      "stroke-dasharray": styles[i].dash }));
    (s.points || []).forEach(function (p) {
      if (!s.line) return;
      svg.appendChild(svgEl("circle", { "class": "point", cx: x(p[0]), cy: y(p[1]), r: 3.5, fill: color }));
    });
    line.forEach(function (p) { all.push({ s: s.name, p: p, px: x(p[0]), py: y(p[1]), color: color }); });
  });
  addHover(svg, all, spec);
  box.appendChild(svg);
  box.appendChild(legend(series, styles));
  return box;
}

// The nearest plotted value to the pointer, with its series, in the tooltip.
function addHover(svg, all, spec) {
  var mark = svgEl("circle", { r: 5, fill: "none", stroke: "#000", "stroke-width": 1.5, visibility: "hidden" });
  var area = svgEl("rect", { x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom, fill: "transparent" });
  svg.appendChild(mark);
  svg.appendChild(area);
  area.addEventListener("mousemove", function (e) {
    var r = svg.getBoundingClientRect();
    var mx = e.clientX - r.left, my = e.clientY - r.top, best = null, bestD = Infinity;
    all.forEach(function (a) {
      var d = (a.px - mx) * (a.px - mx) + (a.py - my) * (a.py - my);
      if (d < bestD) { bestD = d; best = a; }
    });
    if (!best) return;
    mark.setAttribute("cx", best.px);
    mark.setAttribute("cy", best.py);
    mark.setAttribute("visibility", "visible");
    showTip(best.s + "\n" + spec.xLabel + ": " + fmt(best.p[0]) + "\n" + spec.yLabel + ": " + fmt(best.p[1]), e.clientX, e.clientY);
  });
  area.addEventListener("mouseleave", function () { mark.setAttribute("visibility", "hidden"); hideTip(); });
}

// Each series' colour and line pattern in one chart: the colour it asks for (`color`, to pair
// the lines of one run) or its place, the pattern it asks for (`dashed`, `dotted`) or solid;
// when that pair is taken, the next pattern in the same colour, then the next colour, so that no
// two series of a chart look alike.
function chartStyles(series) {
  var used = {}, n = PALETTE.length * DASHES.length;
  return series.map(function (s, i) {
    var c = s.color !== undefined ? s.color : i, d = s.dashed ? 1 : s.dotted ? 2 : 0;
    for (var k = 0; k < n; k++) {
      var ci = (c + Math.floor((d + k) / DASHES.length)) % PALETTE.length, di = (d + k) % DASHES.length;
      if (!used[ci + "|" + di]) {
        used[ci + "|" + di] = true;
        return { color: PALETTE[ci], dash: DASHES[di], key: ci + "|" + di };
      }
    }
    return { color: PALETTE[c % PALETTE.length], dash: DASHES[d], key: "reused" };
  });
}

function legend(series, styles) {
  return el("div", { "class": "legend", style: "padding: 0 8px 6px; font-size: 12px; max-width: " + W + "px" }, series.map(function (s, i) {
    var swatch = svgEl("svg", { width: 24, height: 8, style: "margin-right:4px;vertical-align:middle" }, [
      svgEl("line", { x1: 0, x2: 24, y1: 4, y2: 4, stroke: styles[i].color, "stroke-width": 2.5,
        "stroke-dasharray": styles[i].dash })]);
    return el("span", { "class": "legend-entry", "data-style": styles[i].key, style: "margin-right: 12px; white-space: nowrap" },
      [swatch, s.name]);
  }));
}
