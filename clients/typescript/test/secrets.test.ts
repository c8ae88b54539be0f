// No secret in what a program prints: a client logged with console.log (util.inspect) or turned
// into JSON shows no API key, however deep the inspection goes.

import assert from "node:assert/strict";
import { inspect } from "node:util";
import { describe, it } from "node:test";

import { JoustClient } from "../src/index.ts";

const KEY = "jk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

function shownForms(value: unknown): string[] {
  const forms = [inspect(value, { depth: Infinity, showHidden: true }), String(value)];
  try {
    forms.push(JSON.stringify(value));
  } catch {
    // Not serialisable (a buffer holds timers): nothing is printed that way.
  }
  return forms;
}

describe("secrets", () => {
  it("a client shows no API key in any printed form", () => {
    const client = new JoustClient({ baseUrl: "http://127.0.0.1:1", apiKey: KEY });
    for (const shown of shownForms(client)) {
      assert.ok(!shown.includes(KEY) && !shown.includes("Bearer"), shown);
    }
  });

  it("an outcome buffer holding a client shows no API key either", async () => {
    const client = new JoustClient({ baseUrl: "http://127.0.0.1:1", apiKey: KEY });
    const buffer = client.outcomeBuffer();
    try {
      for (const shown of shownForms(buffer)) {
        assert.ok(!shown.includes(KEY) && !shown.includes("Bearer"), shown);
      }
    } finally {
      await buffer.close();
    }
  });
});
