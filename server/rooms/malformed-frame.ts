/**
 * A client's message frame whose payload does not decode. Colyseus decodes a ROOM_DATA or
 * ROOM_REQUEST frame's msgpack payload itself, and printed msgpackr's stack trace to the server's
 * log for every one that did not: a client in another language with a bug in its encoder (the
 * docs/protocol.md documents the raw protocol for them) filled the log with the server's stacks for the
 * client's error. The rooms check the frame first and answer the client instead.
 */
import { Protocol } from "@colyseus/core";
import { decode } from "@colyseus/schema";
import { unpack } from "msgpackr";

/** The low bits of a frame's first byte are its protocol code (Colyseus's PROTOCOL_CODE_MASK). */
const CODE_MASK = 0x1f;

/**
 * Why the frame's payload cannot be decoded, as Colyseus would decode it: [code][request id, for
 * a request][type: a string or a number][one msgpack value, or nothing]. Undefined when it can be,
 * and for the frames that carry no msgpack payload.
 */
export function malformedFrame(frame: Uint8Array): string | undefined {
  const code = frame[0]! & CODE_MASK;
  if (code !== Protocol.ROOM_DATA && code !== Protocol.ROOM_REQUEST) return undefined;
  const at = { offset: 1 };
  try {
    if (code === Protocol.ROOM_REQUEST) decode.number(frame, at);
    if (decode.stringCheck(frame, at)) decode.string(frame, at);
    else decode.number(frame, at);
    if (at.offset > frame.byteLength) return "the message type is cut short";
    if (frame.byteLength > at.offset) unpack(frame.subarray(at.offset));
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
