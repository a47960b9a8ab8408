#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script, or `npm run build`):
// dist/bundle/socialworld.js (one bundled module graph: faster to start) when it is at least as new
// as the compiled files in dist/cli/, else dist/cli/main.js (a `tsc` alone does not rebuild the bundle).
import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/cli/main.js", import.meta.url);
const bundled = new URL("../dist/bundle/socialworld.js", import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write("socialworld: dist/ is missing; run `npm run build` (or `npm install`) in the checkout first.\n");
  process.exit(1);
}
const fresh = (url) => {
  try {
    return statSync(url).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
};
const entry = process.env.SOCIALWORLD_NO_BUNDLE ? compiled : fresh(bundled) ? bundled : compiled;
// `socialworld runs list | head -1`: a reader that stops early is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
}
// cli() is main() under the command's compiler policy (dist/cli/optimizer-policy.js).
const { cli } = await import(entry.href);
process.exitCode = await cli(process.argv.slice(2));
