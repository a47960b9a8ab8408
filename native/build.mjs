#!/usr/bin/env node
// Builds the native engine with node-gyp (`npm run build:native`; `npm install` runs it too).
// Compiles against the running Node's own headers when they are installed beside it, so the
// build never needs to download them; reconfigures only when there is no build yet or the
// configuration changed.
//
// With nvcc (CUDA_HOME or CUDA_PATH, else nvcc on PATH, else /usr/local/cuda), the addon gets the
// CUDA backend: build.mjs compiles src/kernels/cuda/*.cu with nvcc into build/cuda/ and links
// them with the static CUDA runtime. cuBLAS is loaded at run time, so none is needed to build.
// Without nvcc it builds the CPU-only addon. It says which it built, and why.
//
//   --rebuild     reconfigure and rebuild everything
//   --emulator    also build socialworld_native_emulated.node (the CUDA backend on a host
//                 emulator, for the GPU parity tests where there is no GPU)
//   SOCIALWORLD_CUDA=0 / =1      never / always (fail without nvcc) build the CUDA backend
//   SOCIALWORLD_CUDA_ARCH=90,80  GPU architectures (machine code for each, PTX for the newest)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const build = join(here, "build");
const gyp = createRequire(import.meta.url).resolve("node-gyp/bin/node-gyp.js");
const prefix = resolve(process.execPath, "..", "..");
const nodedir = existsSync(join(prefix, "include", "node", "node.h")) ? [`--nodedir=${prefix}`] : [];
const say = (msg) => process.stdout.write(`socialworld: ${msg}\n`);
const die = (msg, code = 1) => {
  process.stderr.write(`\nsocialworld: ${msg}\n`);
  process.exit(code);
};

/** The CUDA toolkit to build with, or why there is none. */
function findCuda() {
  const mode = process.env.SOCIALWORLD_CUDA;
  if (mode === "0") return { reason: "SOCIALWORLD_CUDA=0" };
  const candidates = [];
  for (const v of ["CUDA_HOME", "CUDA_PATH"]) if (process.env[v]) candidates.push(join(process.env[v], "bin", "nvcc"));
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir) candidates.push(join(dir, "nvcc"));
  candidates.push("/usr/local/cuda/bin/nvcc");
  const nvcc = candidates.find((c) => existsSync(c));
  if (!nvcc) return { reason: "no nvcc found (set CUDA_HOME or put nvcc on PATH to build the CUDA backend)" };
  // nvcc may be a wrapper script: ask it where it lives (its dry run prints _HERE_=<bin>).
  mkdirSync(build, { recursive: true });
  const probe = join(build, "nvcc-probe.cu");
  writeFileSync(probe, "");
  const here_ = /^#\$ _HERE_=(.*)$/m.exec(spawnSync(nvcc, ["-dryrun", "-c", probe], { encoding: "utf8" }).stderr ?? "")?.[1];
  const home = dirname(here_ ? here_.trim() : dirname(realpathSync(nvcc)));
  const lib = [join(home, "lib64"), join(home, "targets", "x86_64-linux", "lib"), join(home, "lib")].find((d) => existsSync(join(d, "libcudart_static.a")));
  if (!lib) return { reason: `${nvcc} has no libcudart_static.a beside it (in ${home}/lib64)` };
  const version = /release ([\d.]+)/.exec(spawnSync(nvcc, ["--version"], { encoding: "utf8" }).stdout ?? "")?.[1] ?? "unknown";
  const archs = (process.env.SOCIALWORLD_CUDA_ARCH ?? "90")
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  if (archs.length === 0 || archs.some((a) => !/^\d+a?$/.test(a))) die(`SOCIALWORLD_CUDA_ARCH must list compute capabilities like 90 or 90,80 (got "${process.env.SOCIALWORLD_CUDA_ARCH}")`);
  return { nvcc: realpathSync(nvcc), home, lib, version, archs };
}

/** nvcc's flags: machine code for every architecture, PTX of the newest (for later GPUs). */
function nvccFlags(cuda) {
  const gencode = cuda.archs.flatMap((a) => ["-gencode", `arch=compute_${a},code=sm_${a}`]);
  const newest = [...cuda.archs].sort((x, y) => parseInt(y) - parseInt(x))[0];
  gencode.push("-gencode", `arch=compute_${newest},code=compute_${newest}`);
  const targets = [...cuda.archs.map((a) => `sm_${a}`), `compute_${newest}`].join(",");
  return { flags: ["-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-Xcompiler", "-fexceptions", ...gencode, `-DSW_CUDA_ARCHS="${targets}"`], label: `${targets.replace(/,compute_/, " + PTX compute_").replace(/,/g, " + ")}` };
}

