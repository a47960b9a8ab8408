/**
 * What a line of a ToMi story says, read: an event, where something is, a remark, or a question.
 * Both readers make these (the grammar, sentences.ts, and the paraphrase reader, paraphrase.ts).
 */
export type TomiSentence =
  | { readonly kind: "enter"; readonly agent: string; readonly room: string }
  | { readonly kind: "exit"; readonly agent: string; readonly room: string }
  | { readonly kind: "move"; readonly agent: string; readonly object: string; readonly container: string }
  /** "The A is in the B.": an object in a container, or a container in a room; the story decides. */
  | { readonly kind: "located"; readonly subject: string; readonly place: string }
  | { readonly kind: "agents_at"; readonly agents: readonly string[]; readonly room: string }
  | { readonly kind: "remark"; readonly agent: string; readonly verb: string; readonly thing: string; readonly period: boolean };

export type TomiQuestion =
  | { readonly kind: "first_order"; readonly agent: string; readonly object: string }
  | { readonly kind: "second_order"; readonly agent: string; readonly other: string; readonly object: string }
  | { readonly kind: "reality"; readonly object: string }
  | { readonly kind: "memory"; readonly object: string };
