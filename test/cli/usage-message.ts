import { expect } from "vitest";
import { UsageError } from "../../cli/args.js";

/** The message of the UsageError `parse` throws (and a failure when it throws nothing, or something else). */
export function usageMessage(parse: () => unknown, what: string): string {
  try {
    parse();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`no error for ${what}`);
}
