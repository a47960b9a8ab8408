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
 * Parses `argv` with `options`; positionals come back as `_` (or, with `allowPositionals` false,
 * are an error). Values are checked by `schema`.
 */
export function parseCommand<T extends z.ZodType>(argv: readonly string[], options: Options, schema: T, allowPositionals = true): z.infer<T> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(argv, options), options, allowPositionals, strict: true }) as typeof parsed;
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ""));
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
