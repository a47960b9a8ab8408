/**
 * Prompt templates live in files (benchmarks/prompts/*.txt) so they can be read, diffed and
 * edited without touching code. `{name}` placeholders are filled by `fill`.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/** The checkout's root (works from the TypeScript sources and from dist/). */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "benchmarks", "prompts"))) return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the socialworld package root (benchmarks/prompts)");
    dir = up;
  }
}

const cache = new Map<string, string>();

export function promptTemplate(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(join(packageRoot(), "benchmarks", "prompts", `${name}.txt`), "utf8");
    cache.set(name, text);
  }
  return text;
}

export function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole).trimEnd();
}
