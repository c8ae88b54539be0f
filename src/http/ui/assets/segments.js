// The segments card: per segment label its counts, champion and decision, and the head-to-head
// wins of the rankers that matter, with a flag when the segments name different champions.
// Drawn from the experiment view's `segments`; hidden for an experiment whose duels carry no
// segment.
"use strict";

const Segments = (() => {
  // Segments listed (most outcomes first) and segments given a head-to-head table.
  const ROWS_SHOWN = 20;
  const TABLES_SHOWN = 6;
  // Rankers in each segment's table: the champions first, then by wins over all segments.
  const RANKERS_SHOWN = 6;

  function decisionText(dec) {
    if (dec.decided) return dec.champion ? `decided: ${dec.champion}` : `decided: ${dec.winners.join(", ")}`;
    if (dec.possible_best.length === 0) return "not decided";
    const names = dec.possible_best.slice(0, 4).join(", ");
    const more = dec.possible_best.length > 4 ? ` and ${dec.possible_best.length - 4} more` : "";
    return `not decided: ${names}${more} may still be best`;
  }

  // The same rankers, in the same order, for every segment's table, so the tables compare side
  // by side: the experiment's and every segment's champion first, then by wins over all
  // segments.
  function shownRankers(report, overall) {
    const names = report.rankers;
    const listed = report.segments.filter((s) => s.wins);
    const wins = names.map((_, i) => listed.reduce((t, s) => t + s.wins[i].reduce((a, b) => a + b, 0), 0));
    const champions = new Set([overall, ...report.segments.map((s) => s.champion)].filter((c) => c));
    return names
      .map((n, i) => ({ n, i, key: (champions.has(n) ? 1e15 : 0) + wins[i] }))
      .sort((a, b) => b.key - a.key || a.i - b.i)
      .slice(0, RANKERS_SHOWN);
  }

  function matrixTable(seg, shown) {
    const { el } = Joust;
    const head = el("tr", null, el("th", null, "row beats column (wins)"), ...shown.map((c) => el("th", { className: "num" }, c.n)));
    const rows = shown.map((r) => el("tr", null, el("th", null, r.n),
      ...shown.map((c) => el("td", { className: "num", dataset: { row: r.n, col: c.n } },
        r.i === c.i ? "–" : String(seg.wins[r.i][c.i])))));
    return el("table", { className: "grid metric-matrix" }, el("thead", null, head), el("tbody", null, ...rows));
  }

  function render(card, d) {
    const { el, clear, number } = Joust;
    const report = d.segments;
    const segments = report ? [...report.segments].sort((a, b) => (b.outcomes + b.ties) - (a.outcomes + a.ties)) : [];
    card.hidden = segments.length === 0;
    if (card.hidden) return;
    const overall = d.champion.ranker;
    const champions = [...new Set(segments.map((s) => s.champion).filter((c) => c))];
    const flag = document.getElementById("segments-flag");
    flag.hidden = champions.length < 2;
    if (!flag.hidden) {
      clear(flag).append(el("strong", null, "The segments disagree on the champion: "),
        segments.filter((s) => s.champion).slice(0, ROWS_SHOWN).map((s) => `${s.label} says ${s.champion}`).join(", "), ".");
    }
    const summary = [`${number(segments.length)} segment${segments.length === 1 ? "" : "s"} of at most ${number(report.max_segments)}.`];
    if (champions.length === 1) summary.push(`All name ${champions[0]}${champions[0] === overall ? ", as all traffic does" : ""}.`);
    summary.push("The policy learns from all traffic, so a segment whose winner differs may lack the comparisons its own decision needs.");
    clear(document.getElementById("segments-summary")).append(summary.join(" "));

    const tbody = clear(document.querySelector("#segments-table tbody"));
    for (const s of segments.slice(0, ROWS_SHOWN)) {
      tbody.append(el("tr", { dataset: { segment: s.label } },
        el("td", null, s.label),
        el("td", { className: "num" }, number(s.outcomes)),
        el("td", { className: "num" }, number(s.ties)),
        el("td", { className: "ranker" }, s.champion || "none yet",
          s.champion && s.champion_confident ? el("span", { className: "badge good" }, "confident") : null),
        el("td", null, decisionText(s.decision))));
    }
    clear(document.getElementById("segments-more")).append(segments.length > ROWS_SHOWN
      ? `The ${ROWS_SHOWN} segments with the most outcomes of ${number(segments.length)}.` : "");

    const box = clear(document.getElementById("segments-list"));
    const cut = clear(document.getElementById("segments-cut"));
    const tabled = segments.filter((s) => s.wins).slice(0, TABLES_SHOWN);
    if (tabled.length === 0) {
      box.append(el("p", { className: "muted" }, "Too many rankers to list each segment's wins."));
      return;
    }
    const shown = shownRankers(report, overall);
    for (const s of tabled) {
      box.append(el("div", { className: "metric", dataset: { segment: s.label } },
        el("h3", null, s.label),
        el("p", { className: "lead" }, s.champion ? `Champion: ${s.champion}` : "No champion yet"),
        matrixTable(s, shown)));
    }
    // A cut table says so: six rankers of many, or some segments of many, read as the whole.
    const cuts = [];
    if (shown.length < report.rankers.length) {
      cuts.push(`Each table shows the ${shown.length} champions and most-winning rankers of ${number(report.rankers.length)}.`);
    }
    if (tabled.length < segments.length) cuts.push(`Tables for the ${tabled.length} segments with the most outcomes of ${number(segments.length)}.`);
    cut.append(cuts.join(" "));
  }

  return { render };
})();
