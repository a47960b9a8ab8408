/**
 * Numbers between bounds, as languages of their decimal writings: the bounds hold by
 * construction (digit by digit against the bounds' own digits), not by a check after sampling.
 *
 * How numbers are written: no exponent, no leading zeros, no "-0"; an integer is its digits; any
 * other number is its integer part and, optionally, "." and one or more digits. A number has at
 * most 15 digits (not counting a lone leading "0"): any two such decimals are distinct doubles,
 * so a writing strictly inside the bounds parses to a double strictly inside them, whatever the
 * reader's rounding. Integers are kept within Number.MAX_SAFE_INTEGER (what JavaScript, and so
 * zod's `int()`, can hold exactly).
 */
import { ByteAutomaton } from "./byte-automaton.js";
import { GrammarError } from "./errors.js";
import { Nfa } from "./nfa.js";
import { alt, chars, EMPTY, literal, NEVER, rep, seq, type Lang } from "./language.js";

export const MAX_DIGITS = 15;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A nonnegative decimal: integer part and fraction digits (no trailing zeros). */
interface Dec {
  readonly int: bigint;
  readonly frac: string;
}

export interface Bound {
  readonly value: number;
  readonly inclusive: boolean;
}

const DIGIT = chars([[0x30, 0x39]]);
const digitRange = (lo: number, hi: number): Lang => (lo > hi ? NEVER : chars([[0x30 + lo, 0x30 + hi]]));
const anyDigits = (min: number, max: number): Lang => rep(DIGIT, min, max);

/** |x| as an exact decimal (from the shortest writing that reads back as x, as JSON writes it). */
function decimalOf(x: number): Dec {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)));
  if (!m) throw new GrammarError(`cannot read the number ${x}`);
  let digits = m[1]! + (m[2] ?? "");
  let point = m[1]!.length + Number(m[3] ?? 0);
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  return { int: BigInt(digits.slice(0, point) || "0"), frac: digits.slice(point).replace(/0+$/, "") };
}

/**
 * The writings of the numbers in [lo, hi] (either bound may be absent), integers only when
 * `integer`. Throws when no number in the range can be written so.
 */
export function numberLang(lo: Bound | undefined, hi: Bound | undefined, integer: boolean, pointer: string): Lang {
  const key = JSON.stringify([lo, hi, integer]);
  let l = compiled.get(key);
  if (!l) {
    l = minimal(writings(lo, hi, integer, pointer));
    if (compiled.size >= 256) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, l);
  }
  return l;
}

const compiled = new Map<string, Lang>();

/** A language of plain bytes as its minimal DFA (what the subset construction then copies cheaply). */
function minimal(l: Lang): Lang {
  const nfa = new Nfa(100_000);
  const { start, end } = nfa.build(l, "utf8", 100_000);
  const a = new ByteAutomaton(nfa, start, end, { maxExplicit: 100_000, maxCounted: 0 });
  return { k: "dfa", dfa: { size: a.explicitAccepting.length, start: a.start, trans: a.trans, accepting: a.explicitAccepting } };
}

function writings(lo: Bound | undefined, hi: Bound | undefined, integer: boolean, pointer: string): Lang {
  if (integer) {
    const a = lo ? intCeil(lo) : -SAFE;
    const b = hi ? intFloor(hi) : SAFE;
    const from = a < -SAFE ? -SAFE : a;
    const to = b > SAFE ? SAFE : b;
    if (from > to) throw new GrammarError(`no integer lies between the bounds${boundsText(lo, hi)}`, pointer);
    const parts: Lang[] = [];
    if (to >= 0n) parts.push(intRange(from < 0n ? 0n : from, to));
    if (from < 0n) parts.push(seq(literal("-"), intRange(to < 0n ? -to : 1n, -from)));
    return alt(...parts);
  }
  const parts: Lang[] = [];
  const zero: Bound = { value: 0, inclusive: true };
  if (!hi || hi.value > 0 || (hi.value === 0 && hi.inclusive)) parts.push(nonNegative(lo && lo.value >= 0 ? lo : zero, hi));
  if (!lo || lo.value < 0) {
    // -x for x in [|hi|, |lo|]; zero belongs to the nonnegative part.
    const absLo: Bound = hi && hi.value < 0 ? { value: -hi.value, inclusive: hi.inclusive } : { value: 0, inclusive: false };
    const absHi: Bound | undefined = lo ? { value: -lo.value, inclusive: lo.inclusive } : undefined;
    parts.push(seq(literal("-"), nonNegative(absLo, absHi)));
  }
  const l = alt(...parts);
  if (l.k === "never") throw new GrammarError(`no number with at most ${MAX_DIGITS} digits lies between the bounds${boundsText(lo, hi)}`, pointer);
  return l;
}

function boundsText(lo: Bound | undefined, hi: Bound | undefined): string {
  return ` (${lo ? `${lo.inclusive ? ">=" : ">"} ${lo.value}` : ""}${lo && hi ? ", " : ""}${hi ? `${hi.inclusive ? "<=" : "<"} ${hi.value}` : ""})`;
}

function signed(d: Dec, negative: boolean): { int: bigint; exact: boolean } {
  return { int: negative ? -d.int : d.int, exact: d.frac === "" };
}

/** The least integer in the bound's half-line. */
function intCeil(b: Bound): bigint {
  const { int, exact } = signed(decimalOf(b.value), b.value < 0);
  if (exact) return b.inclusive ? int : int + 1n;
  return b.value < 0 ? int : int + 1n;
}

/** The greatest integer in the bound's half-line. */
function intFloor(b: Bound): bigint {
  const { int, exact } = signed(decimalOf(b.value), b.value < 0);
  if (exact) return b.inclusive ? int : int - 1n;
  return b.value < 0 ? int - 1n : int;
}

