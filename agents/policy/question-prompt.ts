/**
 * What a policy is asked for a benchmark question. Vanilla mode: the benchmark's own prompt (story
 * and question). Simulation mode: the question asked over the story's socialized context, which the
 * world model writes from the story text alone (the simulation agent's context, never a label).
 * Where the world has a compact form of it (its entry's `compactContext`; ToMi's, who saw where
 * each object was first and last: worlds/tomi/compact-context.ts), that form, filled into
 * worlds/question/prompts/simulation-compact.txt, and the policy answers by citing one of its
 * lines (worlds/core/compact-context.ts); elsewhere the whole context, one line per timestep, in
 * simulation-answer.txt: the social-world-model project's simulation mode with the world model as
 * the context writer. With `context=self` (options.ts) the policy writes the context itself: it is
 * asked the story and question (simulation-self.txt) and writes the world's written context (its
 * entry's `writtenContext`: ToMi's, who saw the asked object where, worlds/tomi/written-context.ts;
 * Hi-ToM's, who saw it, left it and was told where, worlds/hitom/written-context.ts),
 * then the line it answers from. The trainer builds its prompts here too, so training and
 * evaluation ask the very same text.
 */
import { simulationAnswerText, simulationCompactText, simulationSelfText } from "../../worlds/question/prompts.js";
import { NONE, SAME_AS_STATE, type SocializedContext } from "../../worlds/core/socialized-context.js";
import { citation, compactText, type CompactContext } from "../../worlds/core/compact-context.js";
import { writtenReply, type WrittenContext } from "../../worlds/core/written-context.js";
import { writtenOrder, type ContextSource } from "./options.js";
import type { QuestionTask } from "../../worlds/question/world.js";
import { isWorldName, loadSolver, loadWorld } from "../../worlds/registry.js";

/**
 * A socialized context as text, one line per timestep: its state, who perceives it, what is done.
 *
 *   Agents: Oliver, Carter, Abigail.
 *   Timestep 3: Carter entered the porch. The potato is in the green_suitcase. Observed by Carter. Actions: Abigail enters the porch.
 *   Timestep 4: Abigail entered the porch. Observed by Carter and Abigail. Actions: none.
 *
 * Lossless for the SAP layout: "observed by" lists the agents whose observation is
 * `<same_as_state />`; an agent that perceives something else has it in parentheses
 * ("(Avery: text)"); agents not named perceive nothing; actions other than none are listed. Each
 * observer's name follows the event it saw, so a left-to-right reader (a causal language model)
 * can tie the name to that event, and find "the last event Carter saw" by the name.
 */
export function contextText(ctx: SocializedContext): string {
  const names = ctx.agents_names;
  const lines = ctx.socialized_context.map((s) => {
    const sees: string[] = [];
    const partial: string[] = [];
    names.forEach((name, i) => {
      const text = lineText(s.observations[i] ?? "", name);
      if (text === SAME_AS_STATE) sees.push(name);
      else if (text !== NONE && text !== "") partial.push(`${name}: ${text.replace(SAME_AS_STATE, "(the state)")}`);
    });
    const acts = names.flatMap((name, i) => {
      const a = lineText(s.actions[i] ?? "", name);
      return a === NONE || a === "" ? [] : [`${name} ${a}`];
    });
    const who = sees.length === 0 ? "nobody" : sees.length === 1 ? sees[0]! : `${sees.slice(0, -1).join(", ")} and ${sees.at(-1)!}`;
    const also = partial.length ? ` (${partial.join("; ")})` : "";
    return `Timestep ${s.timestep}: ${s.state}${/[.!?]$/.test(s.state) ? "" : "."} Observed by ${who}${also}. Actions: ${acts.length ? acts.join("; ") : "none"}.`;
  });
  return `Agents: ${names.join(", ")}.\n${lines.join("\n")}`;
}

