/**
 * The yes-or-no options a world's benchmark declares itself (BenchmarkEntry.flags: the social
 * prompt's facts, `--stance`...), on the command line. Their one declaration is the world's: a
 * command that takes benchmark options (`bench`, `train grpo`) reads the world its command line
 * names before parsing it, and adds that world's flags to its schema; a command for another world
 * loads no other world's folder.
 */
import { z } from "zod";
import { parseCommand, UsageError } from "./args.js";
import type { BenchmarkFlag } from "../worlds/core/world-entry.js";
import { isWorldName, loadWorld, worldsWith } from "../worlds/registry.js";

/** The world a command line names: its first argument (`bench social`) or the value of one of `options` (`--world social`). */
export function worldNamed(argv: readonly string[], options: readonly string[] = []): string | undefined {
  const names: string[] = [];
  if (argv[0] !== undefined && !argv[0].startsWith("-")) names.push(argv[0]);
  for (let i = 0; i < argv.length; i++) {
    for (const o of options) {
      if (argv[i] === `--${o}` && argv[i + 1] !== undefined) names.push(argv[i + 1]!);
      else if (argv[i]!.startsWith(`--${o}=`)) names.push(argv[i]!.slice(o.length + 3));
    }
  }
  return names.find(isWorldName);
}

/** The flags of world `name`'s benchmark (none for an unknown world or one without a benchmark). */
async function benchmarkFlags(name: string | undefined): Promise<readonly BenchmarkFlag[]> {
  if (name === undefined || !isWorldName(name)) return [];
  return (await loadWorld(name)).benchmark?.flags ?? [];
}

/**
 * Parses a command line whose options are `schema`'s and the flags of world `world`'s benchmark
 * (each a boolean): the options, and the flags given as BenchmarkOptions' `flags` (undefined when
 * none is). Another world's flag is refused naming the worlds it applies to.
 */
export async function parseWithFlags<T extends z.ZodObject>(
  argv: readonly string[],
  schema: T,
  world: string | undefined,
): Promise<{ args: z.infer<T>; flags: Readonly<Record<string, boolean>> | undefined }> {
  const flags = await benchmarkFlags(world);
  let values: Record<string, unknown>;
  try {
    values = parseCommand(argv, schema.extend(Object.fromEntries(flags.map((f) => [f.key, z.boolean().optional()])))) as Record<string, unknown>;
  } catch (err) {
    const unknown = err instanceof UsageError ? /^unknown option --([\w-]+)/.exec(err.message) : null;
    if (unknown) {
      const takers = (await worldsWith("benchmark")).filter((w) => w.benchmark!.flags?.some((f) => f.key === unknown[1])).map((w) => w.name);
      if (takers.length) throw new UsageError(`--${unknown[1]} does not apply to ${world ?? "this command"} (it applies to ${takers.join(", ")})`);
    }
    throw err;
  }
  const on = flags.filter((f) => values[f.key] === true).map((f) => [f.key, true] as const);
  return { args: values as z.infer<T>, flags: on.length ? Object.fromEntries(on) : undefined };
}

/** Help lines for every world's flags, under a heading per world: "Social only:\n  --stance  ...". */
export async function flagsHelp(indent = 23): Promise<string> {
  const blocks: string[] = [];
  for (const w of await worldsWith("benchmark")) {
    if (!w.benchmark!.flags?.length) continue;
    const lines = w.benchmark!.flags.map((f) => `  ${`--${f.key}`.padEnd(indent - 2)}${wrap(f.help, 100 - indent).join(`\n${" ".repeat(indent)}`)}`);
    blocks.push(`${w.title} only (flags of its benchmark):\n${lines.join("\n")}`);
  }
  return blocks.join("\n\n");
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
