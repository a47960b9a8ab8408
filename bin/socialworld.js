#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script, or `npm run build`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("socialworld: dist/ is missing; run `npm run build` (or `npm install`) in the checkout first.\n");
  process.exit(1);
}
// `socialworld runs list | head -1`: a reader that stops early is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
