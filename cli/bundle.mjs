// Bundles the compiled command line (dist/cli/main.js and everything it imports from this
// project, plus zod) into dist/bundle/: a few files instead of ~300 separate ES modules, which
// Node would otherwise resolve, read and compile one by one at every start (about 0.09 s of CPU
// per command on the project's machine). Other packages stay external and load from node_modules.
// Commands are imported lazily by cli/main.ts, so each becomes a chunk of its own.
//
// The bundle is CommonJS (.cjs, strict mode, as ES modules are), loaded by bin/socialworld.js
// with require(): Node 20's ES module loader costs a command 30-40 ms of CPU at every start (its
// own start-up, then resolving, linking and evaluating each module asynchronously; what the bundle
// saves is measured in docs/results.md, "The bundled command line"). Packages published only as ES modules (hyparquet, the Colyseus transport)
// are require()d as Node 20.19 and later allow (package.json engines).
// bin/socialworld.js uses the bundle when it is at least as new as dist/cli/main.js.
// Run by `npm run build` after tsc.
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const BUNDLED = ["zod", "lowdb", "steno"];
const root = fileURLToPath(new URL("..", import.meta.url));
const dir = `${root}dist/bundle`;
rmSync(dir, { recursive: true, force: true });
await build({
  cwd: root,
  input: { socialworld: `${root}dist/cli/main.js` },
  platform: "node",
  // zod is bundled (its ~120 files are a third of the start-up); no package we load hands it our
  // schemas. lowdb and its steno are bundled too: every run opens the store, and their dozen small
  // files cost more to resolve than to run.
  external: (id) => !id.startsWith(".") && !id.startsWith("/") && !BUNDLED.some((p) => id === p || id.startsWith(`${p}/`)),
  logLevel: "warn",
  output: { dir, format: "cjs", strict: true, entryFileNames: "[name].cjs", chunkFileNames: "[name]-[hash].cjs", sourcemap: false },
});
