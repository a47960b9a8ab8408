/**
 * Arguments of the scripts under measurements/ (speed, load, allocation, demonstration): the same
 * parser as the `socialworld` command (node's parseArgs for the syntax, zod for the values), so a
 * typo or a bad number is one line naming the option, with the usage and exit status 2, and never
 * a stack trace or a run that silently does nothing (`--runs x` used to give NaN runs).
 *
 * The zod object is the one declaration of a script's options, as of a command's: parseArgs' table
 * is derived from its keys (cli/args.ts, parseArgsOptions), and a key `_` is the positionals.
 */
import type { z } from "zod";
import { parseArgsOptions, parseCommand, UsageError } from "../cli/args.js";

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

/** Parses `argv` for a script; `--help` (or `-h`) anywhere asks for the usage. Throws UsageError. */
export function parseScriptArgs<T extends z.ZodObject>(spec: ScriptSpec<T>, argv: readonly string[]): ScriptArgs<T> {
  // Derived first: a schema that cannot be read from the command line fails on `--help` too.
  parseArgsOptions(spec.schema);
  if (argv.includes("--help") || argv.includes("-h")) return { help: true };
  return { help: false, values: parseCommand(argv, spec.schema) };
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
