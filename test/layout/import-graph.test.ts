/**
 * The import graph, read from the sources (every static, type-only and dynamic import, and
 * re-exports): no file imports from a higher layer, no files import each other in a loop, a
 * registered world's folder is entered only through its index.ts, and the web client takes only
 * the protocol module from the server. The rules are checked on the tree as it is, and shown to
 * catch each kind of breach on small made-up trees.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { WORLD_NAMES } from "../../worlds/registry.js";

/**
 * Layers, lowest first. A file may import from its own layer and below. Folders that share a
 * layer may import each other (file loops aside); measurements/ sit just below the command line.
 */
const LAYERS: readonly (readonly string[])[] = [["worlds"], ["store"], ["models", "agents"], ["benchmarks", "trainers"], ["server"], ["measurements"], ["cli", "client"]];

/**
 * Imports allowed across layers all the same, each with its reason. The measurement scripts take
 * their options as the command line does, with its parser (a leaf module: node's parseArgs and zod).
 */
const ALLOWED_UPWARD: readonly { readonly from: string; readonly to: string }[] = [{ from: "measurements/", to: "cli/args.ts" }];

/** The files the web client may import from outside client/: types and constants only. */
const CLIENT_MAY_IMPORT = ["server/protocol.ts"];

const rankOf = (folder: string): number | undefined => {
  const i = LAYERS.findIndex((layer) => layer.includes(folder));
  return i < 0 ? undefined : i;
};

export interface Problem {
  readonly kind: "upward" | "loop" | "world internals" | "client" | "unresolved";
  readonly detail: string;
}

/** Relative imports of one source, as paths from the root (`.js` read as the `.ts` it compiles from). */
function importsOf(file: string, source: string, exists: (path: string) => boolean): { to: string; spec: string }[] {
  const out: { to: string; spec: string }[] = [];
  for (const { fileName: spec } of ts.preProcessFile(source, true, true).importedFiles) {
    if (!spec.startsWith(".")) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    const candidates = [target.replace(/\.js$/, ".ts"), target, `${target}.ts`, `${target}/index.ts`];
    out.push({ to: candidates.find(exists) ?? target, spec });
  }
  return out;
}

/** What breaks the rules in `sources` (path from the root -> text). */
export function importGraphProblems(sources: ReadonlyMap<string, string>, worlds: readonly string[]): Problem[] {
  const problems: Problem[] = [];
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const edges: string[] = [];
    graph.set(file, edges);
    for (const { to, spec } of importsOf(file, text, (p) => sources.has(p))) {
      if (!sources.has(to)) {
        // A data file or a package beside the sources (the client's Vite config) is not a module here.
        if (/\.(ts|js)$/.test(to) && !to.startsWith("node_modules/")) problems.push({ kind: "unresolved", detail: `${file} imports "${spec}", which is no source file` });
        continue;
      }
      edges.push(to);
      const [fromTop, toTop] = [file.split("/")[0]!, to.split("/")[0]!];
      const [fromRank, toRank] = [rankOf(fromTop), rankOf(toTop)];
      const allowed = ALLOWED_UPWARD.some((a) => file.startsWith(a.from) && to === a.to);
      if (fromRank !== undefined && toRank !== undefined && toRank > fromRank && !allowed) {
        problems.push({ kind: "upward", detail: `${file} (${fromTop}/) imports ${to} (${toTop}/, a higher layer)` });
      }
      if (fromTop === "client" && toTop !== "client" && !CLIENT_MAY_IMPORT.includes(to)) {
        problems.push({ kind: "client", detail: `${file} imports ${to}: the web client takes only ${CLIENT_MAY_IMPORT.join(", ")} from the server` });
      }
      const world = worlds.find((w) => to.startsWith(`worlds/${w}/`));
      if (world && !file.startsWith(`worlds/${world}/`) && to !== `worlds/${world}/index.ts`) {
        problems.push({ kind: "world internals", detail: `${file} imports ${to}: outside worlds/${world}/, import its entry point, worlds/${world}/index.ts` });
      }
    }
  }
  for (const loop of loopsOf(graph)) problems.push({ kind: "loop", detail: `${loop.join(" -> ")} -> ${loop[0]!}` });
  return problems;
}

/** Every loop of files importing each other, as one path around each strongly connected component (Tarjan's). */
function loopsOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) loops.push(pathAround(component, graph));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return loops;
}

/** A cycle through a strongly connected component, for the message (from its first file back to it). */
function pathAround(component: readonly string[], graph: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  // Breadth-first from the start's successors back to the start, inside the component.
  const from = new Map<string, string>();
  const queue = (graph.get(start) ?? []).filter((w) => members.has(w));
  for (const w of queue) from.set(w, start);
  while (queue.length && !from.has(`${start}#`)) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (w === start) from.set(`${start}#`, v);
      else if (members.has(w) && !from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  const path: string[] = [];
  for (let v = from.get(`${start}#`) ?? start; v !== start; v = from.get(v)!) path.unshift(v);
  return [start, ...path];
}

const root = resolve(import.meta.dirname, "../..");
const SOURCE_FOLDERS = ["worlds", "store", "models", "agents", "benchmarks", "trainers", "server", "measurements", "cli", "client"];

function readTree(): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules" && e.name !== "dist") walk(path);
      } else if (/\.(ts|mts)$/.test(e.name) && !e.name.endsWith(".d.ts")) {
        sources.set(relative(root, path).split("\\").join("/"), readFileSync(path, "utf8"));
      }
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(join(root, folder));
  return sources;
}

