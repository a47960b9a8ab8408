/**
 * A user's profile: HumanLM's persona layout (what its persona generator writes from a user's
 * earlier comments), or free text.
 *
 *   {"demographics": {"age group", "gender", "location", "occupation", "nationality", "other"},
 *    "interests": [...], "values": [...], "communication": [...], "statistics": [...]}
 *
 * Every part is optional here ("NA" and empty parts are left out when it is written for a
 * model), and other keys are kept and written after these, so a richer profile loses nothing.
 */
import { z } from "zod";

const Phrases = z.array(z.string()).nullish();

export const PersonaSchema = z.union(
  [
    z.string(),
    z.looseObject({
      demographics: z.record(z.string(), z.union([z.string(), z.number()]).nullish()).nullish(),
      interests: Phrases,
      values: Phrases,
      communication: Phrases,
      statistics: Phrases,
    }),
  ],
  { error: 'expected a text or an object {"demographics", "interests", "values", "communication", "statistics"}' },
);
export type Persona = z.infer<typeof PersonaSchema>;

const PARTS = ["interests", "values", "communication", "statistics"] as const;

/** The profile as the user's observation gives it: one part per line, "Missing" for none. */
export function renderProfile(persona: Persona | null | undefined): string {
  if (persona === null || persona === undefined) return "No profile.";
  if (typeof persona === "string") return persona.trim() === "" ? "No profile." : persona.trim();
  const lines: string[] = [];
  const demo = Object.entries(persona.demographics ?? {}).filter(([, v]) => v !== null && v !== undefined && String(v).trim() !== "" && String(v).trim() !== "NA");
  lines.push(demo.length ? `Demographics: ${demo.map(([k, v]) => `${k}: ${String(v).trim()}`).join("; ")}` : "Demographics: Missing");
  for (const part of PARTS) {
    const items = (persona[part] ?? []).map((s) => s.trim()).filter((s) => s !== "");
    lines.push(`${cap(part)}: ${items.length ? items.join("; ") : "Missing"}`);
  }
  for (const [k, v] of Object.entries(persona)) {
    if (k === "demographics" || (PARTS as readonly string[]).includes(k) || v === null || v === undefined) continue;
    lines.push(`${cap(k)}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  }
  return lines.join("\n");
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
