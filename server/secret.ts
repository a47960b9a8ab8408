/** Compares secrets (admin token, API key, seat and spectator tokens) in constant time. */
import { timingSafeEqual } from "node:crypto";

/** No early exit an attacker could time; an absent secret matches nothing. */
export function sameSecret(given: string | undefined, expected: string | undefined): boolean {
  if (given === undefined || expected === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
