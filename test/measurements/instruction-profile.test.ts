import { describe, expect, it } from "vitest";
import { instructionShares, OTHER_PART } from "../../measurements/instruction-profile.js";

// A cachegrind output file as valgrind 3.19 writes it with --cache-sim=no: one event (Ir).
const FILE = [
  "desc: I1 cache: 32768 B, 64 B, 8-way associative",
  "cmd: node bin/socialworld.js bench tomi",
  "events: Ir",
  "fl=./csu/../csu/libc-start.c",
  "fn=__libc_start_main@@GLIBC_2.34",
  "242 11",
  "311 3",
  "fl=???",
  "fn=v8::internal::compiler::GraphReducer::Reduce(v8::internal::compiler::Node*)",
  "0 500",
  "fn=???",
  "0 120",
  "fn=Builtins_LoadIC",
  "0 200",
  "fn=v8::internal::JsonStringifier::SerializeString(v8::internal::Handle<v8::internal::String>)",
  "0 90",
  "fn=heap::base::SlotCallbackResult v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>(v8::internal::FullHeapObjectSlot, v8::internal::HeapObject)",
  "0 60",
  "fn=v8::internal::String::ComputeAndSetRawHash(v8::internal::SharedStringAccessGuardIfNeeded const&)",
  "0 16",
  "summary: 1000",
].join("\n");

describe("instruction shares", () => {
  it("sums each function's instructions into its part of Node and V8, largest first", () => {
    const { total, shares } = instructionShares(FILE);
    expect(total).toBe(1000);
    expect(shares.map((s) => [s.part, s.instructions])).toEqual([
      ["optimizing compiler (TurboFan)", 500],
      ["interpreter and builtins", 200],
      ["JIT code (baseline and optimized JavaScript)", 120],
      ["JSON and UTF-8 encoding", 90],
      ["garbage collection", 60],
      ["V8 runtime (lookups, strings, maps, objects)", 16],
      [OTHER_PART, 14],
    ]);
  });

  it("ignores the header and summary lines", () => {
    expect(instructionShares("events: Ir\nsummary: 5\n").total).toBe(0);
  });
});
