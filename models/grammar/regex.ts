/**
 * The regular subset of ECMAScript patterns (what JSON Schema's `pattern` is) as a language of
 * characters: literals and escapes (\d \w \s and their negations, \t \n \r \v \f \0 \xHH \uHHHH
 * \u{...}, escaped syntax characters), classes with ranges and negation, `.`, groups (capturing,
 * named, (?:...)), alternation, and the quantifiers * + ? {n} {n,} {n,m} (lazy or not: the same
 * language). Anchors ^ and $ may open and close an alternative of the whole pattern; a pattern
 * not anchored matches anywhere in the string, as JSON Schema says (so any text may come before
 * and after it). What is not regular or not supported (backreferences, lookaround, \b, \p{...},
 * anchors elsewhere) is refused with its position.
 *
 * One lookahead is read, as a length bound: `(?=C{m,n}L)G L`, where C is a character class, L one
 * ASCII character outside it and G the atom that follows (a group, with its quantifier), whose
 * characters are all of C, then L itself. In any regex engine it says that G's text has m..n
 * characters (the run of C before L is G's text), and that is how it compiles: G as a counted
 * text closed by L (language.ts's `text`), a counter beside G's small automaton instead of G
 * repeated n times. A state of a usersim reply is one (`replyTextPattern`). With L the end of
 * the input, `(?=C{m,n}$)G$`, G is a counted text that ends the pattern (a usersim reply's
 * response with its closing tag).
 *
 * Characters are kept within the Basic Multilingual Plane: there a pattern means the same with
 * or without JavaScript's `u` flag (and in Python's `re`), so every validator agrees.
 */
import { charSet, complement, intersect, isEmpty, minus, single, union, type CharSet } from "./charset.js";
import { GrammarError } from "./errors.js";
import { alt, chars, EMPTY, hasText, rep, seq, text, type Lang } from "./language.js";

