// The metrics card: every metric of the experiment side by side (its counts, champion and
// decision, and the head-to-head wins of the top rankers), with a flag when the metrics name
// different champions. Drawn from the experiment view's `metrics`, `primary_metric` and
// `metrics_agree`.
"use strict";

const Metrics = (() => {
  // Rankers shown in each metric's head-to-head table: the champions first, then by wins.
  const SHOWN = 6;

  function creditText(m) {
    const credit = { first: "first event", all: "all events", value: "value-weighted" }[m.credit] || m.credit;
    if (m.window_seconds === undefined) return `credit: ${credit}`;
    const hours = m.window_seconds / 3600;
    const window = hours >= 1 ? `${Number(hours.toFixed(1))} h` : `${m.window_seconds} s`;
    return `credit: ${credit}; window ${window}; no event: ${m.missing === "tie" ? "a tie" : "not counted"}`;
  }

  function decisionText(m) {
    const dec = m.decision;
    if (dec.decided) return dec.champion ? `decided: ${dec.champion}` : `decided: ${dec.winners.join(", ")}`;
    return dec.outcomes_needed !== null ? `not decided (about ${Joust.number(dec.outcomes_needed)} more outcomes)` : "not decided";
  }

  // The rankers worth showing, in the same order for every metric (so that the tables compare
  // side by side): champions of any metric first, then by wins under the primary metric.
  function shownRankers(d, m) {
    if (!m.matrix) return [];
    const names = m.matrix.rankers;
    const primary = d.metrics.find((x) => x.primary && x.matrix) || m;
    const wins = names.map((_, i) => primary.matrix.wins[i].reduce((a, b) => a + b, 0));
    const champions = new Set(d.metrics.map((x) => x.champion).filter((c) => c));
    return names
      .map((n, i) => ({ n, i, key: (champions.has(n) ? 1e15 : 0) + wins[i] }))
      .sort((a, b) => b.key - a.key || a.i - b.i)
      .slice(0, SHOWN);
  }

  function matrixTable(d, m) {
    const { el } = Joust;
    const shown = shownRankers(d, m);
    if (shown.length === 0) return el("p", { className: "muted" }, "Too many rankers to list.");
    const head = el("tr", null, el("th", null, "wins of row over column"), ...shown.map((c) => el("th", { className: "num" }, c.n)));
    const rows = shown.map((r) => el("tr", null, el("th", null, r.n),
      ...shown.map((c) => el("td", { className: "num", dataset: { row: r.n, col: c.n } },
        r.i === c.i ? "–" : String(m.matrix.wins[r.i][c.i])))));
    const table = el("table", { className: "grid metric-matrix" }, el("thead", null, head), el("tbody", null, ...rows));
    const all = m.matrix.rankers.length;
    // A cut table says so: without it, six of 136 rankers read as the whole experiment.
    return shown.length < all
      ? el("div", null, table, el("p", { className: "muted" },
        `The ${shown.length} champions and most-winning rankers of ${Joust.number(all)}; the preference matrix below has them all.`))
      : table;
  }

  // What the metrics agree on: `metrics_agree` compares the metrics that have a champion, so
  // a metric without one (no conversions yet) is named apart instead of counted as agreeing.
  function agreement(metrics, champions) {
    const without = metrics.filter((m) => !m.champion).map((m) => m.name);
    if (!champions.length) return "No metric has a champion yet.";
    if (!without.length) return `All ${metrics.length} metrics agree on ${champions[0]}.`;
    const have = metrics.length - without.length;
    return `${have === 1 ? "The one metric with a champion names" : `The ${have} metrics with a champion agree on`} ${champions[0]}; ${without.join(", ")} ${without.length === 1 ? "has" : "have"} no champion yet.`;
  }

  function render(box, d) {
    const { el, clear, number } = Joust;
    clear(box);
    const metrics = d.metrics || [];
    const flag = document.getElementById("metrics-flag");
    const champions = [...new Set(metrics.map((m) => m.champion).filter((c) => c))];
    flag.hidden = d.metrics_agree !== false;
    if (!flag.hidden) {
      clear(flag).append(el("strong", null, "The metrics disagree on the champion: "),
        metrics.filter((m) => m.champion).map((m) => `${m.name} says ${m.champion}`).join(", "),
        `. The policy learns from ${d.primary_metric}.`);
    }
    // One metric is the experiment itself: its champion, decision and matrix are the cards
    // around this one, so the card says so in one line instead of drawing them again.
    const single = metrics.length <= 1;
    document.getElementById("metrics-summary").textContent = !single
      ? (d.metrics_agree ? `${agreement(metrics, champions)} The policy learns from ${d.primary_metric}.` : "")
      : `One metric (${metrics.length ? metrics[0].name : "click"}): the champion, decision and preference matrix on this page are its.`;
    if (single) return;
    for (const m of metrics) {
      const card = el("div", { className: "metric" + (m.primary ? " primary" : ""), dataset: { metric: m.name } },
        el("h3", null, m.name, m.primary ? el("span", { className: "badge good" }, "primary") : null),
        el("p", { className: "muted" }, creditText(m)),
        el("p", { className: "lead" }, m.champion ? `Champion: ${m.champion}` : "No champion yet",
          m.champion && m.champion_confident ? el("span", { className: "badge good" }, "confident") : null),
        el("p", null, `${number(m.outcomes)} outcomes, ${number(m.ties)} ties; ${decisionText(m)}`),
        matrixTable(d, m));
      box.append(card);
    }
  }

  return { render };
})();
