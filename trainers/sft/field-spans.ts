/**
 * Where a top-level field's value lies in a JSON object's text: what `--field-weight` weighs in a
 * response. A structured answer's decision is often one short field (the social world's
 * `"action"`: 1 token of ~18), which a plain mean over the response's tokens leaves to the text
 * around it; naming the field lets SFT weigh that decision as heavily as the rest together.
 */

/** A value's place in the text: [start, end) in UTF-16 units (inside the quotes for a string). */
export interface FieldSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * The span of each top-level field of `text` (a JSON object, surrounding whitespace allowed)
 * named in `keys`; a field the object lacks is absent. Undefined when `text` is not one JSON
 * object (a response in prose has no fields to weigh).
 */
export function jsonFieldSpans(text: string, keys: readonly string[]): Map<string, FieldSpan> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  // Valid JSON from here on, so the scan below needs no error handling.
  const out = new Map<string, FieldSpan>();
  let i = skipSpace(text, 0) + 1; // past "{"
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === "}") return out;
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, skipSpace(text, keyEnd) + 1); // past ":"
    const end = valueEnd(text, i);
    // A repeated key: JSON.parse keeps the last, and so does this.
    if (keys.includes(key)) out.set(key, text[i] === '"' ? { start: i + 1, end: end - 1 } : { start: i, end });
    i = skipSpace(text, end);
    if (text[i] === ",") i++;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  return i;
}

/** The index just past the string that starts at `i` (its opening quote). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; ; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') return j + 1;
  }
}

/** The index just past the value that starts at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let j = i; ; j++) {
      const d = text[j];
      if (d === '"') j = stringEnd(text, j) - 1;
      else if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        if (--depth === 0) return j + 1;
      }
    }
  }
  let j = i;
  while (j < text.length && !",}] \t\n\r".includes(text[j]!)) j++;
  return j;
}
