/**
 * The prediction task behind each question this process has made (benchmark.ts `task`), for the
 * agents that answer from the world rather than from the prompt: the simulation agent (the
 * generator's latent block) and the majority baseline (the task's depth). A question reaches them
 * as the QuestionTask the prompt was built for, or a copy of it (simulation mode asks the solver
 * with a copy): the key is the question's item id and prompt, which no copy changes. Entries hold
 * their task weakly and go when the benchmark's items do: a server that runs benchmark after
 * benchmark keeps only the tasks of the runs still going.
 */
import type { QuestionTask } from "../question/world.js";
import type { SocialTask } from "./tasks.js";

const tasks = new Map<string, WeakRef<SocialTask>>();
const gone = new FinalizationRegistry<string>((key) => {
  if (tasks.get(key)?.deref() === undefined) tasks.delete(key);
});

function keyOf(q: Pick<QuestionTask, "itemId" | "prompt">): string {
  return `${q.itemId}\u0000${q.prompt}`;
}

export function remember(q: QuestionTask, task: SocialTask): void {
  const key = keyOf(q);
  if (tasks.get(key)?.deref() === task) return;
  tasks.set(key, new WeakRef(task));
  gone.register(task, key);
}

/** The task behind a question of the social benchmark; throws when this process did not make it. */
export function taskBehind(q: QuestionTask): SocialTask {
  const task = tasks.get(keyOf(q))?.deref();
  if (!task) throw new Error(`question ${q.itemId} was not made by this process's social benchmark (load its file first)`);
  return task;
}
