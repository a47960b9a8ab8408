/**
 * `socialworld demo [--stories N] [--seed S] [--delay MS] [--store DIR]`: the live demo in the
 * terminal. Generated ToMi stories are played step by step through the world model, showing the
 * world's state and each agent's own view (what it perceives, what it believes); at the end of each
 * story the simulation agent answers the story's questions from the text alone, next to the world
 * model's labels. Every episode is logged to the store.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { fill, promptTemplate } from "../../worlds/question/prompts.js";
import { Rng } from "../../worlds/core/rng.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { buildScenario, generateTomiStory, renderSentence, replayTomi } from "../../worlds/tomi/index.js";
import { EpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { intArg, parseCommand } from "../args.js";
import { onStopSignal } from "../stop-signals.js";

export const DEMO_HELP = `socialworld demo [--stories N] [--seed S] [--delay MS] [--store DIR]

Plays generated ToMi stories step by step in the terminal: the world's state, each agent's view
and beliefs, then the simulation agent's answers. Runs until Ctrl-C unless --stories is given.
`;

const Args = z.object({
  _: z.tuple([]),
  stories: intArg(1).optional(),
  seed: intArg(0, 2 ** 32 - 1).default(Math.floor(Date.now() / 1000) % 100000),
  delay: intArg(0, 60_000).default(700),
  store: z.string().min(1).optional(),
});

const tty = process.stdout.isTTY;
const c = (code: string, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const dim = (s: string) => c("2", s);
const bold = (s: string) => c("1", s);
const cyan = (s: string) => c("36", s);
const green = (s: string) => c("32", s);
const red = (s: string) => c("31", s);

export async function demoCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  const store = await RunStore.open(args.store);
  const run = await store.create("demo", "Terminal demo: generated ToMi stories", { seed: args.seed });
  process.stderr.write(`run ${run.id} in the store ${store.root}\n`);
  const log = new EpisodeLog(store.episodesPath(run));
  let stop = false;
  const signals = onStopSignal(() => (stop = true));
  const out = (s = "") => process.stdout.write(s + "\n");
  out(bold(`socialworld demo`) + dim(` · seed ${args.seed} · episodes logged to ${store.episodesPath(run)} · Ctrl-C to stop`));
  const rng = Rng.seeded(`demo:${args.seed}`);
  const agent = new SimulationAgent();
  let played = 0;
  try {
    while (!stop && (args.stories === undefined || played < args.stories)) {
      const story = await generateTomiStory(rng);
      const texts = story.sentences.map(renderSentence);
      const scenario = buildScenario(story.sentences.map((sentence, i) => ({ sentence, text: texts[i]!, line: i + 1 })), "demo");
      out();
      out(bold(`Story ${played + 1}`) + dim(` (${story.storyType.replace(/_/g, " ")}) · agents: ${scenario.init.agents.join(", ")}`));
      const { episode } = await replayTomi(scenario, "demo", {
        onTimestep: async (rec) => {
          if (stop) return;
          out(`${cyan(`t${rec.timestep}`.padEnd(4))} ${rec.state === "none" ? dim("(nothing yet)") : rec.state}`);
          for (const name of scenario.init.agents) {
            const obs = rec.observations[name]!;
            const sees = obs.text === "" ? dim("sees nothing") : obs.sameAsState ? "sees it all" : `sees: ${obs.text}`;
            const mind = rec.mentalStates[name];
            out(`     ${name.padEnd(10)} ${sees}${mind ? dim(` · ${mind}`) : ""}`);
          }
          if (args.delay) await sleep(args.delay);
        },
      });
      const answers = [];
      for (const q of story.questions) {
        const storyText = texts.map((t, i) => `${i + 1} ${t}`).join("\n");
        const task = {
          benchmark: "tomi",
          itemId: `demo-${played}`,
          mode: "vanilla" as const,
          story: storyText,
          question: q.text,
          prompt: fill(promptTemplate("worlds/tomi/prompts/tomi-vanilla.txt"), { story: storyText, question: q.text }),
        };
        const reply = await agent.act({ world: "question", agent: "respondent", timestep: 1, observation: { text: task.prompt, data: task }, actionSchema: z.any() });
        const ok = reply.action.answer === q.answer;
        answers.push({ question: q.text, type: q.rawType, label: q.answer, answer: reply.action.answer, correct: ok });
        out(`  ${ok ? green("✓") : red("✗")} ${q.text} ${bold(reply.action.answer)}${ok ? "" : dim(` (world model: ${q.answer})`)}`);
      }
      log.append({ kind: "demo_story", run: run.id, story: texts, trace: story.events, storyType: story.storyType, socialized_context: toSocializedContext(episode), answers });
      played++;
    }
  } finally {
    signals.dispose();
    log.close();
    await store.update(run.id, { status: stop ? "interrupted" : "done", finishedAt: new Date().toISOString(), summary: { stories: played } });
  }
  out();
  out(dim(`${played} stories played; log: ${store.episodesPath(run)}`));
  return 0;
}