describe("the import graph", () => {
  it("has no upward import, no loop, no import of a world's internals, and a client that takes only the protocol", () => {
    const sources = readTree();
    expect(sources.size).toBeGreaterThan(200);
    expect(sources.has(join("worlds", "registry.ts").split("\\").join("/"))).toBe(true);
    expect(importGraphProblems(sources, WORLD_NAMES)).toEqual([]);
  });

  it("catches an import from a higher layer, through a type or a dynamic import too", () => {
    const tree = new Map([
      ["worlds/core/loop.ts", `import type { Agent } from "../../agents/agent.js";`],
      ["agents/agent.ts", `export interface Agent {}`],
      ["store/log.ts", `const m = await import("../server/main.js");`],
      ["server/main.ts", ``],
      ["agents/llm.ts", `import { x } from "../models/config.js"; import { y } from "../store/log.js";`],
      ["models/config.ts", `export const x = 1;`],
    ]);
    expect(importGraphProblems(tree, [])).toEqual([
      { kind: "upward", detail: "worlds/core/loop.ts (worlds/) imports agents/agent.ts (agents/, a higher layer)" },
      { kind: "upward", detail: "store/log.ts (store/) imports server/main.ts (server/, a higher layer)" },
    ]);
    // measurements/ may use anything below the command line, and of the command line its option parser only.
    const scripts = new Map([
      ["measurements/speed.ts", `import { parseCommand } from "../cli/args.js"; import { main } from "../cli/main.js"; import "../server/main.js";`],
      ["cli/args.ts", ``],
      ["cli/main.ts", ``],
      ["server/main.ts", ``],
    ]);
    expect(importGraphProblems(scripts, []).map((p) => p.detail)).toEqual(["measurements/speed.ts (measurements/) imports cli/main.ts (cli/, a higher layer)"]);
  });

  it("catches files that import each other, however long the loop", () => {
    const tree = new Map([
      ["worlds/a.ts", `import { b } from "./b.js";`],
      ["worlds/b.ts", `export { c } from "./sub/c.js";`],
      ["worlds/sub/c.ts", `import type { a } from "../a.js";`],
      ["worlds/d.ts", `import "./a.js";`],
      ["agents/x.ts", `const y = () => import("./y.js");`],
      ["agents/y.ts", `import { x } from "./x.js";`],
    ]);
    expect(importGraphProblems(tree, [])).toEqual([
      { kind: "loop", detail: "agents/x.ts -> agents/y.ts -> agents/x.ts" },
      { kind: "loop", detail: "worlds/a.ts -> worlds/b.ts -> worlds/sub/c.ts -> worlds/a.ts" },
    ]);
  });

  it("catches an import of a world's files from outside its folder, and a client that imports the server", () => {
    const tree = new Map([
      ["worlds/registry.ts", `const load = () => import("./tomi/index.js");`],
      ["worlds/tomi/index.ts", `export { TomiBenchmark } from "./benchmark.js";`],
      ["worlds/tomi/benchmark.ts", `import { fill } from "../question/prompts.js";`],
      ["worlds/question/prompts.ts", ``],
      ["server/room.ts", `import { TomiBenchmark } from "../worlds/tomi/benchmark.js"; import { world } from "../worlds/tomi/index.js";`],
      ["server/protocol.ts", ``],
      ["client/src/view.ts", `import { C2S } from "../../server/protocol.js"; import type { Room } from "../../server/room.js";`],
    ]);
    expect(importGraphProblems(tree, ["tomi"])).toEqual([
      { kind: "world internals", detail: "server/room.ts imports worlds/tomi/benchmark.ts: outside worlds/tomi/, import its entry point, worlds/tomi/index.ts" },
      { kind: "client", detail: "client/src/view.ts imports server/room.ts: the web client takes only server/protocol.ts from the server" },
    ]);
  });

  it("says when an import names no source file", () => {
    const tree = new Map([["worlds/a.ts", `import { b } from "./b.js";`]]);
    expect(importGraphProblems(tree, [])).toEqual([{ kind: "unresolved", detail: `worlds/a.ts imports "./b.js", which is no source file` }]);
  });
});

// The rules above name real folders: if one is renamed, the layer list must follow.
describe("the layer list", () => {
  it("names every source folder, and each once", () => {
    const named = LAYERS.flat();
    expect([...named].sort()).toEqual([...SOURCE_FOLDERS].sort());
    expect(new Set(named).size).toBe(named.length);
  });
});