const CUDA_DIR = join(here, "src", "kernels", "cuda");
const CUDA_UNITS = ["cuda_backend.cu", "attention.cu", "cublas.cpp"];

/** Compiles the CUDA units that are older than a source they include or the flags; true if any was. */
async function compileCuda(cuda, flags) {
  const out = join(build, "cuda");
  mkdirSync(out, { recursive: true });
  const stampFile = join(out, "flags.json");
  const stamp = JSON.stringify({ nvcc: cuda.nvcc, flags });
  const sameFlags = existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp;
  // The units include this folder's files (but the emulator's), backend.h and sampler.h: any
  // newer one rebuilds all.
  const inputs = [
    ...readdirSync(CUDA_DIR)
      .filter((f) => !f.startsWith("emulat"))
      .map((f) => join(CUDA_DIR, f)),
    join(here, "src", "kernels", "backend.h"),
    join(here, "src", "sampler.h"),
  ];
  const newest = Math.max(...inputs.map((f) => statSync(f).mtimeMs));
  const stale = CUDA_UNITS.filter((u) => {
    const obj = join(out, u.replace(/\.\w+$/, ".o"));
    return !sameFlags || !existsSync(obj) || statSync(obj).mtimeMs < newest;
  });
  if (stale.length === 0) return false;
  const t0 = Date.now();
  say(`compiling ${stale.join(", ")} with nvcc ${cuda.version} (${stale.length} at a time)`);
  const jobs = stale.map(
    (u) =>
      new Promise((resolveJob) => {
        const obj = join(out, u.replace(/\.\w+$/, ".o"));
        const p = spawn(cuda.nvcc, [...flags, "-c", join(CUDA_DIR, u), "-o", obj], { stdio: "inherit" });
        p.on("close", (code) => resolveJob({ u, code }));
      }),
  );
  const failed = (await Promise.all(jobs)).filter((j) => j.code !== 0);
  if (failed.length > 0) die(`nvcc failed on ${failed.map((j) => j.u).join(", ")} (set SOCIALWORLD_CUDA=0 to build the CPU-only addon)`);
  writeFileSync(stampFile, stamp);
  say(`nvcc took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return true;
}

function runGyp(args) {
  const r = spawnSync(process.execPath, [gyp, ...args, "--directory", here, ...nodedir], { stdio: "inherit" });
  if (r.status !== 0) die(`building the native engine failed (node-gyp ${args[0]}); it needs a C++17 compiler (g++ or clang), make and python3.`, r.status ?? 1);
}

const cuda = findCuda();
if (process.env.SOCIALWORLD_CUDA === "1" && !cuda.nvcc) die(`SOCIALWORLD_CUDA=1 but ${cuda.reason}`);
const nv = cuda.nvcc ? nvccFlags(cuda) : undefined;
// The configuration gyp was run with; a different one reconfigures. Once built, the emulated
// addon stays in the build (kept up to date) until --rebuild.
const configFile = join(build, "socialworld-config.json");
const previous = existsSync(configFile) ? readFileSync(configFile, "utf8") : "";
const fresh = process.argv.includes("--rebuild");
const emulator = process.argv.includes("--emulator") || (!fresh && previous !== "" && JSON.parse(previous).emulator === true);
const config = { cuda: cuda.nvcc ? { lib: cuda.lib } : null, emulator };
const rebuild = fresh || !existsSync(join(build, "Makefile")) || previous !== JSON.stringify(config);

const t0 = Date.now();
let relink = false;
if (cuda.nvcc) relink = await compileCuda(cuda, nv.flags);
if (rebuild) {
  runGyp(["configure", `--socialworld_cuda=${cuda.nvcc ? 1 : 0}`, `--socialworld_emulator=${emulator ? 1 : 0}`, `--cuda_lib=${cuda.lib ?? ""}`]);
  writeFileSync(configFile, JSON.stringify(config));
}
// make does not see the CUDA objects as inputs of the link: drop the addon so that it relinks.
if (relink)
  for (const f of ["Release/socialworld_native.node", "Release/obj.target/socialworld_native.node"]) rmSync(join(build, f), { force: true });
runGyp(["build", "-j", String(Math.max(1, cpus().length))]);
const took = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
if (cuda.nvcc) say(`built the native engine with the CUDA backend (nvcc ${cuda.version} at ${cuda.home}; ${nv.label}; cuBLAS is loaded at run time) in ${took}`);
else say(`built the CPU-only native engine (${cuda.reason}) in ${took}`);
if (emulator) say("built socialworld_native_emulated.node too (the CUDA backend on the host emulator)");
