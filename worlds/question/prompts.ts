/**
 * Prompt templates live in files (`prompts/*.txt` beside the code that asks them: a world's own
 * in worlds/<world>/prompts/, simulation mode's here in worlds/question/prompts/) so they can be
 * read, diffed and edited without touching code. `{name}` placeholders are filled by `fill`.
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
    if (isPackageRoot(dir)) return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the socialworld package root (the folder whose package.json names socialworld)");
    dir = up;
  }
}

function isPackageRoot(dir: string): boolean {
  const file = join(dir, "package.json");
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === "socialworld";
  } catch {
    return false;
  }
}

const cache = new Map<string, string>();

/** The template at `path`, relative to the checkout's root ("worlds/tomi/prompts/tomi-vanilla.txt"). */
export function promptTemplate(path: string): string {
  let text = cache.get(path);
  if (text === undefined) {
    text = readFileSync(join(packageRoot(), path), "utf8");
    cache.set(path, text);
  }
  return text;
}

/**
 * Simulation mode's question (worlds/question/prompts/simulation-answer.txt) over a socialized context already
 * written out as text (the LLM agent sends JSON, the policies a line per timestep).
 */
export function simulationAnswerText(task: { readonly question: string; readonly choices?: readonly string[] }, context: string): string {
  // A question that lists its options itself (FANToM's "(a) ... (b) ... Choose an answer from
  // above:") is not given them a second time.
  const choices = task.choices?.length && !task.choices.every((c) => task.question.includes(c)) ? `Choices: ${task.choices.join(", ")}\n` : "";
  return fill(promptTemplate("worlds/question/prompts/simulation-answer.txt"), { context, question: task.question, choices });
}

/** The question over a compact socialized context (worlds/tomi/compact-context.ts): shorter, for small policies. */
export function simulationCompactText(task: { readonly question: string }, heading: string, context: string): string {
  return fill(promptTemplate("worlds/question/prompts/simulation-compact.txt"), { heading, context, question: task.question });
}

/**
 * The question a policy answers by writing the story's context itself (simulation mode with
 * `context=self`, worlds/core/written-context.ts): the story, the question, and what to write.
 */
export function simulationSelfText(task: { readonly story: string; readonly question: string }, heading: string): string {
  // Trimmed: Hi-ToM's stories end in blank lines, which would stand between the story and the question.
  return fill(promptTemplate("worlds/question/prompts/simulation-self.txt"), { story: task.story.trimEnd(), question: task.question, heading });
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
