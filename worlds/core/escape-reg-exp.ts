/** `text` as a regular expression that matches it literally (JavaScript's syntax, and the grammar's: models/grammar/regex.ts). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
