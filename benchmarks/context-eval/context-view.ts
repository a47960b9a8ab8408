/**
 * A socialized context read for scoring, whatever wrote it: lines ("Name: text") or dicts, any
 * spelling of the tags both projects use (`<same_as_state />` or `[SAME AS STATE]`,
 * `<same_as_last_action />`, `<same_as_last_action_x />` or `[SAME AS LAST ACTION]`,
 * `<mental_state>...</mental_state>`, `none`), and whatever is malformed simply left out. Agents are
 * matched by name, ignoring case.
 *
 * Every timestep is resolved to text: its state (a "same as last action" state is the previous
 * timestep's actions), the previous timestep's actions, and for each agent what it perceives
 * (`<same_as_state />` is the state; mental states, which are not perceptions, are dropped; `none`
 * is nothing).
 */

export interface StepView {
  /** Position in `socialized_context`. */
  readonly index: number;
  readonly timestep: string;
  /** The resolved state; "" when none. */
  readonly state: string;
  /** Agent key -> what it perceives ("" when nothing). */
  readonly perceived: ReadonlyMap<string, string>;
  /** Observations that say something of their own (not only <same_as_state />). */
  readonly explicit: readonly string[];
  /** This timestep's actions, "Name action. Name action" ("" when no one acts). */
  readonly actions: string;
  /** The previous timestep's actions: what this timestep's state shows, in our convention. */
  readonly previousActions: string;
}

export interface ContextView {
  /** Agent names as written, first spelling wins. */
  readonly agents: readonly string[];
  readonly steps: readonly StepView[];
}

const SAME_AS_STATE = /<\s*same_as_state\s*\/?\s*>|\[\s*same[\s_]+as[\s_]+state\s*\]/gi;
const SAME_AS_LAST_ACTION = /<\s*same_as_last_action(?:_(\d+))?\s*\/?\s*>|\[\s*same[\s_]+as[\s_]+last[\s_]+action\s*\]/gi;
const MENTAL = /<\s*mental_state\s*>[\s\S]*?<\s*\/\s*mental_state\s*>/gi;
const NONE = /^\s*none\.?\s*$/i;

export const agentKey = (name: string) => name.trim().toLowerCase();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Agent key -> [name as written, text] from "Name: text" lines or a {"Name": "text"} dict. */
function entries(v: unknown): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  const put = (name: string, text: unknown) => {
    const key = agentKey(name);
    if (key === "" || typeof text !== "string" || out.has(key)) return;
    out.set(key, [name.trim(), text]);
  };
  if (Array.isArray(v)) {
    for (const line of v) {
      if (typeof line !== "string") continue;
      const i = line.indexOf(":");
      if (i > 0) put(line.slice(0, i), line.slice(i + 1).trim());
    }
  } else if (isObject(v)) {
    for (const [name, text] of Object.entries(v)) put(name, text);
  }
  return out;
}

const clean = (text: string) => (NONE.test(text) ? "" : text.replace(/\s+/g, " ").trim());

/** "Name action. Name action" for those who act (only `only`'s, when it acts). */
function actionsText(act: ReadonlyMap<string, [string, string]>, only: string | undefined): string {
  const acts = [...act].filter(([, [, t]]) => clean(t) !== "");
  const pick = only === undefined ? acts : acts.filter(([k]) => k === only);
  return (pick.length ? pick : acts).map(([, [n, t]]) => `${n} ${clean(t)}`).join(". ");
}

export function viewOf(sap: unknown): ContextView {
  const names = new Map<string, string>();
  const addName = (n: string) => {
    const k = agentKey(n);
    if (k && !names.has(k)) names.set(k, n.trim());
  };
  if (isObject(sap) && Array.isArray(sap.agents_names)) for (const n of sap.agents_names) if (typeof n === "string") addName(n);
  const raw = isObject(sap) && Array.isArray(sap.socialized_context) ? sap.socialized_context : [];
  const parsed = raw.map((s) => ({
    step: isObject(s) ? s : {},
    obs: entries(isObject(s) ? s.observations : undefined),
    act: entries(isObject(s) ? s.actions : undefined),
  }));
  for (const p of parsed) for (const [, [n]] of [...p.obs, ...p.act]) addName(n);
  const order = [...names.keys()];

  const steps: StepView[] = [];
  parsed.forEach((p, index) => {
    const prev = parsed[index - 1];
    // What "same as last action" stands for: the previous timestep's actions (agent x's, when it says which).
    const lastAction = (x: string | undefined): string => (prev ? actionsText(prev.act, x === undefined ? undefined : order[Number(x)]) : "");
    const resolveActions = (t: string) => t.replace(SAME_AS_LAST_ACTION, (_m, x: string | undefined) => ` ${lastAction(x)} `);
    const rawState = p.step.state;
    const state = typeof rawState === "string" ? clean(resolveActions(rawState).replace(MENTAL, " ")) : "";
    const perceived = new Map<string, string>();
    const explicit: string[] = [];
    for (const key of order) {
      const text = p.obs.get(key)?.[1];
      if (text === undefined) {
        perceived.set(key, "");
        continue;
      }
      const own = clean(resolveActions(text.replace(MENTAL, " ")).replace(SAME_AS_STATE, " "));
      const all = clean(resolveActions(text.replace(MENTAL, " ")).replace(SAME_AS_STATE, ` ${state} `));
      perceived.set(key, all);
      if (own !== "") explicit.push(own);
    }
    const timestep = p.step.timestep;
    steps.push({
      index,
      timestep: typeof timestep === "string" || typeof timestep === "number" ? String(timestep) : "",
      state,
      perceived,
      explicit,
      actions: actionsText(p.act, undefined),
      previousActions: lastAction(undefined),
    });
  });
  return { agents: order.map((k) => names.get(k)!), steps };
}
