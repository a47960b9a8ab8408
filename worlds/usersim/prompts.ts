/**
 * The world's prompts (templates in worlds/usersim/prompts/*.txt, `{name}` slots):
 *
 *   system / system-response-only   the simulated user's instructions: the hierarchy's tags,
 *                                   in order, each with its description (or the reply alone)
 *   level                           one level at a time (hierarchical generation: each state is
 *                                   generated and scored, then the next, then the response);
 *                                   a level's own `system_prompt` file, when the hierarchy names
 *                                   one, replaces it ({persona}, {name} and {platform} filled)
 *   judge + rubric-<tag>            the LLM judge: one request scores several generations of one
 *                                   tag against one reference, by the tag's rubric
 *
 * The user's profile, history and conversation are its observation (world.ts), the user message.
 */
import { z } from "zod";
import { fill, promptTemplate } from "../question/prompts.js";
import { isResponseOnly, readLevelPrompt, type Dimension, type Hierarchy } from "./hierarchy.js";
import { truthOf, type Reference } from "./judge.js";

/** The template worlds/usersim/prompts/NAME.txt. */
const template = (name: string): string => promptTemplate(`worlds/usersim/prompts/${name}.txt`);

/** The tags as the prompt shows them: each around its description. */
export function formatBlock(dims: readonly Dimension[]): string {
  return dims.map((d) => `<${d.name}>\n${d.desc}\n</${d.name}>`).join("\n");
}

export interface Speaker {
  readonly user: string;
  readonly platform?: string;
}

const where = (s: Speaker) => (s.platform ? ` on ${s.platform}` : "");

/** The simulated user's system prompt: the whole reply, tags in the hierarchy's order. */
export function systemPrompt(h: Hierarchy, s: Speaker): string {
  const name = isResponseOnly(h) ? "system-response-only" : "system";
  return fill(template(name), { user: s.user, where: where(s), format: formatBlock([...h.states, h.response]) });
}

/** Around the levels already written, in a later level's prompt (joined by a line break). */
export const WRITTEN_OPEN = "\nWhat you have already written down about yourself:\n";
export const WRITTEN_CLOSE = "\n";

const SLOT = "\u0000previous\u0000";

/**
 * One level's prompt around the levels written before it: `before`, those levels (between
 * WRITTEN_OPEN and WRITTEN_CLOSE, when there are any), then `after`. A level's own prompt file
 * (the hierarchy's `system_prompt`) is `before`, its {persona}, {name} and {platform} filled, and
 * the levels written before it follow it.
 */
export function levelPromptParts(h: Hierarchy, tag: string, s: Speaker & { readonly persona?: string }): { readonly before: string; readonly after: string } {
  const d = levelOf(h, tag);
  const own = readLevelPrompt(h, tag);
  if (own !== undefined) return { before: fill(own, { persona: s.persona ?? "", name: s.user, platform: s.platform ?? "" }), after: "" };
  const [before, after] = fill(template("level"), { user: s.user, where: where(s), previous: SLOT, format: formatBlock([d]) }).split(SLOT) as [string, string];
  return { before, after };
}

/**
 * The prompt for one level of the reply, after the levels already written (`previous`, tag ->
 * text; those of the hierarchy's levels before this one are shown, in order).
 */
export function levelPrompt(h: Hierarchy, tag: string, s: Speaker & { readonly persona?: string }, previous: Readonly<Record<string, string>> = {}): string {
  const dims = [...h.states, h.response];
  const { before, after } = levelPromptParts(h, tag, s);
  const written = dims.slice(0, dims.indexOf(levelOf(h, tag))).filter((x) => previous[x.name] !== undefined);
  const blocks = written.map((x) => `<${x.name}>\n${previous[x.name]}\n</${x.name}>`).join("\n");
  return `${before}${written.length ? `${WRITTEN_OPEN}${blocks}${WRITTEN_CLOSE}` : ""}${after}`;
}

function levelOf(h: Hierarchy, tag: string): Dimension {
  const dims = [...h.states, h.response];
  const d = dims.find((x) => x.name === tag);
  if (!d) throw new Error(`"${tag}" is not a tag of the hierarchy (${dims.map((x) => x.name).join(", ")})`);
  return d;
}

const RUBRICS = new Set(["stance", "emotion", "belief", "value", "goal", "communication", "response"]);

export function rubricFor(tag: string): string {
  return template(`rubric-${RUBRICS.has(tag) ? tag : "other"}`).trimEnd();
}

/** What a tag's generations are judged against: its true text, else (as HumanLM does) the real reply. */
export function judgeReference(h: Hierarchy, tag: string, ref: Reference): { readonly label: string; readonly text: string } {
  if (tag === h.response.name) return { label: "The user's real reply", text: ref.response };
  const truth = truthOf(tag, ref);
  if (truth !== undefined) return { label: `The user's true ${tag}`, text: truth };
  return { label: `The user's real reply (judge the ${tag} it shows)`, text: ref.response };
}

export interface JudgeRequest {
  readonly hierarchy: Hierarchy;
  readonly tag: string;
  /** The conversation, as the user read it. */
  readonly context: string;
  readonly reference: Reference;
  readonly generations: readonly string[];
}

/** One judge request: every generation of one tag, for one reference (HumanLM batches them so). */
export function judgePrompt(r: JudgeRequest): string {
  const d = [...r.hierarchy.states, r.hierarchy.response].find((x) => x.name === r.tag);
  if (!d) throw new Error(`"${r.tag}" is not a tag of the hierarchy`);
  if (r.generations.length === 0) throw new Error("nothing to judge");
  const ref = judgeReference(r.hierarchy, r.tag, r.reference);
  return fill(template("judge"), {
    dimension: r.tag,
    description: d.desc,
    rubric: rubricFor(r.tag),
    context: r.context,
    reference_label: ref.label,
    reference: ref.text,
    count: String(r.generations.length),
    generations: r.generations.map((g, i) => `${i + 1}. ${JSON.stringify(g)}`).join("\n"),
  });
}

export const JudgeVerdictSchema = z.object({
  scores: z.array(z.object({ id: z.number().int(), reason: z.string(), score: z.number().min(0, "a score is from 0 to 1").max(1, "a score is from 0 to 1") })),
});

/** The scores of a judge's answer, by generation (1..count); throws with the reason it cannot be read. */
export function parseJudgeReply(text: string, count: number): number[] {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) throw new Error("the judge's answer has no JSON object");
  let json: unknown;
  try {
    json = JSON.parse(text.slice(start, end + 1));
  } catch (err) {
    throw new Error(`the judge's answer is not valid JSON: ${(err as Error).message}`);
  }
  const r = JudgeVerdictSchema.safeParse(json);
  if (!r.success) throw new Error(`the judge's answer does not match {"scores": [{"id", "reason", "score"}]}: ${r.error.issues[0]?.message}`);
  const out = new Array<number | undefined>(count).fill(undefined);
  for (const s of r.data.scores) {
    if (s.id < 1 || s.id > count) throw new Error(`the judge scored generation ${s.id}, but there are ${count}`);
    if (out[s.id - 1] !== undefined) throw new Error(`the judge scored generation ${s.id} twice`);
    out[s.id - 1] = s.score;
  }
  const missing = out.findIndex((x) => x === undefined);
  if (missing >= 0) throw new Error(`the judge did not score generation ${missing + 1}`);
  return out as number[];
}

/** The key a judge's score is cached under: the tag, the generation and what it is judged against. */
export function judgeCacheKey(tag: string, generated: string, reference: { readonly label: string; readonly text: string }): string {
  return JSON.stringify([tag, generated.trim(), reference.label, reference.text]);
}
