/**
 * The labels of a timeline's steps (a live room's and a replay's): what each column of the world's
 * view holds, and when an action shows. A timestep lists what each agent perceived of the state
 * then and what it chose to do; the world applies the actions together, so their effects are in
 * the next timestep's state, and the labels say so.
 */
import { h } from "./dom.js";

/** The world view's column headers at timestep `t`. */
export function agentsHead(t: number): HTMLTableSectionElement {
  return h(
    "thead",
    h(
      "tr",
      h("th", "agent"),
      h("th", "perceives", h("span.mind-label", " · believes")),
      h("th.act", { title: `the world applies the actions of t${t} together: their effects are in t${t + 1}'s state` }, `does (effect at t${t + 1})`),
    ),
  );
}

/** An agent's own view of what it did at timestep `t`. */
export function agentAct(action: string, t: number, ...more: (HTMLElement | HTMLElement[] | null)[]): HTMLElement {
  return h(
    "div.act",
    action === "none"
      ? h("span.muted", "does nothing")
      : h("span", h("span.muted", { title: `its effect is in t${t + 1}'s state` }, `does (effect at t${t + 1}): `), action),
    more,
  );
}
