/**
 * Decodes what a client's socket actually received, frame by frame, independently of the SDK:
 * the JOIN_ROOM handshake (the state's schema, by reflection), full states and patches into a
 * fresh decoder, and messages (msgpack). It records every perspective the decoded state ever
 * held, so a test can prove what a client never got.
 */
import { Decoder, Reflection, decode, type Iterator } from "@colyseus/schema";
import { unpack } from "msgpackr";

const JOIN_ROOM = 10;
const ROOM_DATA = 13;
const ROOM_STATE = 14;
const ROOM_STATE_PATCH = 15;

export interface PerspectiveSeen {
  name: string;
  steps: { timestep: number; text: string; mentalState: string; actions: Record<string, string>; data: string; leaks?: string }[];
}

export interface Decoded {
  /** Every perspective name the state held at any point. */
  readonly perspectivesEverSeen: Set<string>;
  /** Every feed name a social room's state held at any point (server/rooms/social-state.ts). */
  readonly feedsEverSeen: Set<string>;
  /** The last decoded state (plain JSON). */
  readonly state: Record<string, unknown> | undefined;
  /** Perspectives as last seen, by name (including ones later removed). */
  readonly perspectives: Map<string, PerspectiveSeen>;
  readonly messages: { type: string | number; payload: unknown }[];
  readonly frames: number;
}

export function decodeFrames(frames: readonly Uint8Array[]): Decoded {
  let decoder: Decoder | undefined;
  const perspectivesEverSeen = new Set<string>();
  const feedsEverSeen = new Set<string>();
  const perspectives = new Map<string, PerspectiveSeen>();
  const messages: { type: string | number; payload: unknown }[] = [];
  let state: Record<string, unknown> | undefined;
  const snapshot = () => {
    state = (decoder!.state as unknown as { toJSON(): Record<string, unknown> }).toJSON();
    for (const name of Object.keys(state.feeds ?? {})) feedsEverSeen.add(name);
    const ps = (state.perspectives ?? {}) as Record<string, PerspectiveSeen>;
    for (const [name, p] of Object.entries(ps)) {
      perspectivesEverSeen.add(name);
      const prev = perspectives.get(name);
      // Keep every step ever seen (histories are trimmed on the server).
      const steps = [...(prev?.steps ?? [])];
      for (const s of p.steps ?? []) if (!steps.some((x) => x.timestep === s.timestep && x.text === s.text)) steps.push(s);
      perspectives.set(name, { name, steps });
    }
  };
  for (const f of frames) {
    const buf = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
    const code = buf[0]! & 0x1f;
    const it: Iterator = { offset: 1 };
    if (code === JOIN_ROOM) {
      decode.utf8Read(buf, it, buf[it.offset++]!); // reconnection token
      const serializer = decode.utf8Read(buf, it, buf[it.offset++]!);
      if (serializer !== "schema") throw new Error(`unexpected serializer ${serializer}`);
      const len = decode.number(buf, it);
      decoder = Reflection.decode(buf.subarray(0, it.offset + len), it);
    } else if (code === ROOM_STATE || code === ROOM_STATE_PATCH) {
      if (!decoder) throw new Error("state before the handshake");
      decoder.decode(buf, it);
      snapshot();
    } else if (code === ROOM_DATA) {
      const type = decode.stringCheck(buf, it) ? decode.string(buf, it) : decode.number(buf, it);
      messages.push({ type, payload: buf.byteLength > it.offset ? unpack(buf.subarray(it.offset)) : undefined });
    }
  }
  return { perspectivesEverSeen, feedsEverSeen, state, perspectives, messages, frames: frames.length };
}

/** True when `needle` (UTF-8) occurs in any frame. */
export function bytesContain(frames: readonly Uint8Array[], needle: string): boolean {
  const n = Buffer.from(needle, "utf8");
  return frames.some((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength).includes(n));
}

/** A social room's feed as a socket's frames decode it (server/rooms/social-state.ts). */
export interface FeedJson {
  name: string;
  items: { id: string; kind: string; author: string; parent: string; depth: number; time: number; seen: number; topic: string; text: string; via: string }[];
}

/** The social room's feeds (by name: "world", a person's user) in what a socket received. */
export const feedsOf = (frames: readonly Uint8Array[]) => (decodeFrames(frames).state?.feeds ?? {}) as Record<string, FeedJson>;
