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
  const previous = new Map<string, string | undefined>();
  return {
    agents_names: names.slice(),
    socialized_context: episode.steps.map((rec) => ({
      timestep: String(rec.timestep),
      state: rec.state === "" ? NONE : rec.state,
      observations: names.map((name) => {
        const obs = rec.observations[name];
        let text = obs?.sameAsState ? SAME_AS_STATE : obs && obs.text !== "" ? obs.text : NONE;
        const mental = rec.mentalStates[name];
        if (withMental && mental !== undefined && mental !== previous.get(name)) {
          const tag = `<mental_state>${mental}</mental_state>`;
          text = text === NONE ? tag : `${text} ${tag}`;
        }
        previous.set(name, mental);
        return `${name}: ${text}`;
      }),
      actions: names.map((name) => `${name}: ${rec.actions[name] ?? NONE}`),
    })),
  };
}
