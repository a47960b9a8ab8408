/**
 * What the grammar compiler refuses: a schema feature it does not support, a pattern it cannot
 * read, a language too large to compile, a tokenizer that cannot write it. `pointer` is the JSON
 * pointer of the schema part at fault ("" for the root, "/properties/age" ...), when there is one.
 */
export class GrammarError extends Error {
  constructor(
    /** What is wrong, without the pointer. */
    readonly reason: string,
    readonly pointer?: string,
  ) {
    super(pointer === undefined ? reason : `${pointer === "" ? "(root)" : pointer}: ${reason}`);
    this.name = "GrammarError";
  }
}

/** JSON pointer of a child (RFC 6901 escapes). */
export const childPointer = (pointer: string, ...keys: (string | number)[]): string =>
  keys.reduce<string>((p, k) => `${p}/${String(k).replace(/~/g, "~0").replace(/\//g, "~1")}`, pointer);
