#!/usr/bin/env node
// Builds the native engine with node-gyp (`npm run build:native`; `npm install` runs it too).
// Compiles against the running Node's own headers when they are installed beside it, so the
// build never needs to download them; reconfigures only when there is no build yet.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const gyp = createRequire(import.meta.url).resolve("node-gyp/bin/node-gyp.js");
const prefix = resolve(process.execPath, "..", "..");
const nodedir = existsSync(join(prefix, "include", "node", "node.h")) ? [`--nodedir=${prefix}`] : [];
const rebuild = process.argv.includes("--rebuild") || !existsSync(join(here, "build", "Makefile"));

const run = (args) => {
  const r = spawnSync(process.execPath, [gyp, ...args, "--directory", here, ...nodedir], { stdio: "inherit" });
  if (r.status !== 0) {
    process.stderr.write(`\nsocialworld: building the native engine failed (node-gyp ${args[0]}); it needs a C++17 compiler (g++ or clang), make and python3.\n`);
    process.exit(r.status ?? 1);
  }
};
if (rebuild) run(["configure"]);
run(["build", "-j", "max"]);