/** Characters a pattern may produce: the BMP without surrogates. */
export const BMP: CharSet = [
  [0, 0xd7ff],
  [0xe000, 0xffff],
];
const DIGITS: CharSet = [[0x30, 0x39]];
const WORD: CharSet = charSet([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
const SPACE: CharSet = charSet([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: CharSet = charSet([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]);
const SYNTAX = "^$\\.*+?()[]{}|/-";
/** The largest count a quantifier may give (each repetition is compiled; a length bound's is counted). */
const MAX_REPEAT = 1000;
/** The largest bound of a bounded group (the counted states' limit decides what compiles). */
const MAX_BOUND = 1_000_000;

export function regexLang(source: string, pointer: string, anywhere: CharSet = BMP): Lang {
  return new RegexParser(source, pointer, anywhere).parse();
}

class RegexParser {
  private i = 0;

  constructor(
    private readonly src: string,
    private readonly pointer: string,
    private readonly anywhere: CharSet,
  ) {}

  private fail(msg: string): never {
    throw new GrammarError(`pattern ${JSON.stringify(this.src)}: ${msg} (at offset ${this.i})`, this.pointer);
  }

  private peek(): string | undefined {
    return this.src[this.i];
  }

  parse(): Lang {
    const alts: Lang[] = [];
    for (;;) {
      const start = this.peek() === "^";
      if (start) this.i++;
      const body = this.sequence(true);
      const end = this.peek() === "$";
      if (end) this.i++;
      const free = rep(chars(this.anywhere), 0, Infinity);
      alts.push(seq(start ? EMPTY : free, body, end ? EMPTY : free));
      if (this.peek() === "|") {
        this.i++;
        continue;
      }
      if (this.i < this.src.length) this.fail(this.peek() === ")" ? "unbalanced parenthesis" : `unexpected "${this.peek()}"`);
      return alt(...alts);
    }
  }

  private alternation(): Lang {
    const items = [this.sequence(false)];
    while (this.peek() === "|") {
      this.i++;
      items.push(this.sequence(false));
    }
    return alt(...items);
  }

  private sequence(top: boolean): Lang {
    const items: Lang[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === "|" || c === ")") break;
      if (c === "$" && top && (this.i + 1 === this.src.length || this.src[this.i + 1] === "|")) break;
      if (c === "^" || c === "$") this.fail("anchors (^ and $) are supported only at the start and end of the pattern");
      items.push(this.src.startsWith("(?=", this.i) ? this.bounded() : this.quantified(this.atom()));
    }
    return seq(...items);
  }

  private quantified(atom: Lang): Lang {
    let out = atom;
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
        if (!m) return out; // a literal "{", as JavaScript reads it without the u flag
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
        if (max < min) this.fail("numbers out of order in {} quantifier");
        if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) this.fail(`repetition counts above ${MAX_REPEAT} are not supported`);
        this.i += m[0].length - 1;
      } else return out;
      this.i++;
      if (this.peek() === "?") this.i++;
      out = rep(out, min, max);
    }
  }

  /**
   * `(?=C{m,n}L)G L` (after "(?=" is seen): G as a text of m..n characters closed by L. G's
   * characters must all be C's and L must not be, or the lookahead would say something else.
   */
  private bounded(): Lang {
    this.i += 3;
    if (this.peek() === undefined) this.fail("missing )");
    const run = this.atom();
    if (run.k !== "chars") this.fail("lookaround assertions are supported only as a length bound (?=C{m,n}L) before a group: C must be one character or class");
    const q = /^(?:\{(\d+)(,(\d*))?\}|([*+]))/.exec(this.src.slice(this.i));
    if (!q) this.fail("lookaround assertions are supported only as a length bound (?=C{m,n}L) before a group: C needs its count");
    this.i += q[0].length;
    const min = q[4] === "*" ? 0 : q[4] === "+" ? 1 : Number(q[1]);
    const max = q[4] !== undefined || q[3] === "" ? Infinity : q[2] === undefined ? min : Number(q[3]);
    if (max < min) this.fail("numbers out of order in {} quantifier");
    if (min > MAX_BOUND || (max !== Infinity && max > MAX_BOUND)) this.fail(`length bounds above ${MAX_BOUND} are not supported`);
    if (this.src.startsWith("$)", this.i)) return this.boundedToEnd(run.set, min, max);
    const closer = this.closing(run.set, "a length bound (?=C{m,n}L) must end with one ASCII character L that C does not hold");
    if (this.peek() !== ")") this.fail("a length bound (?=C{m,n}L) holds nothing after L");
    this.i++;
    const c = this.peek();
    if (c === undefined || c === "|" || c === ")" || c === "$" || this.src.startsWith("(?=", this.i)) this.fail("a length bound must be followed by the group it bounds");
    const body = this.quantified(this.atom());
    if (hasText(body)) this.fail("a bounded group may not hold another length bound");
    for (const set of charSets(body)) if (!isEmpty(minus(set, run.set))) this.fail("the bounded group may only write characters of its bound's class");
    const after = this.i;
    if (this.closing(undefined, "") !== closer) {
      this.i = after;
      this.fail(`the bounded group must be followed by its bound's closing character ${JSON.stringify(String.fromCharCode(closer))}`);
    }
    if (/^(?:[*+?]|\{\d+(?:,\d*)?\})/.test(this.src.slice(this.i))) this.fail("the closing character of a bounded group may not be repeated");
    return text(body, min, max, false, this.pointer, closer);
  }

  /**
   * `(?=C{m,n}$)G$` (after "(?=C{m,n}" is seen): G as a text of m..n characters that ends the
   * pattern (the run of C up to the end of the input is G's text). G may hold what a line-closed
   * bound cannot: a text closed by a word (usersim's response, closed by `\n</response>`), its
   * characters counted up to its end.
   */
  private boundedToEnd(set: CharSet, min: number, max: number): Lang {
    this.i += 2;
    const c = this.peek();
    if (c === undefined || c === "|" || c === ")" || c === "$" || this.src.startsWith("(?=", this.i)) this.fail("a length bound must be followed by the group it bounds");
    const body = this.quantified(this.atom());
    if (hasText(body)) this.fail("a bounded group may not hold another length bound");
    for (const s of charSets(body)) if (!isEmpty(minus(s, set))) this.fail("the bounded group may only write characters of its bound's class");
    if (this.peek() !== "$" || (this.i + 1 !== this.src.length && this.src[this.i + 1] !== "|")) this.fail("a length bound (?=C{m,n}$) must be followed by its group and then the pattern's end ($)");
    return text(body, min, max, false, this.pointer);
  }

  /** One ASCII character outside `outside` as an atom (its code), or -1 when the atom is not one; with a message, fails instead. */
  private closing(outside: CharSet | undefined, message: string): number {
    const c = this.peek();
    const l = c === undefined || c === "|" || c === ")" || c === "(" ? undefined : this.atom();
    const ok = l?.k === "chars" && l.set.length === 1 && l.set[0]![0] === l.set[0]![1] && l.set[0]![0] < 0x80 && (!outside || isEmpty(intersect(l.set, outside)));
    if (!ok) {
      if (message) this.fail(message);
      return -1;
    }
    return (l as { set: CharSet }).set[0]![0];
  }

  private atom(): Lang {
    const c = this.src[this.i++]!;
    switch (c) {
      case "(": {
        if (this.src.startsWith("?:", this.i)) this.i += 2;
        else if (this.src.startsWith("?<", this.i) && !this.src.startsWith("?<=", this.i) && !this.src.startsWith("?<!", this.i)) {
          const close = this.src.indexOf(">", this.i);
          if (close < 0) this.fail("unterminated group name");
          this.i = close + 1;
        } else if (this.peek() === "?") this.fail("lookaround assertions are not supported");
        const inner = this.alternation();
        if (this.peek() !== ")") this.fail("missing )");
        this.i++;
        return inner;
      }
      case "[":
        return chars(this.klass());
      case ".":
        return chars(intersect(this.anywhere, complement(LINE_TERMINATORS)));
      case "\\":
        return chars(intersect(this.escape(false), this.anywhere));
      case "*":
      case "+":
      case "?":
        this.i--;
        return this.fail("nothing to repeat");
      default:
        return chars(intersect(single(c.codePointAt(0)!), this.anywhere));
    }
  }

  /** After "[": the class's characters. */
  private klass(): CharSet {
    let negate = false;
    if (this.peek() === "^") {
      negate = true;
      this.i++;
    }
    const parts: CharSet[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail("missing ]");
      // ("[]" matches nothing; "[^]" anything.)
      if (c === "]") break;
      const lo = this.classAtom();
      if (this.peek() === "-" && this.src[this.i + 1] !== "]" && this.src[this.i + 1] !== undefined) {
        this.i++;
        const hi = this.classAtom();
        if (lo.length !== 1 || hi.length !== 1 || lo[0]![0] !== lo[0]![1] || hi[0]![0] !== hi[0]![1]) this.fail("a class range needs single characters at both ends");
        if (hi[0]![0] < lo[0]![0]) this.fail("range out of order in character class");
        parts.push([[lo[0]![0], hi[0]![0]]]);
      } else parts.push(lo);
    }
    this.i++;
    const set = union(...parts);
    return intersect(negate ? complement(set) : set, this.anywhere);
  }

  private classAtom(): CharSet {
    const c = this.src[this.i++]!;
    if (c === "\\") return this.escape(true);
    return single(c.codePointAt(0)!);
  }

  /** After "\": the escaped characters. */
  private escape(inClass: boolean): CharSet {
    const c = this.src[this.i++];
    if (c === undefined) this.fail("\\ at end of pattern");
    switch (c) {
      case "d":
        return DIGITS;
      case "D":
        return complement(DIGITS);
      case "w":
        return WORD;
      case "W":
        return complement(WORD);
      case "s":
        return SPACE;
      case "S":
        return complement(SPACE);
      case "t":
        return single(0x09);
      case "n":
        return single(0x0a);
      case "r":
        return single(0x0d);
      case "v":
        return single(0x0b);
      case "f":
        return single(0x0c);
      case "b":
        if (inClass) return single(0x08);
        return this.fail("word boundaries (\\b) are not supported");
      case "0":
        if (/\d/.test(this.peek() ?? "")) this.fail("octal escapes are not supported");
        return single(0);
      case "x": {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i));
        if (!m) this.fail("\\x needs two hex digits");
        this.i += 2;
        return single(parseInt(m[0], 16));
      }
      case "u": {
        const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(this.src.slice(this.i));
        if (braced) {
          this.i += braced[0].length;
          return single(parseInt(braced[1]!, 16));
        }
        const m = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.i));
        if (!m) this.fail("\\u needs four hex digits");
        this.i += 4;
        return single(parseInt(m[0], 16));
      }
      default:
        if (/[1-9]/.test(c) || c === "k") this.fail("backreferences are not supported");
        if (c === "B") this.fail("\\B is not supported");
        if (c === "p" || c === "P") this.fail("Unicode property escapes (\\p{...}) are not supported");
        if (c === "c") this.fail("control escapes (\\cX) are not supported");
        if (SYNTAX.includes(c) || !/[A-Za-z0-9]/.test(c)) return single(c.codePointAt(0)!);
        return this.fail(`unknown escape \\${c}`);
    }
  }
}

/** The character sets a language (of a pattern: characters, sequences, choices, repetitions) writes. */
function charSets(l: Lang): CharSet[] {
  switch (l.k) {
    case "chars":
      return [l.set];
    case "seq":
    case "alt":
      return l.items.flatMap(charSets);
    case "rep":
      return charSets(l.item);
    default:
      return [];
  }
}
