/**
 * Arguments of the scripts under measurements/ (speed, load, allocation, demonstration): the same
 * parser as the `socialworld` command (node's parseArgs for the syntax, zod for the values), so a
 * typo or a bad number is one line naming the option, with the usage and exit status 2, and never
 * a stack trace or a run that silently does nothing (`--runs x` used to give NaN runs).
 *
 * The zod object is the one declaration of a script's options: parseArgs' table is derived from
 * its keys (a boolean is a flag, anything else takes a value), and a key `_` is the positionals.
 * Two tables of the same names drifted apart, and were read as copies of each other.
 */
import type { ParseArgsConfig } from "node:util";
import type { z } from "zod";
import { parseCommand, UsageError } from "../cli/args.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface ScriptSpec<T extends z.ZodObject> {
  /** The script's name as messages start with it ("speed-tomi"). */
  readonly name: string;
  /** What `--help` prints: the command line and every option. */
  readonly usage: string;
  /**
   * Every option, by its long name: checks and converts its value. A key `_` takes the
   * positional arguments (an array or tuple schema); without it any positional is an error.
   */
  readonly schema: T;
}

export type ScriptArgs<T extends z.ZodObject> = { readonly help: true } | { readonly help: false; readonly values: z.infer<T> };

/** Wrappers that leave the type parseArgs reads unchanged: their inner schema says it. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"]);
/** Types read from the text parseArgs gives: the text itself, or its number (with `z.coerce`). */
const TEXT = new Set(["string", "enum", "literal", "template_literal"]);
const COERCED = new Set(["number", "bigint", "date"]);

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly coerce?: boolean;
}

/** How parseArgs reads `--name`: a flag for a boolean, a value for text or a coerced number. */
function optionType(name: string, schema: z.ZodType): "boolean" | "string" {
  let def = schema.def as Def;
  // A transform (or a pipe) reads what its input reads: `z.string().default("1,2").transform(...)`.
  while (WRAPPERS.has(def.type) || def.type === "pipe") def = ((def.type === "pipe" ? def.in : def.innerType) as z.ZodType).def as Def;
  if (def.type === "boolean" && !def.coerce) return "boolean";
  if (TEXT.has(def.type) || (COERCED.has(def.type) && def.coerce)) return "string";
  // A programming error, not a user's: say it when the script starts, not on some argv.
  throw new Error(`script option --${name}: a ${def.type}${def.coerce ? " (coerced)" : ""} schema cannot be read from the command line (use z.string(), z.enum(), z.coerce.number(), intArg(), numArg() or z.boolean())`);
}

/** parseArgs' table of `schema`'s options: every key but `_`, a flag or a value as its type says. */
export function parseArgsOptions(schema: z.ZodObject): Options {
  const shape = schema.shape as Record<string, z.ZodType>;
  return Object.fromEntries(Object.entries(shape).filter(([name]) => name !== "_").map(([name, s]) => [name, { type: optionType(name, s) }]));
}

/** Parses `argv` for a script; `--help` (or `-h`) anywhere asks for the usage. Throws UsageError. */
export function parseScriptArgs<T extends z.ZodObject>(spec: ScriptSpec<T>, argv: readonly string[]): ScriptArgs<T> {
  const options = parseArgsOptions(spec.schema);
  if (argv.includes("--help") || argv.includes("-h")) return { help: true };
  return { help: false, values: parseCommand(argv, options, spec.schema, "_" in spec.schema.shape) };
}

/**
 * The script's arguments from process.argv: prints the usage and exits 0 on `--help`, and prints
 * the error and the usage and exits 2 on bad arguments.
 */
export function scriptArgs<T extends z.ZodObject>(spec: ScriptSpec<T>, argv: readonly string[] = process.argv.slice(2)): z.infer<T> {
  try {
    const parsed = parseScriptArgs(spec, argv);
    if (parsed.help) {
      process.stdout.write(`${spec.usage.trimEnd()}\n`);
      process.exit(0);
    }
    return parsed.values;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${spec.name}: ${err.message}\n\n${spec.usage.trimEnd()}\n`);
    process.exit(2);
  }
}
