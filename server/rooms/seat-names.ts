/**
 * Seats named in a room's options (`humanSeats`, `agents`) must be seats of its episode: a
 * misspelt name used to be accepted and leave no seat open (or its controller unused). Names are
 * checked against the first episode's agents; a looping room's later episodes may have other
 * names, which positions follow.
 */
import { OptionsError } from "./options.js";

/** A seat by position: a number, or a string of digits (as `seat: "0"` joins). Names are never digits. */
export function seatPosition(seat: string | number): number | undefined {
  return typeof seat === "number" ? seat : /^\d+$/.test(seat) ? Number(seat) : undefined;
}

/** Whether the seat at `index`, named `agent`, is one of `humanSeats`. */
export function isHumanSeat(humanSeats: "all" | "none" | readonly (string | number)[], agent: string, index: number): boolean {
  return humanSeats === "all" ? true : humanSeats === "none" ? false : humanSeats.some((s) => s === agent || seatPosition(s) === index);
}

/** The names the error lists (a social room has thousands of seats: the first ones, then a count). */
const LISTED = 24;

export function checkSeatNames(
  opts: { readonly humanSeats: "all" | "none" | readonly (string | number)[]; readonly agents: Readonly<Record<string, unknown>> },
  names: readonly string[],
  room: string,
  episode: string,
): void {
  const listed = names.slice(0, LISTED).map((n, i) => `${i} ${n}`);
  if (names.length > LISTED) listed.push(`... (${names.length} in all)`);
  const known = `the ${episode}'s agents: ${listed.join(", ")}`;
  const set = new Set(names);
  if (Array.isArray(opts.humanSeats)) {
    for (const s of opts.humanSeats) {
      const at = seatPosition(s);
      if (at !== undefined ? at >= names.length : !set.has(s as string)) throw new OptionsError(`bad ${room} options: humanSeats: no seat ${JSON.stringify(s)} (${known})`);
    }
  }
  for (const name of Object.keys(opts.agents)) {
    if (!set.has(name)) throw new OptionsError(`bad ${room} options: agents.${name}: no such seat (${known})`);
  }
}
