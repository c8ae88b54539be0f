// The preference matrix as a table of coloured cells: one per ordered pair of active rankers,
// each with data-row/data-col (the rankers' names) and the numbers in its title. Cells are
// small and labels sit one per row/column, so 136 rankers stay legible; the box scrolls.
"use strict";

const Heatmap = (() => {
  // Diverging colour: red (row loses) through white (1/2) to blue (row wins).
  function colour(p) {
    const t = Math.max(-1, Math.min(1, (p - 0.5) * 2));
    const a = Math.round(255 * (1 - Math.abs(t)));
    return t >= 0 ? `rgb(${a},${Math.round(a + (255 - a) * 0.35)},255)` : `rgb(255,${a},${a})`;
  }

  function render(box, m) {
    const { el, clear } = Joust;
    const k = m.rankers.length;
    const small = k > 24;
    const table = el("table", { className: small ? "hm small" : "hm" });
    const head = el("tr", null, el("th", { className: "corner" }, "row \u2193 beats column \u2192"));
    for (const name of m.rankers) head.append(el("th", { className: "col", title: name }, el("span", null, name)));
    table.append(el("thead", null, head));
    const body = document.createElement("tbody");
    for (let i = 0; i < k; i++) {
      const tr = el("tr", null, el("th", { className: "row", title: m.rankers[i] }, m.rankers[i]));
      for (let j = 0; j < k; j++) {
        const td = document.createElement("td");
        td.dataset.row = m.rankers[i];
        td.dataset.col = m.rankers[j];
        if (i === j) {
          td.className = "self";
        } else {
          const n = m.wins[i][j] + m.wins[j][i] + m.ties[i][j];
          const p = m.preference[i][j];
          td.style.backgroundColor = n === 0 ? "#ddd" : colour(p);
          td.title = `${m.rankers[i]} vs ${m.rankers[j]}: P(win) ${p.toFixed(3)}, ` +
            `${Math.round(m.confidence * 100)}% interval [${m.lower[i][j].toFixed(3)}, ${m.upper[i][j].toFixed(3)}]; ` +
            `${m.wins[i][j]} wins, ${m.wins[j][i]} losses, ${m.ties[i][j]} ties`;
          if (!small) td.textContent = n === 0 ? "" : p.toFixed(2);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(body);
    clear(box).append(table);
  }

  return { render };
})();
