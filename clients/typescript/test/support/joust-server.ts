// Starts a real joust server for a test: JOUST_BIN (default <repo>/target/release/joust), a
// fresh data dir (embedded Postgres) unless one is given, and an address from its first line.

import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const joustBin = process.env.JOUST_BIN ?? join(repoRoot, "target/release/joust");

export interface JoustServer {
  baseUrl: string;
  port: number;
  dataDir: string;
  /** SIGTERM, then waits for the process to exit (the data dir stays). */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** `scope:key` pairs, comma separated, as --api-keys takes them. */
  apiKeys?: string;
  /** Reuse a data dir (a restart); default a fresh temporary one. */
  dataDir?: string;
  /** Listen on this port; default any free one. */
  port?: number;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "joust-ts-"));
  // Run as root, joust runs Postgres as user `postgres`, which must reach the dir (mkdtemp: 0700).
  chmodSync(dir, 0o755);
  return dir;
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function startJoust(options: StartOptions = {}): Promise<JoustServer> {
  const dataDir = options.dataDir ?? freshDataDir();
  const args = ["serve", "--listen", `127.0.0.1:${options.port ?? 0}`, "--data-dir", dataDir];
  if (options.apiKeys !== undefined) args.push("--api-keys", options.apiKeys);
  const env = { ...process.env };
  delete env.JOUST_API_KEYS;
  delete env.JOUST_LISTEN;
  delete env.JOUST_DATA_DIR;
  const child = spawn(joustBin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolveExit) => {
    child.once("exit", () => {
      running.delete(child);
      resolveExit();
    });
  });
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`joust did not start within 60 s; stderr:\n${stderr}`));
    }, 60_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${joustBin} (set JOUST_BIN): ${error.message}`));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`joust exited before listening; stderr:\n${stderr}`));
    });
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const match = /^joust listening on (http:\/\/\S+)/.exec(line);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
  });
  return {
    baseUrl,
    port: Number(new URL(baseUrl).port),
    dataDir,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(killer);
    },
  };
}

/** A port nothing listens on right now (for a server to take later, or to be refused on). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => {
        resolvePort(port);
      });
    });
  });
}
