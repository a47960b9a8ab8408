#!/bin/sh
":" //; exec node ${SOCIALWORLD_NODE_FLAGS---max-semi-space-size=4} "$0" "$@"
// The two lines above are a shell script that starts Node on this same file with the flags in
// SOCIALWORLD_NODE_FLAGS (default: --max-semi-space-size=4); to Node they are a string and a
// comment. The flag caps V8's young generation at 2 x 4 MB instead of 2 x 16 MB: a benchmark run
// of a few seconds then touches 24 MB less fresh memory, and the page faults that saves are 8% of
// the ToMi val run's CPU (README, "The young generation"). V8 sizes its heap as it starts, so only
// Node's command line can say it. `node bin/socialworld.js ...` runs the same command with V8's
// defaults.
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