/** The text of an agent's "Name: text" line. */
function lineText(line: string, name: string): string {
  return line.startsWith(`${name}:`) ? line.slice(name.length + 1).trim() : line.trim();
}

/** The world model's socialized context of the task's story (from the story text only). */
export async function worldContext(task: QuestionTask): Promise<SocializedContext> {
  const solver = await loadSolver(task.benchmark).catch((err: unknown) => {
    throw new Error(`no world model writes socialized contexts for "${task.benchmark}": ${(err as Error).message}`);
  });
  const solved = await solver({ ...task, mode: "simulation" });
  if (!solved.context) throw new Error(`the world model gave no socialized context for ${task.itemId}`);
  return solved.context;
}

/** What a policy is asked for a question: the user message, and the compact context its reply cites where it reads one. */
export interface AskedQuestion {
  readonly text: string;
  /** Simulation mode over a compact context: the reply cites one of its lines (worlds/core/compact-context.ts). */
  readonly cited?: CompactContext;
  /** Simulation mode with `context=self`: the reply writes this context, then its answer line (worlds/core/written-context.ts). */
  readonly written?: WrittenContext;
}

/** Why no policy can write `benchmark`'s context itself: its world defines no written context (undefined where it does). */
export async function noWrittenContext(benchmark: string): Promise<string | undefined> {
  const world = isWorldName(benchmark) ? await loadWorld(benchmark) : undefined;
  return world?.writtenContext ? undefined : `the ${benchmark} world has no written context (a policy writes its own only where the world defines it: ToMi, Hi-ToM)`;
}

/**
 * Why a policy cannot write the `context` it is told to in `benchmark`'s simulation-mode
 * questions: the world defines no written context. Undefined where it can, or where the world
 * model writes the context.
 */
export async function writtenContextRefusal(benchmark: string, context: ContextSource): Promise<string | undefined> {
  if (!writtenOrder(context)) return undefined;
  const why = await noWrittenContext(benchmark);
  return why && `context=${context}: ${why}`;
}

/**
 * The question as a policy is asked it, in the task's mode; in simulation mode, over the context
 * `context` says who writes: the world model (`world`) or the policy itself (`self`, `self-latest`).
 */
export async function askedQuestion(task: QuestionTask, context: ContextSource = "world"): Promise<AskedQuestion> {
  if (task.mode !== "simulation") return { text: task.prompt };
  const order = writtenOrder(context);
  if (order) {
    const write = isWorldName(task.benchmark) ? (await loadWorld(task.benchmark)).writtenContext : undefined;
    if (!write) throw new Error(await writtenContextRefusal(task.benchmark, context));
    const written = write(await worldContext(task), task.question, order);
    return { text: simulationSelfText(task, written.heading), written };
  }
  const ctx = await worldContext(task);
  const compact = isWorldName(task.benchmark) ? (await loadWorld(task.benchmark)).compactContext : undefined;
  if (!compact) return { text: simulationAnswerText(task, contextText(ctx)) };
  const cited = compact(ctx, task.question);
  return { text: simulationCompactText(task, cited.heading, compactText(cited)), cited };
}

/** The user message a policy answers for this question, in the task's mode. */
export async function questionText(task: QuestionTask, context: ContextSource = "world"): Promise<string> {
  return (await askedQuestion(task, context)).text;
}

/**
 * The reply that answers `label` as the question is asked: over a compact context, the citation of
 * the line the world model answers the question from when that line says `label` (undefined when
 * none does); with a context to write, the world model's trace and then that citation; else the
 * label itself. What SFT data and exports teach a policy to write.
 */
export function replyFor(asked: AskedQuestion, question: string, label: string): string | undefined {
  if (asked.written) return asked.written.answer?.value === label ? writtenReply(asked.written) : undefined;
  if (!asked.cited) return label;
  const line = asked.cited.answerLine(question);
  return line && line.value === label ? citation(line) : undefined;
}
