// One experiment: champion in words, the decision, leaderboard, preference heatmap, history charts,
// contenders and interleaving settings; admin actions for admin keys. Refreshes itself.
"use strict";

(() => {
  const { el, clear, number } = Joust;
  const id = Number(location.pathname.split("/").pop());
  const base = "/v1/experiments/" + id;
  let detail = null;
  let matrix = null;

  const BASIS = {
    confident_condorcet: (c) => [c, " is the best ranker: it beats every other active ranker, each with 95% confidence."],
    policy: (c, d) => [c, ` is the champion by the policy's own verdict (${d.policy.name} kept it as the best).`],
    condorcet_candidate: (c) => [c, " beats every other contender so far, but not yet with 95% confidence: keep the experiment running."],
    copeland: (c, d) => [c, ` leads, but no ranker beats all others yet: it beats ${d.champion.copeland_score} of the other contenders.`],
  };

  function championText(d) {
    const c = d.champion;
    const text = clear(document.getElementById("champion-text"));
    const more = clear(document.getElementById("champion-detail"));
    if (c.ranker === null || !BASIS[c.basis]) {
      text.append("No champion yet: no outcome has been recorded.");
      return;
    }
    const name = el("strong", { className: "ranker" }, c.ranker);
    text.append(...BASIS[c.basis](name, d));
    const bits = [c.confident ? "Confident at 95%." : "Not yet confident."];
    if (c.condorcet_candidate !== null && c.condorcet_candidate !== c.ranker) bits.push(`Empirical Condorcet candidate: ${c.condorcet_candidate}.`);
    if (c.policy_belief !== null && c.policy_belief !== c.ranker) bits.push(`The policy believes in ${c.policy_belief}.`);
    if (d.rankers_per_query > 2) {
      // A multileaved query records a result for every pair of its rankers.
      bits.push(`${number(d.outcomes_applied)} pairwise outcomes, ${number(d.ties_recorded)} ties, from ${number(d.duels_issued)} queries issued.`);
    } else {
      bits.push(`${number(d.outcomes_applied)} outcomes, ${number(d.ties_recorded)} ties, ${number(d.duels_issued)} duels issued.`);
    }
    more.append(bits.join(" "));
  }

  const pct = (x) => (x * 100).toFixed(1) + "%";
  const ROWS_SHOWN = 8;
  const RIVALS_SHOWN = 3;
  const about = (n) => (n === null || n === undefined ? null : "about " + number(n));

  // The decision: decided or not, who may still be best and what evidence is missing.
  function decision(d) {
    const dec = d.decision;
    const s = d.decision_settings;
    const level = `${pct(1 - s.delta)}`;
    const text = clear(document.getElementById("decision-text"));
    const more = clear(document.getElementById("decision-detail"));
    if (dec.decided && dec.champion !== null) {
      text.append("Decided: ", el("strong", { className: "ranker" }, dec.champion),
        s.epsilon > 0
          ? ` is the best ranker: with probability at least ${level}, no ranker beats it by more than ${pct(s.epsilon)}.`
          : ` is the best ranker: with probability at least ${level}, it beats every other active ranker.`);
    } else if (dec.decided) {
      text.append(`Decided: no ranker beats all others; with probability at least ${level} the best are the Copeland set `,
        el("strong", { className: "ranker" }, dec.winners.join(", ")), ".");
    } else {
      text.append(`Not decided yet: ${number(dec.possible_best_total)} ranker${dec.possible_best_total === 1 ? "" : "s"} may still be best.`);
      const need = about(dec.outcomes_needed);
      more.append(need ? `Roughly ${need} more outcomes should decide it, if the rankers keep playing as they have.`
        : "Not enough evidence yet to estimate how many more outcomes a decision needs.");
    }
    // The leaders only (the API lists the closest to a decision first), each with its
    // closest calls: a 136-ranker experiment starts with every ranker lacking everything.
    const tbody = clear(document.querySelector("#possible-best tbody"));
    const shown = dec.decided ? [] : dec.possible_best.slice(0, ROWS_SHOWN);
    document.getElementById("possible-best").hidden = shown.length === 0;
    for (const c of shown) {
      // The API lists what the decision needs most first, rivals never compared last: those
      // are counted rather than named (early on they are most rivals, and alike).
      const compared = c.missing.filter((m) => m.comparisons > 0);
      const calls = compared.slice(0, RIVALS_SHOWN).map((m) => {
        const need = about(m.outcomes_needed);
        return `${m.rival}: ${pct(m.preference)} [${pct(m.lower)}, ${pct(m.upper)}] from ${number(m.comparisons)}` +
          (need ? `, ${need} more` : "");
      });
      if (c.never_compared > 0) calls.push(`${number(c.never_compared)} never compared`);
      tbody.append(el("tr", { dataset: { ranker: c.ranker } },
        el("td", { className: "ranker" }, c.ranker),
        el("td", { className: "num" }, number(c.missing_total)),
        el("td", null, calls.length ? calls.join("; ") : "none: it waits on its rivals' evidence")));
    }
    const total = dec.possible_best_total;
    clear(document.getElementById("possible-best-more")).append(!dec.decided && total > shown.length
      ? `The ${shown.length} closest to a decision of the ${number(total)} rankers that may still be best.` : "");
    const rules = [`Error probability ${s.delta}, indifference margin ${s.epsilon}; confirmation duels ` +
      (s.confirmation ? `on (at most ${pct(s.max_confirmation_share)} of duels).` : "off.")];
    rules.push(d.stop_rule ? `Concludes itself once decided and at least ${number(d.stop_rule.min_outcomes)} outcomes are applied.`
      : "Does not conclude itself.");
    if (d.webhook) rules.push(`Events are posted to ${d.webhook.url}.`);
    clear(document.getElementById("decision-rules")).append(rules.join(" "));
  }

  function meta(d) {
    document.getElementById("name").textContent = d.name;
    document.title = "joust: " + d.name;
    const m = clear(document.getElementById("meta"));
    m.append(el("span", { className: "badge " + d.status }, d.status), ` policy ${d.policy.name}, ties ${d.tie_rule.replace("_", " ")}, ` +
      `attribution window ${d.attribution_window_secs} s, experiment #${d.id}, version ${d.version}, data from ` + Joust.time(d.updated_at));
  }

  function interval(m, i, j) {
    return `${(m.preference[i][j] * 100).toFixed(1)}% [${(m.lower[i][j] * 100).toFixed(1)}, ${(m.upper[i][j] * 100).toFixed(1)}]`;
  }

  function leaderboard(d, m, admin) {
    const tbody = clear(document.querySelector("#leaderboard tbody"));
    const champ = d.champion.ranker;
    const pos = new Map((m ? m.rankers : []).map((n, i) => [n, i]));
    const rate = (r) => (r.wins + r.losses > 0 ? r.wins / (r.wins + r.losses) : -1);
    const rows = [...d.rankers].sort((a, b) =>
      (b.name === champ) - (a.name === champ) || b.active - a.active || rate(b) - rate(a) || a.index - b.index);
    document.querySelector("#leaderboard th.admin-only").hidden = !admin;
    rows.forEach((r, n) => {
      let vs = "";
      if (r.name === champ) vs = el("span", { className: "badge good" }, "champion");
      else if (champ !== null && pos.has(r.name) && pos.has(champ)) {
        const i = pos.get(r.name);
        const j = pos.get(champ);
        vs = m.wins[i][j] + m.wins[j][i] + m.ties[i][j] > 0 ? interval(m, i, j) : el("span", { className: "muted" }, "not compared yet");
      } else if (!r.active) vs = el("span", { className: "muted" }, "retired");
      const tr = el("tr", { dataset: { ranker: r.name } },
        el("td", { className: "num" }, n + 1),
        el("td", { className: "ranker" }, r.name),
        el("td", null, r.active ? "active" : "retired"),
        el("td", { className: "num" }, number(r.wins)),
        el("td", { className: "num" }, number(r.losses)),
        el("td", { className: "num" }, number(r.ties)),
        el("td", { className: "num" }, number(r.comparisons)),
        el("td", { className: "vs" }, vs));
      if (admin) {
        tr.append(el("td", null, r.active ? el("button", {
          type: "button", className: "retire",
          onclick: () => confirmAction(`Retire ranker ${r.name}? It stops being compared and its name is never reused.`,
            () => Joust.send("DELETE", base + "/rankers/" + encodeURIComponent(r.name))),
        }, "Retire") : ""));
      }
      tbody.append(tr);
    });
  }

  function contenders(d) {
    const p = clear(document.getElementById("contenders"));
    const c = d.champion.contenders;
    const active = d.rankers.filter((r) => r.active).length;
    if (c.length < active) p.append(`${c.length} of ${active} active rankers are still in contention: ${c.join(", ")}.`);
    else p.append(`All ${active} active rankers are in contention (${d.policy.name} does not eliminate rankers, or none yet).`);
  }

  function interleaving(d) {
    const dl = clear(document.getElementById("interleaving"));
    const s = d.interleaving;
    const add = (k, v) => dl.append(el("dt", null, k), el("dd", null, v));
    add("Rankers per query", d.rankers_per_query > 2 ? `up to ${d.rankers_per_query} (multileaved)` : "2 (a duel)");
    add("Method", s.method.replaceAll("_", " "));
    add("List length", s.max_length);
    for (const [k, v] of Object.entries(s.options || {})) add(k.replaceAll("_", " "), typeof v === "object" ? JSON.stringify(v) : String(v));
  }

  // Admin actions ask for confirmation on the page, then refresh.
  let pending = null;
  function confirmAction(text, action) {
    pending = action;
    document.getElementById("confirm-text").textContent = text;
    document.getElementById("confirm").hidden = false;
  }
  document.getElementById("confirm-no").onclick = () => {
    pending = null;
    document.getElementById("confirm").hidden = true;
  };
  document.getElementById("confirm-yes").onclick = async () => {
    const action = pending;
    pending = null;
    document.getElementById("confirm").hidden = true;
    const result = document.getElementById("action-result");
    try {
      await action();
      result.textContent = "Done.";
    } catch (e) {
      result.textContent = "Refused: " + e.message;
    }
    refreshNow();
  };
  for (const b of document.querySelectorAll("#actions button[data-status]")) {
    b.onclick = () => confirmAction(`${b.textContent} this experiment?` +
      (b.dataset.status === "concluded" ? " Concluding is final: it then always answers its champion." : ""),
      () => Joust.send("PATCH", base, { status: b.dataset.status }));
  }

  async function refresh() {
    const d = await Joust.get(base);
    const admin = ["admin", "open"].includes(await Joust.keyScope());
    const m = await Joust.get(base + "/matrix").catch((e) => {
      if (e instanceof Joust.ApiError && e.code === "matrix_too_large") return { changed: false, body: null, tooLarge: true };
      throw e;
    });
    const h = await Joust.get(base + "/history?max_points=500");
    const adminChanged = document.body.dataset.admin !== String(admin);
    if (d.changed || m.changed || adminChanged) {
      detail = d.body;
      matrix = m.body;
      meta(detail);
      championText(detail);
      decision(detail);
      Metrics.render(document.getElementById("metrics-list"), detail);
      Segments.render(document.getElementById("segments"), detail);
      leaderboard(detail, matrix, admin);
      document.getElementById("actions").hidden = !admin;
      contenders(detail);
      interleaving(detail);
    }
    if (m.changed) Heatmap.render(document.getElementById("heatmap"), matrix);
    if (m.tooLarge) clear(document.getElementById("heatmap")).append("Too many rankers for a heatmap.");
    if (h.changed) {
      Charts.outcomes(document.getElementById("chart-outcomes"), h.body.points);
      Charts.champion(document.getElementById("chart-champion"), h.body.points);
      Charts.share(document.getElementById("chart-share"), h.body);
      Charts.championChanges(document.querySelector("#champion-changes tbody"), h.body.points);
    }
    document.body.dataset.admin = String(admin);
    document.body.dataset.version = String(detail.version);
    // Milliseconds from navigation to the first complete render (docs/benchmarks.md reports it).
    if (!document.body.dataset.loaded) document.body.dataset.renderMs = String(Math.round(performance.now()));
    document.body.dataset.loaded = "1";
  }

  const refreshNow = Joust.poll(refresh);
})();
