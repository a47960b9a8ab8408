import { DataError } from "../worlds/core/errors.js";

/** The DataError that `f` throws (any other error, or none, fails the test). */
export function errorOf(f: () => unknown): DataError {
  try {
    f();
  } catch (err) {
    if (err instanceof DataError) return err;
    throw err;
  }
  throw new Error("expected a DataError");
}
