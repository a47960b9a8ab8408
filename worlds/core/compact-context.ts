/**
 * A compact socialized context: the world model's context reduced to titled facts, one per line
 * pair ("- Ella spinach now:" then "green_crate"), as small policies read it in simulation mode.
 *
 * A policy answers it by citing: its reply is one of the context's lines, title then value, and the
 * answer is the value (the reply's last line). Citing turns "find the line, then write its place"
 * into one choice among the context's lines, where the title a policy writes is the question's own
 * words: a small policy that had to pick the place alone learned to answer with the place most
 * lines hold (the object's first place, right for false belief and wrong for true belief), since
 * the view's name alone does not single a line out (an agent's line and the lines of each pair
 * with that agent all carry the name). Under the action grammar the value is the cited line's, so
 * a reply never cites one line and answers another's place.
 */

export interface CompactLine {
  /** What the line is about, as questions word it: "story spinach first", "Ella and Avery spinach now". */
  readonly title: string;
  /** The fact: a place, a name, as the world's answers write it. */
  readonly value: string;
  /**
   * Other titles a reply may cite the line by, not written in the context: the same fact named in
   * another order (what three agents saw together, "Ava Liam Noah carrot", asked as "Noah Ava Liam").
   * A context that wrote every order would not fit a small policy's window (a set of four agents
   * has 24); a reply follows its question's words, so it may name the set in the question's order.
   */
  readonly aliases?: readonly string[];
}

export interface CompactContext {
  /** What the lines say, the line before them in the prompt. */
  readonly heading: string;
  readonly lines: readonly CompactLine[];
  /**
   * The line the world model answers a question from, titled as the question names it (one of the
   * line's titles; undefined: none, or a question the world cannot read).
   */
  answerLine(question: string): CompactLine | undefined;
}

/**
 * The lines as a policy reads them. Each value starts a line, as an answer starts a reply: a word
 * tokenizes differently at a line's start and after a space, and a small policy would have to
 * learn each word's two forms as one.
 */
export function compactText(ctx: CompactContext): string {
  return ctx.lines.map(citation).join("\n");
}

/** A line as a reply cites it: exactly as the context writes it. */
export function citation(line: CompactLine): string {
  return `- ${line.title}:\n${line.value}`;
}

/** Every way a reply may cite a line: its title, then each alias, each followed by the value. */
export function citations(line: CompactLine): string[] {
  return [line.title, ...(line.aliases ?? [])].map((title) => citation({ title, value: line.value }));
}

/** The answer a citing reply gives: its last line. */
export function citedAnswer(reply: string): string {
  return reply.trimEnd().split("\n").at(-1)!.trim();
}

/** The line a reply cites, when the reply is exactly one of the lines' citations (the strict format of a cited answer). */
export function citedLine(reply: string, lines: readonly CompactLine[]): CompactLine | undefined {
  const text = reply.trim();
  return lines.find((l) => citations(l).includes(text));
}
