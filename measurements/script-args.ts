/**
 * Arguments of the scripts under measurements/ (speed, load, allocation, demonstration): the same
 * parser as the `socialworld` command (node's parseArgs for the syntax, zod for the values), so a
 * typo or a bad number is one line naming the option, with the usage and exit status 2, and never
 * a stack trace or a run that silently does nothing (`--runs x` used to give NaN runs).
 */
import type { ParseArgsConfig } from "node:util";
import type { z } from "zod";
import { parseCommand, UsageError } from "../cli/args.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface ScriptSpec<T extends z.ZodType> {
  /** The script's name as messages start with it ("speed-tomi"). */
  readonly name: string;
  /** What `--help` prints: the command line and every option. */
  readonly usage: string;
  readonly options: Options;
  /** Checks and converts the option values (positionals, when allowed, come as `_`). */
  readonly schema: T;
  /** Whether the script takes positional arguments (default: none, and any is an error). */
  readonly positionals?: boolean;
}

export type ScriptArgs<T extends z.ZodType> = { readonly help: true } | { readonly help: false; readonly values: z.infer<T> };

/** Parses `argv` for a script; `--help` (or `-h`) anywhere asks for the usage. Throws UsageError. */
export function parseScriptArgs<T extends z.ZodType>(spec: ScriptSpec<T>, argv: readonly string[]): ScriptArgs<T> {
  if (argv.includes("--help") || argv.includes("-h")) return { help: true };
  return { help: false, values: parseCommand(argv, spec.options, spec.schema, spec.positionals ?? false) };
}

/**
 * The script's arguments from process.argv: prints the usage and exits 0 on `--help`, and prints
 * the error and the usage and exits 2 on bad arguments.
 */
export function scriptArgs<T extends z.ZodType>(spec: ScriptSpec<T>, argv: readonly string[] = process.argv.slice(2)): z.infer<T> {
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
