// The list page: every experiment the key reaches (its project's, or every one for a global
// key) with its status, policy, size, outcomes, champion and whether its decision is decided.
"use strict";

(() => {
  const { el, clear, number } = Joust;

  async function refresh() {
    const items = [];
    let after = 0;
    let changed = false;
    for (;;) {
      const page = await Joust.get("/v1/experiments?limit=200&after=" + after);
      changed = changed || page.changed;
      items.push(...page.body.experiments);
      if (page.body.next_after === null) break;
      after = page.body.next_after;
    }
    if (!changed && document.body.dataset.loaded) return;
    const { project } = await Joust.keyInfo();
    document.querySelector("h1").textContent =
      project === null ? "Experiments" : "Experiments of project " + project;
    const tbody = clear(document.querySelector("#experiments tbody"));
    for (const e of items) {
      const verdict = e.decided ? "decided" : e.champion_confident ? "confident, not decided" : "not decided";
      const champion = e.champion === null ? el("span", { className: "muted" }, "none yet") :
        el("span", null, e.champion, " ",
          el("span", { className: e.decided ? "badge good" : "badge" }, verdict));
      tbody.append(el("tr", { dataset: { id: e.id } },
        el("td", null, el("a", { href: "/ui/experiments/" + e.id }, e.name), " ",
          el("span", { className: "muted" }, "#" + e.id)),
        el("td", null, el("span", { className: "badge " + e.status }, e.status)),
        el("td", null, e.policy.name),
        el("td", { className: "num" }, number(e.rankers)),
        el("td", { className: "num" }, number(e.outcomes_applied)),
        el("td", { className: "champion" }, champion)));
    }
    document.getElementById("empty").hidden = items.length > 0;
    document.body.dataset.loaded = "1";
  }

  Joust.poll(refresh);
})();
