/**
 * Exact match of an action against a reference action: equal as JSON values, whatever the key
 * order (what a world's structured actions need; answers to benchmark questions use the
 * benchmark's own judge instead).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function sameAction(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
