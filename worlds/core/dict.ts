/**
 * Records keyed by names from the data (rooms, objects, speakers, perspectives). A plain `{}`
 * answers keys it never got ("constructor", "toString", "__proto__") from Object.prototype, so a
 * room or a speaker called that would read as present, or crash; these records have no prototype.
 */
export function dict<T>(from?: Readonly<Record<string, T>>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  if (from) for (const k of Object.keys(from)) out[k] = from[k]!;
  return out;
}
