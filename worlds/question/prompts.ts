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

/**
 * Simulation mode's question (prompts/simulation-answer.txt) over a socialized context already
 * written out as text (the LLM agent sends JSON, the policies a line per timestep).
 */
export function simulationAnswerText(task: { readonly question: string; readonly choices?: readonly string[] }, context: string): string {
  // A question that lists its options itself (FANToM's "(a) ... (b) ... Choose an answer from
  // above:") is not given them a second time.
  const choices = task.choices?.length && !task.choices.every((c) => task.question.includes(c)) ? `Choices: ${task.choices.join(", ")}\n` : "";
  return fill(promptTemplate("simulation-answer"), { context, question: task.question, choices });
}

/** A template split once into its literal parts and its `{name}` slots (odd indexes). */
const compiled = new Map<string, readonly string[]>();

export function fill(template: string, values: Readonly<Record<string, string>>): string {
  let parts = compiled.get(template);
  if (!parts) {
    parts = template.trimEnd().split(/\{(\w+)\}/);
    compiled.set(template, parts);
  }
  let out = "";
  for (let i = 0; i < parts.length; i++) out += i % 2 === 0 ? parts[i]! : (values[parts[i]!] ?? `{${parts[i]!}}`);
  return out.trimEnd();
}
