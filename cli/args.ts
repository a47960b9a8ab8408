/** Command-line parsing: node's parseArgs for the syntax, zod for the values. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { z } from "zod";

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses `argv` for a command whose options are `schema`'s keys: parseArgs' table is derived from
 * the schema (parseArgsOptions), so each option is declared once. A key `_` takes the positional
 * arguments (an array or tuple schema); without it any positional is an error. Values are checked
 * by `schema`.
 */
export function parseCommand<T extends z.ZodObject>(argv: readonly string[], schema: T): z.infer<T> {
  const options = parseArgsOptions(schema);
  const allowPositionals = "_" in schema.shape;
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(argv, options), options, allowPositionals, strict: true }) as typeof parsed;
  } catch (err) {
    throw new UsageError(parseArgsMessage(err as Error & { code?: string }, Object.keys(options)));
  }
  const result = schema.safeParse({ ...parsed.values, _: parsed.positionals });
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.join(".");
    const name = path === "_" || path.startsWith("_.") ? "argument" : `--${path}`;
    throw new UsageError(`${name}: ${issue.message}`);
  }
  return result.data;
}

/** Wrappers that leave the type parseArgs reads unchanged: their inner schema says it. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"]);
/** Types read from the text parseArgs gives: the text itself, or its number (with `z.coerce`). */
const TEXT = new Set(["string", "enum", "literal", "template_literal"]);
const COERCED = new Set(["number", "bigint", "date"]);

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly element?: z.ZodType;
  readonly coerce?: boolean;
}

/** The definition under `schema`'s wrappers, transforms and pipes: what reads the text. */
function readerOf(schema: z.ZodType): Def {
  let def = schema.def as Def;
  // A transform (or a pipe) reads what its input reads: `z.string().default("1,2").transform(...)`.
  while (WRAPPERS.has(def.type) || def.type === "pipe") def = ((def.type === "pipe" ? def.in : def.innerType) as z.ZodType).def as Def;
  return def;
}

/**
 * How parseArgs reads `--name`: a flag for a boolean, a value for text or a coerced number, and
 * a value that may be given again for an array of those (`--data-root A --data-root B`).
 */
function optionOf(name: string, schema: z.ZodType): Options[string] {
  const def = readerOf(schema);
  if (def.type === "boolean" && !def.coerce) return { type: "boolean" };
  if (TEXT.has(def.type) || (COERCED.has(def.type) && def.coerce)) return { type: "string" };
  if (def.type === "array" && def.element) {
    const element = readerOf(def.element);
    if (TEXT.has(element.type) || (COERCED.has(element.type) && element.coerce)) return { type: "string", multiple: true };
  }
  // A programming error, not a user's: say it when the command starts, not on some argv.
  throw new Error(`option --${name}: a ${def.type}${def.coerce ? " (coerced)" : ""} schema cannot be read from the command line (use z.string(), z.enum(), z.coerce.number(), intArg(), numArg(), z.boolean() or an array of text)`);
}

/** parseArgs' table of `schema`'s options, in its order: every key but `_`, a flag or a value as its type says. */
export function parseArgsOptions(schema: z.ZodObject): Options {
  const shape = schema.shape as Record<string, z.ZodType>;
  return Object.fromEntries(Object.entries(shape).filter(([name]) => name !== "_").map(([name, s]) => [name, optionOf(name, s)]));
}

/** parseArgs' message in one short line, with the nearest known option for a mistyped one. */
function parseArgsMessage(err: Error & { code?: string }, known: readonly string[]): string {
  const unknown = /^Unknown option '(-{1,2}[^']*)'/.exec(err.message);
  if (unknown) {
    const given = unknown[1]!.replace(/=.*$/, "");
    const near = closest(given.replace(/^-+/, ""), known);
    return `unknown option ${given}${near ? ` (did you mean --${near}?)` : ""}`;
  }
  const missing = /^Option '(?:-\w, )?(--[^ ']+) <value>' argument missing/.exec(err.message);
  if (missing) return `${missing[1]} needs a value`;
  return err.message.replace(/^TypeError \[[A-Z_]+\]: /, "");
}

/** The name in `names` nearest to `word` (at most one edit in three letters, and three in all), or one it begins. */
export function closest(word: string, names: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of names) {
    const d = editDistance(word, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  if (best !== undefined && bestDistance <= limit) return best;
  return word.length >= 3 ? names.find((n) => n.startsWith(word)) : undefined;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (`--dtaa` for `--data`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * `--seed -1` as `--seed=-1`: parseArgs reads a value starting with a dash as an option and
 * answers with a paragraph about ambiguity; a negative number after an option that takes a value
 * is that value, and the option's schema then says what is wrong with it, as for any other value.
 */
function joinNegativeNumbers(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === "string" && next !== undefined && /^-\.?\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * A number option. The message is for text that is not a number only: a schema-wide `error` in
 * zod 4 also replaces the messages of later checks, so "--n 0" used to say "expected a number".
 */
export const numArg = (what = "expected a number") => z.coerce.number({ error: (issue) => (issue.code === "invalid_type" ? what : undefined) });

export const intArg = (min: number, max = Number.MAX_SAFE_INTEGER) => numArg().int("expected an integer").min(min).max(max);
