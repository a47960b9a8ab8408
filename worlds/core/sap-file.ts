/**
 * Reads a socialized context from a JSON file in any of the layouts the two projects write:
 *
 *   - ours (and the model's output format, `SocializedContextForModel`):
 *       {agents_names, socialized_context: [{timestep, state, observations: ["Name: text"], actions: [...]}]}
 *   - the social-world-model project's result files, which keep it under `socialized_context`
 *     next to `story`, `question`, `answer`..., usually as its `SocializedContext` model dump:
 *     observations and actions as {"Name": "text"} dicts (its `dictlize`), plus `context_manual`.
 *
 * Either way the result is our list layout, lines in `agents_names` order. Everything is checked
 * with zod; a bad file is a DataError naming the file and the field.
 */
import { z } from "zod";
import { DataError } from "./errors.js";
import { agentLine, NONE, validateSocializedContext, type SocializedContext } from "./socialized-context.js";
import { readTextInput } from "./text-input.js";

const Lines = z.union([z.array(z.string()), z.record(z.string(), z.string())], {
  error: 'expected a list of "Name: text" lines or a {"Name": "text"} object',
});

const ForeignStep = z.looseObject({
  // Python writes the timestep as a string; hand-written files sometimes use a number.
  timestep: z.union([z.string(), z.number()]),
  state: z.string(),
  observations: Lines,
  actions: Lines,
});

export const ForeignContextSchema = z.looseObject({
  agents_names: z.array(z.string()),
  socialized_context: z.array(ForeignStep),
  context_manual: z.string().optional(),
});
export type ForeignContext = z.infer<typeof ForeignContextSchema>;

/** What came with the context in a result file (strings only; anything else is left out). */
export interface SapMeta {
  readonly story?: string | readonly string[];
  readonly question?: string;
  readonly answer?: string;
  readonly correct_answer?: string;
  readonly index?: string | number;
  readonly context_manual?: string;
}

export interface SapFile {
  readonly context: SocializedContext;
  /** "list": "Name: text" lines; "dict": {"Name": "text"} objects (converted). */
  readonly layout: "list" | "dict";
  /** Where the context was in the file: "" (the whole file) or "socialized_context". */
  readonly path: "" | "socialized_context";
  /** The context as the file holds it (dicts stay dicts). */
  readonly raw: unknown;
  readonly meta: SapMeta;
  /** Structural problems that do not stop a replay (a missing agent line, lines out of order). */
  readonly problems: readonly string[];
}

/** Finds the context in a parsed file: the whole object, or the one under `socialized_context`. */
export function locateContext(json: unknown): { sap: unknown; path: "" | "socialized_context"; wrapper?: Record<string, unknown> } | undefined {
  if (!json || typeof json !== "object" || Array.isArray(json)) return undefined;
  const obj = json as Record<string, unknown>;
  const sc = obj.socialized_context;
  if (Array.isArray(sc)) return { sap: obj, path: "" };
  if (sc && typeof sc === "object") return { sap: sc, path: "socialized_context", wrapper: obj };
  return undefined;
}

export function readSapFile(file: string): SapFile {
  const text = readTextInput(file);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DataError(file, {}, `not valid JSON (${(err as Error).message})`);
  }
  return parseSap(json, file);
}

export function parseSap(json: unknown, file: string): SapFile {
  const found = locateContext(json);
  if (!found) {
    throw new DataError(
      file,
      { field: "socialized_context" },
      "no socialized context: expected {agents_names, socialized_context: [...]}, or a result file with one under socialized_context",
    );
  }
  const parsed = ForeignContextSchema.safeParse(found.sap);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = [found.path, ...issue.path.map((p) => (typeof p === "number" ? `[${p}]` : String(p)))]
      .filter(Boolean)
      .join(".")
      .replace(/\.\[/g, "[");
    throw new DataError(file, { field: field || "(top level)" }, issue.message);
  }
  const { context, layout, problems } = normalizeContext(parsed.data);
  const meta = metaOf(found.wrapper, parsed.data.context_manual);
  const all = [...problems, ...validateSocializedContext(context).filter((p) => !problems.includes(p))];
  return { context, layout, path: found.path, raw: found.sap, meta, problems: all };
}

/**
 * Our list layout from either layout. Dict entries follow `agents_names`; an agent with no entry
 * gets "none" and a named problem; entries for names not in `agents_names` are kept, after them.
 */
export function normalizeContext(ctx: ForeignContext): { context: SocializedContext; layout: "list" | "dict"; problems: string[] } {
  const problems: string[] = [];
  let layout: "list" | "dict" = "list";
  const names = ctx.agents_names;
  const lines = (value: readonly string[] | Record<string, string>, where: string): string[] => {
    if (Array.isArray(value)) return value.slice();
    layout = "dict";
    const dict = value as Record<string, string>;
    const out = names.map((name) => {
      const text = dict[name];
      if (text === undefined) problems.push(`${where}: no entry for ${name}`);
      return agentLine(name, text ?? NONE);
    });
    for (const [name, text] of Object.entries(dict)) if (!names.includes(name)) out.push(agentLine(name, text));
    return out;
  };
  const steps = ctx.socialized_context.map((step, i) => ({
    timestep: String(step.timestep),
    state: step.state,
    observations: lines(step.observations, `socialized_context[${i}].observations`),
    actions: lines(step.actions, `socialized_context[${i}].actions`),
  }));
  return { context: { agents_names: names.slice(), socialized_context: steps }, layout, problems };
}

/** Dict layout, as the social-world-model project's `dictlize` writes it ("Name: text" split at the first colon). */
export function dictLines(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(":");
    // dictlize drops lines without a colon; so do we.
    if (i < 0) continue;
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

function metaOf(wrapper: Record<string, unknown> | undefined, manual: string | undefined): SapMeta {
  const meta: Record<string, unknown> = {};
  if (wrapper) {
    const story = wrapper.story;
    if (typeof story === "string" || (Array.isArray(story) && story.every((s) => typeof s === "string"))) meta.story = story;
    for (const k of ["question", "answer", "correct_answer"] as const) if (typeof wrapper[k] === "string") meta[k] = wrapper[k];
    if (typeof wrapper.index === "string" || typeof wrapper.index === "number") meta.index = wrapper.index;
  }
  if (manual !== undefined) meta.context_manual = manual;
  return meta as SapMeta;
}