/** Nonnegative integers a..b without leading zeros. */
function intRange(a: bigint, b: bigint): Lang {
  if (a > b) return NEVER;
  const parts: Lang[] = [];
  const sa = a.toString();
  const sb = b.toString();
  for (let n = sa.length; n <= sb.length; n++) {
    const lo = n === sa.length ? sa : "1" + "0".repeat(n - 1);
    const hi = n === sb.length ? sb : "9".repeat(n);
    parts.push(sameLength(lo, hi));
  }
  return alt(...parts);
}

/** Digit strings of one length between lo and hi (inclusive), compared digit by digit. */
function sameLength(lo: string, hi: string): Lang {
  if (lo.length === 0) return EMPTY;
  if (lo === hi) return literal(lo);
  const a = Number(lo[0]);
  const b = Number(hi[0]);
  const restLo = lo.slice(1);
  const restHi = hi.slice(1);
  const n = restLo.length;
  if (a === b) return seq(literal(lo[0]!), sameLength(restLo, restHi));
  if (/^0*$/.test(restLo) && /^9*$/.test(restHi)) return seq(digitRange(a, b), anyDigits(n, n));
  return alt(seq(literal(lo[0]!), sameLength(restLo, "9".repeat(n))), seq(digitRange(a + 1, b - 1), anyDigits(n, n)), seq(literal(hi[0]!), sameLength("0".repeat(n), restHi)));
}

/** Digits an integer part uses against the 15-digit budget (a lone "0" uses none). */
const intDigits = (i: bigint): number => (i === 0n ? 0 : i.toString().length);

/** Numbers x with lo <= x <= hi (as the flags say), lo >= 0; hi absent: no upper bound. */
function nonNegative(lo: Bound, hi: Bound | undefined): Lang {
  const L = decimalOf(lo.value);
  const H = hi ? decimalOf(hi.value) : undefined;
  const maxInt = 10n ** BigInt(MAX_DIGITS) - 1n;
  const parts: Lang[] = [];
  const topInt = H && H.int <= maxInt ? H.int : maxInt + 1n;
  // Integer parts strictly between the bounds' own: any fraction fits.
  for (const [a, b] of byLength(L.int + 1n, topInt - 1n)) {
    const room = MAX_DIGITS - intDigits(a);
    parts.push(seq(intRange(a, b), fraction(undefined, undefined, room)));
  }
  const lowFrac = { digits: L.frac, inclusive: lo.inclusive };
  if (H && H.int === L.int) {
    parts.push(seq(literal(L.int.toString()), fraction(lowFrac, { digits: H.frac, inclusive: hi!.inclusive }, MAX_DIGITS - intDigits(L.int))));
  } else {
    if (intDigits(L.int) <= MAX_DIGITS) parts.push(seq(literal(L.int.toString()), fraction(lowFrac, undefined, MAX_DIGITS - intDigits(L.int))));
    if (H && H.int <= maxInt) parts.push(seq(literal(H.int.toString()), fraction(undefined, { digits: H.frac, inclusive: hi!.inclusive }, MAX_DIGITS - intDigits(H.int))));
  }
  return alt(...parts);
}

/** a..b split where the digit count changes (the fraction's room depends on it). */
function byLength(a: bigint, b: bigint): [bigint, bigint][] {
  const out: [bigint, bigint][] = [];
  if (a <= 0n && b >= 0n) out.push([0n, 0n]);
  let from = a < 1n ? 1n : a;
  while (from <= b) {
    const top = 10n ** BigInt(from.toString().length) - 1n;
    const to = top < b ? top : b;
    out.push([from, to]);
    from = to + 1n;
  }
  return out;
}

interface FracBound {
  readonly digits: string;
  readonly inclusive: boolean;
}

/**
 * The optional fraction (".ddd", at most `room` digits, or nothing) whose value 0.ddd lies within
 * the given bounds on 0.F (absent: none). Walks the digits with two flags: still equal to the
 * low bound's digits, still equal to the high bound's.
 */
function fraction(low: FracBound | undefined, high: FracBound | undefined, room: number): Lang {
  const at = (p: FracBound, i: number) => Number(p.digits[i] ?? "0");
  const restZero = (p: FracBound, i: number) => /^0*$/.test(p.digits.slice(i));
  // Whether F of i digits, equal so far to the bounds it is tight with, ends inside them.
  const endsOk = (i: number, tl: boolean, th: boolean): boolean => {
    // Equal to the low bound's digits so far: F is below it unless the rest of them are zeros.
    if (tl && !(restZero(low!, i) && low!.inclusive)) return false;
    if (th && restZero(high!, i) && !high!.inclusive) return false;
    return true;
  };
  const digitsFrom = (i: number, tl: boolean, th: boolean): Lang => {
    if (i >= room) return NEVER;
    if (!tl && !th) return seq(DIGIT, anyDigits(0, room - i - 1));
    const lo = tl ? at(low!, i) : 0;
    const hi = th ? at(high!, i) : 9;
    if (lo > hi) return NEVER;
    const next = (d1: number, d2: number, ntl: boolean, nth: boolean) => (d1 > d2 ? NEVER : seq(digitRange(d1, d2), tail(i + 1, ntl, nth)));
    if (lo === hi) return next(lo, lo, tl, th);
    return alt(next(lo, lo, tl, false), next(lo + 1, hi - 1, false, false), next(hi, hi, false, th));
  };
  const tail = (i: number, tl: boolean, th: boolean): Lang => alt(endsOk(i, tl, th) ? EMPTY : NEVER, digitsFrom(i, tl, th));
  return alt(endsOk(0, !!low, !!high) ? EMPTY : NEVER, room > 0 ? seq(literal("."), digitsFrom(0, !!low, !!high)) : NEVER);
}
