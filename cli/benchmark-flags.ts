/**
 * The yes-or-no options a world's benchmark declares itself (BenchmarkEntry.flags: the social
 * prompt's facts, `--stance`...), on the command line. Their one declaration is the world's: a
 * command that takes benchmark options (`bench`, `train grpo`) reads the world its command line
 * names before parsing it, and adds that world's flags to its schema; a command for another world
 * loads no other world's folder. Help texts and the errors of a flag that is not the named
 * world's load the worlds that declare flags (the registry lists them), not every world.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { parseArgsOptions, parseCommand, UsageError } from "./args.js";
import type { BenchmarkFlag } from "../worlds/core/world-entry.js";
import { isWorldName, loadWorld, worldsWithFlags } from "../worlds/registry.js";

/**
 * The registry world a command line of `schema` names: its first argument (`bench social`) or
 * the value of one of `options` (`--world social`), wherever it stands among the options (`bench
 * --stance social`, `bench --limit 3 social`). Options the schema lacks (the flags) are read as
 * yes-or-no, as the flags are. Undefined when no registry world is named.
 */
export function worldNamed(argv: readonly string[], schema: z.ZodObject, options: readonly string[] = []): string | undefined {
  const { values, positionals } = parseArgs({ args: [...argv], options: parseArgsOptions(schema), strict: false, allowPositionals: true });
  const names = [positionals[0], ...options.map((o) => values[o])];
  return names.find((n): n is string => typeof n === "string" && isWorldName(n));
}

/** A benchmark flag and the world that declares it. */
type WorldFlag = BenchmarkFlag & { readonly world: string };

/** The flags of world `name`'s benchmark (none for an unknown world or one without a benchmark). */
async function benchmarkFlags(name: string | undefined): Promise<readonly WorldFlag[]> {
  if (name === undefined || !isWorldName(name)) return [];
  return ((await loadWorld(name)).benchmark?.flags ?? []).map((f) => ({ ...f, world: name }));
}

/** `schema` with `flags` as yes-or-no options; a flag named as one of its options is a programming error, named. */
function withFlags(schema: z.ZodObject, flags: readonly WorldFlag[]): z.ZodObject {
  for (const f of flags) if (Object.hasOwn(schema.shape, f.key)) throw new Error(`the ${f.world} world's benchmark flag --${f.key} is also an option of this command`);
  return schema.extend(Object.fromEntries(flags.map((f) => [f.key, z.boolean().optional()])));
}

/**
 * Parses a command line whose options are `schema`'s and the flags of the world it names (the
 * positional or one of `worldOptions`; see worldNamed), each a boolean: the options, and the flags
 * given as BenchmarkOptions' `flags` (undefined when none is). Another world's flag is refused
 * naming the worlds it applies to; when no world is named, the command's own error about its
 * world is given (every world's flags are taken then).
 */
export async function parseWithFlags<T extends z.ZodObject>(
  argv: readonly string[],
  schema: T,
  worldOptions: readonly string[] = [],
): Promise<{ args: z.infer<T>; flags: Readonly<Record<string, boolean>> | undefined }> {
  const world = worldNamed(argv, schema, worldOptions);
  let flags = await benchmarkFlags(world);
  let values: Record<string, unknown>;
  try {
    values = parseCommand(argv, withFlags(schema, flags)) as Record<string, unknown>;
  } catch (err) {
    const unknown = err instanceof UsageError ? /^unknown option --([\w-]+)/.exec(err.message) : null;
    if (!unknown) throw err;
    const flagged = await worldsWithFlags();
    const takers = flagged.filter((w) => w.benchmark!.flags!.some((f) => f.key === unknown[1])).map((w) => w.name);
    if (!takers.length) throw err;
    if (world !== undefined) throw new UsageError(`--${unknown[1]} does not apply to ${world} (it applies to ${takers.join(", ")})`);
    // No registry world named (`bench nope --stance`): what is wrong is the world, which the
    // command's schema says once the flags are no longer unknown.
    const keys = new Set<string>();
    flags = flagged.flatMap((w) => w.benchmark!.flags!.filter((f) => !keys.has(f.key) && keys.add(f.key)).map((f) => ({ ...f, world: w.name })));
    values = parseCommand(argv, withFlags(schema, flags)) as Record<string, unknown>;
  }
  const on = flags.filter((f) => values[f.key] === true).map((f) => [f.key, true] as const);
  return { args: values as z.infer<T>, flags: on.length ? Object.fromEntries(on) : undefined };
}

/** Help lines for world `name`'s flags ("  --stance  ..."), the help starting at column `indent`; "" for a world without flags. */
export async function flagsHelp(name: string, indent = 23): Promise<string> {
  return (await benchmarkFlags(name)).map((f) => `  ${`--${f.key}`.padEnd(indent - 2)}${wrap(f.help, 100 - indent).join(`\n${" ".repeat(indent)}`)}\n`).join("");
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
