// Charts of an experiment's history, drawn with uPlot (vendored, see uPlot.LICENSE): outcomes
// over time, the champion over time (a step chart with one row per ranker that ever led) and the
// share of comparisons of the leading rankers; plus the champion's changes as a table, for the
// exact times and bases.
"use strict";

const Charts = (() => {
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  const LEADERS = 5;
  const plots = new Map();

  // `extra` adds to or overrides uPlot's options (axes, scales, series styles).
  function draw(box, series, data, extra = {}) {
    const old = plots.get(box.id);
    if (old) old.destroy();
    Joust.clear(box);
    box.dataset.points = String(data[0].length);
    if (data[0].length < 2) {
      box.append(Joust.el("p", { className: "muted" },
        data[0].length === 0 ? "No history yet: points are written while outcomes arrive." :
          "One point so far; the chart starts with the second."));
      plots.delete(box.id);
      return;
    }
    const opts = {
      width: Math.max(320, box.clientWidth || 800),
      height: 220,
      scales: { x: { time: true } },
      // uPlot's y axis is 50 px wide by default, which cuts "240,000" to "0,000": size it to the
      // longest tick label instead.
      axes: [{}, { size: (u, values) => 24 + 8 * Math.max(3, ...(values || []).map((v) => String(v).length)) }],
      series: [{}, ...series.map((s, i) => ({ label: s, stroke: COLOURS[i % COLOURS.length], width: 2 }))],
    };
    if (extra.axes) opts.axes = extra.axes;
    if (extra.scales) Object.assign(opts.scales, extra.scales);
    (extra.series || []).forEach((s, i) => Object.assign(opts.series[i + 1], s));
    plots.set(box.id, new uPlot(opts, data, box));
  }

  function outcomes(box, points) {
    const xs = points.map((p) => Date.parse(p.at) / 1000);
    draw(box, ["outcomes applied", "ties", "duels issued"], [
      xs,
      points.map((p) => p.outcomes_applied),
      points.map((p) => p.ties_recorded),
      points.map((p) => p.duels_issued),
    ]);
  }

  // Share of the comparisons between two points in which each leading ranker took part (a
  // duel involves two rankers, so the shares of all rankers add up to 2).
  function share(box, history) {
    const pts = history.points;
    const k = history.rankers.length;
    const last = pts[pts.length - 1];
    const comparisons = (p, i) => p.wins[i] + p.losses[i];
    const leaders = last ? [...Array(k).keys()]
      .sort((a, b) => comparisons(last, b) - comparisons(last, a))
      .slice(0, LEADERS) : [];
    const xs = [];
    const ys = leaders.map(() => []);
    for (let n = 1; n < pts.length; n++) {
      const total = pts[n].outcomes_applied - pts[n - 1].outcomes_applied;
      if (total <= 0) continue;
      xs.push(Date.parse(pts[n].at) / 1000);
      leaders.forEach((r, s) => ys[s].push((comparisons(pts[n], r) - comparisons(pts[n - 1], r)) / total));
    }
    draw(box, leaders.map((r) => history.rankers[r]), [xs, ...ys]);
  }

  // The champion over time: every ranker that was ever champion has a row (in order of its first
  // time), and the line steps between rows when the champion changes; solid while the champion
  // is confident, dashed before. Times without a champion leave a gap.
  function champion(box, points) {
    const names = [];
    const row = new Map();
    for (const p of points) {
      if (p.champion !== null && !row.has(p.champion)) {
        row.set(p.champion, names.length);
        names.push(p.champion);
      }
    }
    const y = (p, confident) => (p.champion !== null && p.confident === confident ? row.get(p.champion) : null);
    const longest = Math.max(4, ...names.map((n) => n.length));
    const stepped = uPlot.paths.stepped({ align: 1 });
    draw(box, ["champion, not yet confident", "champion, confident"], [
      points.map((p) => Date.parse(p.at) / 1000),
      points.map((p) => y(p, false)),
      points.map((p) => y(p, true)),
    ], {
      scales: { y: { range: [-0.5, Math.max(0.5, names.length - 0.5)] } },
      axes: [{}, {
        size: Math.min(240, 24 + 7 * longest),
        splits: () => names.map((_, i) => i),
        values: (u, splits) => splits.map((i) => names[i] ?? ""),
      }],
      series: [
        { stroke: "#888", dash: [6, 4], paths: stepped },
        { stroke: COLOURS[0], width: 3, paths: stepped },
      ],
    });
    box.dataset.champions = String(names.length);
  }

  function championChanges(tbody, points) {
    const { el, clear, time } = Joust;
    clear(tbody);
    let previous;
    const rows = [];
    for (const p of points) {
      const key = `${p.champion}|${p.basis}|${p.confident}`;
      if (key === previous) continue;
      previous = key;
      rows.push(el("tr", null,
        el("td", null, new Date(p.at).toLocaleDateString() + " " + time(p.at)),
        el("td", null, p.champion === null ? "none" : p.champion),
        el("td", null, p.basis.replaceAll("_", " ")),
        el("td", null, p.confident ? "yes" : "no")));
    }
    rows.reverse().forEach((r) => tbody.append(r));
    if (rows.length === 0) tbody.append(el("tr", null, el("td", { colSpan: 4, className: "muted" }, "No history yet.")));
  }

  return { outcomes, champion, share, championChanges };
})();
