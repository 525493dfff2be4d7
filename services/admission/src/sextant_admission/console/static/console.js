// Live tails: a table body with data-tail="URL" receives the server-sent events of URL, newest first.
// Charts: an element with data-chart='{"x": [...], "xlabel", "ylabel", "series": [{"label", "values",
// "stroke", "dash"}]}' becomes a uPlot line chart (vendored, static/uPlot.iife.min.js).
"use strict";
(function () {
  function cell(tr, text, href) {
    const td = document.createElement("td");
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      td.appendChild(a);
    } else {
      td.textContent = text;
    }
    tr.appendChild(td);
  }
  function tail(tbody) {
    const prefix = "/console";
    const source = new EventSource(tbody.dataset.tail);
    source.addEventListener("logged", function (msg) {
      const e = JSON.parse(msg.data);
      const tr = document.createElement("tr");
      tr.className = "fresh";
      cell(tr, String(e.position));
      cell(tr, e.type);
      if (e.workload) { cell(tr, e.workload, prefix + "/workloads/" + encodeURIComponent(e.workload)); }
      else { cell(tr, e.stream); }
      cell(tr, e.source);
      if (e.decision && e.workload) {
        cell(tr, e.decision.slice(0, 12), prefix + "/workloads/" + encodeURIComponent(e.workload) +
             "/decisions/" + encodeURIComponent(e.decision));
      } else { cell(tr, ""); }
      tr.firstChild.className = "num";
      tbody.insertBefore(tr, tbody.firstChild);
      const pos = document.querySelector("[data-testid=last-position]");
      if (pos) { pos.textContent = String(e.position); }
    });
  }
  function chart(el) {
    const spec = JSON.parse(el.dataset.chart);
    const series = [{ label: spec.xlabel }];
    const x0 = spec.x.length ? spec.x[0] : 0;  // cluster time is epoch seconds: from the first point
    const data = [spec.x.map(function (v) { return v - x0; })];
    spec.series.forEach(function (s) {
      series.push({ label: s.label, stroke: s.stroke, width: 2, dash: s.dash ? [6, 4] : undefined,
                    points: { show: spec.x.length < 40 } });
      data.push(s.values);
    });
    const width = Math.max(320, Math.min(760, el.clientWidth || 640));
    /* global uPlot */
    new uPlot({ width: width, height: 220, series: series, legend: { show: true },
                scales: { x: { time: false } },
                axes: [{ label: spec.xlabel }, { label: spec.ylabel }] }, data, el);
    el.dataset.drawn = "true";
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("tbody[data-tail]").forEach(tail);
    if (typeof uPlot !== "undefined") { document.querySelectorAll("[data-chart]").forEach(chart); }
  });
})();
