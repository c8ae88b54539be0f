/* global process, console */
// `npm install ./clients/typescript` (and `npm pack`, `npm publish`) run this to build dist/.
// Installing a folder links it without installing the folder's own devDependencies, so the
// compiler may be missing: it then comes from the lockfile first (npm ci), pinned as in CI.

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

if (!existsSync(tsc)) {
  console.log("joust-client: installing the build tools (npm ci) to build dist/");
  execFileSync(npm, ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: root,
    stdio: "inherit",
  });
}
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
