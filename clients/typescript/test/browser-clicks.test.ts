// The browser click helper in headless Chromium, from a page on another origin, posting clicks
// with the interleaving token alone to a server that has API keys: the token (with the page's
// origin listed in the experiment's browser_clicks) is the only way in. Covers fetch with
// keepalive (a CORS preflight), sendBeacon when fetch is missing, and sendBeacon once the page
// is hidden.
//
// Needs a server with browser clicks. Against one without, the preflight gets no CORS headers:
// then, and only then, the test is skipped, and says so loudly.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, it } from "node:test";

import { chromium, type Browser, type Page } from "playwright-core";

import { JoustClient, JoustError, type Experiment, type Interleaving } from "../src/index.ts";
import type { PostClicksResult } from "../src/browser.ts";
import { removeDataDir, startJoust, type JoustServer } from "./support/joust-server.ts";
import { startPageServer, type PageServer } from "./support/page-server.ts";
import { eventually } from "./support/wait.ts";

const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const keys = {
  admin: "browser-admin-key-for-tests-0123456789",
  ingest: "browser-ingest-key-for-tests-0123456789",
};

/** The page's module, as the page sees it. */
interface PageWindow {
  moduleReady?: boolean;
  joust: typeof import("../src/browser.ts");
}

describe("browser clicks from another origin", () => {
  let server: JoustServer;
  let pageServer: PageServer;
  let admin: JoustClient;
  let experiment: Experiment;
  let skipReason: string | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startJoust({ apiKeys: `admin:${keys.admin},ingest:${keys.ingest}` });
    pageServer = await startPageServer();
    admin = new JoustClient({ baseUrl: server.baseUrl, apiKey: keys.admin });
    let creationNote = "";
    try {
      experiment = await admin.createExperiment({
        name: "browser",
        rankers: ["bm25", "bert"],
        browser_clicks: { origins: [pageServer.origin] },
      });
    } catch (error) {
      // A server without the feature refuses the field; the preflight below then decides.
      const unknownField =
        error instanceof JoustError &&
        error.status < 500 &&
        error.message.includes("browser_clicks");
      if (!unknownField) throw error;
      creationNote = ` (creating the experiment with browser_clicks was refused: ${error.message})`;
      experiment = await admin.createExperiment({ name: "browser", rankers: ["bm25", "bert"] });
    }
    const preflight = await fetch(`${server.baseUrl}/v1/clicks`, {
      method: "OPTIONS",
      headers: {
        origin: pageServer.origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    if (preflight.headers.get("access-control-allow-origin") === null) {
      skipReason =
        `the server at ${server.baseUrl} (JOUST_BIN=${process.env.JOUST_BIN ?? "default"}) answered the ` +
        `CORS preflight of POST /v1/clicks with HTTP ${preflight.status} and no ` +
        `Access-Control-Allow-Origin: it has no browser clicks${creationNote}`;
      const banner = "!".repeat(100);
      console.error(`\n${banner}\nSKIPPED: browser click test: ${skipReason}\n${banner}\n`);
      return;
    }
    assert.ok(
      existsSync(chromiumPath),
      `no Chromium at ${chromiumPath} (apt-get install chromium)`,
    );
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    await page.goto(`${pageServer.origin}/`);
    await page.waitForFunction(() => (window as unknown as PageWindow).moduleReady === true);
  });

  after(async () => {
    await browser?.close();
    await pageServer.close();
    await server.stop();
    removeDataDir(server.dataDir);
  });

  /** A shown list, as the backend would make it and hand its token to the page. */
  async function shownList(): Promise<Interleaving> {
    const backend = new JoustClient({ baseUrl: server.baseUrl, apiKey: keys.ingest });
    const duel = await backend.duel(experiment.id);
    const lists = Object.fromEntries(duel.rankers.map((r) => [r, [`${r}-1`, `${r}-2`]]));
    return backend.interleave(duel, lists);
  }

  async function recordedCount(): Promise<number> {
    const e = await admin.experiment(experiment.id);
    return e.outcomes_applied + e.ties_recorded;
  }

  it("posts with fetch keepalive, and a repeat is a duplicate", async (t) => {
    if (skipReason !== undefined) {
      t.skip(skipReason);
      return;
    }
    const shown = await shownList();
    const post = (): Promise<PostClicksResult> =>
      page.evaluate(
        ([baseUrl, token]) =>
          (window as unknown as PageWindow).joust.postClicks({
            baseUrl,
            interleavingToken: token,
            clickPositions: [0],
          }),
        [server.baseUrl, shown.token ?? ""] as const,
      );
    const first = await post();
    assert.ok(first.transport === "fetch" && first.ok, JSON.stringify(first));
    assert.equal(first.record.status, "recorded");
    const again = await post();
    assert.ok(again.transport === "fetch" && again.ok, JSON.stringify(again));
    assert.equal(again.record.status, "duplicate");
    assert.equal(await recordedCount(), 1);
  });

  it("falls back to sendBeacon with a text/plain body when fetch is missing", async (t) => {
    if (skipReason !== undefined) {
      t.skip(skipReason);
      return;
    }
    const shown = await shownList();
    const result = await page.evaluate(
      async ([baseUrl, token]) => {
        const w = window as unknown as PageWindow & { fetch: unknown };
        const saved = w.fetch;
        w.fetch = undefined;
        try {
          return await w.joust.postClicks({
            baseUrl,
            interleavingToken: token,
            clickPositions: [1],
          });
        } finally {
          w.fetch = saved;
        }
      },
      [server.baseUrl, shown.token ?? ""] as const,
    );
    assert.deepEqual(result, { transport: "beacon", ok: true });
    const count = await eventually(recordedCount, (n) => n === 2);
    assert.equal(count, 2, "the beacon's clicks were not recorded");
  });

  it("uses sendBeacon once the page is hidden", async (t) => {
    if (skipReason !== undefined) {
      t.skip(skipReason);
      return;
    }
    const shown = await shownList();
    const result = await page.evaluate(
      ([baseUrl, token, clickedId]) =>
        new Promise<PostClicksResult>((resolve) => {
          const w = window as unknown as PageWindow;
          w.joust.whenPageHides(() => {
            void w.joust
              .postClicks({ baseUrl, interleavingToken: token, clicked: [clickedId] })
              .then(resolve);
          });
          Object.defineProperty(document, "visibilityState", {
            value: "hidden",
            configurable: true,
          });
          document.dispatchEvent(new Event("visibilitychange"));
        }),
      [server.baseUrl, shown.token ?? "", shown.ids[0] ?? ""] as const,
    );
    assert.deepEqual(result, { transport: "beacon", ok: true });
    const count = await eventually(recordedCount, (n) => n === 3);
    assert.equal(count, 3, "the hidden page's clicks were not recorded");
    assert.deepEqual(pageErrors, []);
  });

  it("records nothing for an experiment that does not list the page's origin", async (t) => {
    if (skipReason !== undefined) {
      t.skip(skipReason);
      return;
    }
    const closed = await admin.createExperiment({ name: "no browser clicks", rankers: ["a", "b"] });
    const backend = new JoustClient({ baseUrl: server.baseUrl, apiKey: keys.ingest });
    const duel = await backend.duel(closed.id);
    const shown = await backend.interleave(
      duel,
      Object.fromEntries(duel.rankers.map((r) => [r, [`${r}-1`]])),
    );
    const result = await page.evaluate(
      ([baseUrl, token]) =>
        (window as unknown as PageWindow).joust.postClicks({
          baseUrl,
          interleavingToken: token,
          clickPositions: [0],
          transport: "fetch",
        }),
      [server.baseUrl, shown.token ?? ""] as const,
    );
    // Refused (401/403), or unreadable to the page for want of CORS headers (status 0).
    assert.equal(result.ok, false, JSON.stringify(result));
    const e = await admin.experiment(closed.id);
    assert.equal(e.outcomes_applied + e.ties_recorded, 0);
  });
});
