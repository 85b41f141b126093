// The browser test's own measurements of the page, appended to a copy of it (not part of the
// page): after the page drew, it writes on <html> data-check="key=value;...":
//   misplaced   rows with a failed status (FAIL, XPASS, TIMEOUT, CRASH, HARNESS_ERROR) below a
//               row without, in the conformance matrix and the stress runs tables
//   bad_rows    rows with a failed status
//   dup_styles  plotted series sharing colour and line pattern with another of their chart
//   dup_legend  legend entries sharing colour and pattern with another of their legend
//   overlaps    pairs of tick labels of one chart whose boxes intersect
//   ticks       tick labels measured
//   marks       marks drawn on the timelines
(function () {
  var BAD = ["FAIL", "XPASS", "TIMEOUT", "CRASH", "HARNESS_ERROR"];
  var misplaced = 0, badRows = 0;
  document.querySelectorAll("#conformance table, #stress table").forEach(function (t) {
    var good = false;
    t.querySelectorAll("tbody tr").forEach(function (tr) {
      var bad = Array.prototype.some.call(tr.querySelectorAll(".status"), function (b) {
        return BAD.indexOf(b.textContent) >= 0;
      });
      if (!bad) { good = true; return; }
      badRows++;
      if (good) misplaced++;
    });
  });
  function duplicates(nodes, key) {
    var seen = {}, n = 0;
    nodes.forEach(function (x) { var k = key(x); if (seen[k]) n++; seen[k] = true; });
    return n;
  }
  var dupStyles = 0, dupLegend = 0;
  document.querySelectorAll(".chart").forEach(function (c) {
    dupStyles += duplicates(c.querySelectorAll("path.series"), function (p) {
      return p.getAttribute("stroke") + "|" + (p.getAttribute("stroke-dasharray") || "");
    });
    dupLegend += duplicates(c.querySelectorAll(".legend-entry line"), function (l) {
      return l.getAttribute("stroke") + "|" + (l.getAttribute("stroke-dasharray") || "");
    });
  });
  var overlaps = 0, ticks = 0;
  document.querySelectorAll("svg").forEach(function (svg) {
    var boxes = Array.prototype.map.call(svg.querySelectorAll("text.tick"), function (t) {
      return t.getBoundingClientRect();
    });
    ticks += boxes.length;
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i], b = boxes[j];
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
      }
    }
  });
  var marks = document.querySelectorAll(".timeline-mark").length;
  document.documentElement.setAttribute("data-check", "misplaced=" + misplaced + ";bad_rows=" +
    badRows + ";dup_styles=" + dupStyles + ";dup_legend=" + dupLegend + ";overlaps=" + overlaps +
    ";ticks=" + ticks + ";marks=" + marks);
})();
