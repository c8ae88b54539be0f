// Serves the results page of the browser test from its own origin (another port than joust's):
// an HTML page that loads the browser module, transpiled from src/browser.ts as it is.

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import ts from "typescript";

const browserSource = join(dirname(fileURLToPath(import.meta.url)), "../../src/browser.ts");

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>results</title></head>
<body>
<script type="module">
  import * as joust from "/browser.js";
  window.joust = joust;
  window.moduleReady = true;
</script>
</body></html>`;

export interface PageServer {
  origin: string;
  close(): Promise<void>;
}

export async function startPageServer(): Promise<PageServer> {
  const module = ts.transpileModule(readFileSync(browserSource, "utf8"), {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText;
  const server: Server = createServer((request, response) => {
    if (request.url === "/browser.js") {
      response.writeHead(200, { "content-type": "text/javascript" }).end(module);
    } else if (request.url === "/") {
      response.writeHead(200, { "content-type": "text/html" }).end(page);
    } else if (request.url === "/favicon.ico") {
      response.writeHead(204).end(); // else the browser logs a 404 for it
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
