/** Turns a recorded episode into its socialized context (the SAP layout of socialized-context.ts). */
import type { Episode } from "./episode.js";
import { NONE, SAME_AS_STATE, type SocializedContext } from "./socialized-context.js";

export interface SocializeOptions {
  /** Append `<mental_state>` to an agent's observation whenever its mental state changes (default true). */
  readonly mentalStates?: boolean;
}

export function toSocializedContext(episode: Pick<Episode, "agents" | "steps">, opts: SocializeOptions = {}): SocializedContext {
  const withMental = opts.mentalStates ?? true;
  const names = episode.agents;
  // Each agent's last mental state, by its index in `names`.
  const previous: (string | undefined)[] = new Array(names.length).fill(undefined);
  // Indexed loops: every story a benchmark replays is written out here.
  const steps: SocializedContext["socialized_context"] = [];
  for (let s = 0; s < episode.steps.length; s++) {
    const rec = episode.steps[s]!;
    const observations: string[] = [];
    const actions: string[] = [];
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const obs = rec.observations[name];
      let text = obs?.sameAsState ? SAME_AS_STATE : obs && obs.text !== "" ? obs.text : NONE;
      const mental = rec.mentalStates[name];
      if (withMental && mental !== undefined && mental !== previous[i]) {
        const tag = `<mental_state>${mental}</mental_state>`;
        text = text === NONE ? tag : `${text} ${tag}`;
      }
      previous[i] = mental;
      observations.push(`${name}: ${text}`);
      actions.push(`${name}: ${rec.actions[name] ?? NONE}`);
    }
    steps.push({ timestep: String(rec.timestep), state: rec.state === "" ? NONE : rec.state, observations, actions });
  }
  return { agents_names: names.slice(), socialized_context: steps };
}
