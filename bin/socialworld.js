#!/bin/sh
":" //; exec node ${SOCIALWORLD_NODE_FLAGS---max-semi-space-size=4} "$0" "$@"
// The two lines above are a shell script that starts Node on this same file with the flags in
// SOCIALWORLD_NODE_FLAGS (default: --max-semi-space-size=4); to Node they are a string and a
// comment. The flag caps V8's young generation at 2 x 4 MB instead of 2 x 16 MB: a benchmark run
// of a few seconds then touches 24 MB less fresh memory, and saves the page faults that would cost
// (docs/performance.md, "The young generation"; the figures in docs/results.md). V8 sizes its heap as it starts, so only
// Node's command line can say it. `node bin/socialworld.js ...` runs the same command with V8's
// defaults.
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script, or `npm run build`):
// dist/bundle/socialworld.cjs (one bundled module graph, CommonJS: faster to start, see
// cli/bundle.mjs) when it is at least as new as the compiled files in dist/cli/, else
// dist/cli/main.js, an ES module (a `tsc` alone does not rebuild the bundle).
// This file is CommonJS too (bin/package.json says so): an ES module here would start Node's ES
// module loader, about 20 ms of CPU, for every command.
"use strict";
const { existsSync, statSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

const compiled = join(__dirname, "..", "dist", "cli", "main.js");
const bundled = join(__dirname, "..", "dist", "bundle", "socialworld.cjs");
if (!existsSync(compiled)) {
  process.stderr.write("socialworld: dist/ is missing; run `npm run build` (or `npm install`) in the checkout first.\n");
  process.exit(1);
}
const fresh = (file) => {
  try {
    return statSync(file).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
};
const fromBundle = !process.env.SOCIALWORLD_NO_BUNDLE && fresh(bundled);
// `socialworld runs list | head -1`: a reader that stops early is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
}
// A failure main() does not turn into an exit status rejects, and Node reports it and exits with
// status 1.
(fromBundle ? Promise.resolve(require(bundled)) : import(pathToFileURL(compiled).href))
  .then(({ main }) => main(process.argv.slice(2)))
  .then((code) => {
    process.exitCode = code;
  });
