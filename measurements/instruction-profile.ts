/**
 * Where a process's instructions go, by part of Node and V8, from a cachegrind output file
 * (`valgrind --tool=cachegrind --cachegrind-out-file=FILE node ...`). Node's binary keeps its
 * symbols, so V8's optimizing compiler, garbage collector, runtime and builtins each show by name;
 * code V8 generated at run time (Sparkplug's baseline code and TurboFan's optimized code) has no
 * symbol and counts as "JIT code". (The interpreter's handlers are builtins.)
 *
 * This is what tells a slow short run apart from slow code: in a run of a few thousand questions,
 * compiling the hot functions can cost several times what the compiled code itself runs.
 */
import { readFileSync } from "node:fs";

export interface InstructionShare {
  readonly part: string;
  readonly instructions: number;
}

/** Parts, first match wins; each matches against "file:function" as cachegrind names it. */
const PARTS: readonly (readonly [part: string, test: RegExp])[] = [
  ["optimizing compiler (TurboFan)", /compiler::|turboshaft|OptimizedCompilationJob|PipelineCompilationJob|TurbofanCompilationJob/],
  ["garbage collection", /Scaveng|Marking|MarkCompact|Sweeper|Evacuat|heap::base|GCTracer|RememberedSet|SlotSet|MinorGC|Heap::Collect|Heap::Perform|LiveObjectRange|MemoryChunk|PagedSpace|SemiSpace/],
  ["JSON and UTF-8 encoding", /Json|WriteUtf8|Utf8Length|Utf8::/],
  ["parsing and bytecode generation", /Parser|Scanner|PreParser|interpreter::Bytecode|BytecodeGenerator|AstValueFactory|parsing::/],
  ["OpenSSL (Node's start; NODE_EXTRA_CA_CERTS's certificates)", /ossl|OPENSSL|CRYPTO_|EVP_|OSSL_|ERR_|sha\d+_block|bn_|BN_/],
  ["interpreter and builtins", /^\?\?\?:Builtins_/],
  ["JIT code (baseline and optimized JavaScript)", /^\?\?\?:\?\?\?$/],
  ["V8 runtime (lookups, strings, maps, objects)", /v8::internal::|v8::base::|v8::String|v8::Object|v8::Function/],
  ["malloc and memcpy", /malloc|free|memcpy|memmove|memset|memcmp|strlen|strcmp/],
];

export const OTHER_PART = "other (Node, libc, libuv, locks)";

/** Instructions by part, largest first, from a cachegrind output file's text. */
export function instructionShares(text: string): { total: number; shares: InstructionShare[] } {
  const byPart = new Map<string, number>();
  let fl = "";
  let part = OTHER_PART;
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("fl=")) fl = line.slice(3);
    else if (line.startsWith("fn=")) {
      const name = `${fl}:${line.slice(3)}`;
      part = PARTS.find(([, re]) => re.test(name))?.[0] ?? OTHER_PART;
    } else if (line.charCodeAt(0) >= 48 && line.charCodeAt(0) <= 57) {
      // "<source line> <Ir> ...": the first event is Ir, instructions.
      const n = Number(line.split(" ")[1]);
      if (!Number.isFinite(n)) continue;
      byPart.set(part, (byPart.get(part) ?? 0) + n);
      total += n;
    }
  }
  const shares = [...byPart].map(([part, instructions]) => ({ part, instructions })).sort((a, b) => b.instructions - a.instructions);
  return { total, shares };
}

export function instructionSharesOf(file: string): { total: number; shares: InstructionShare[] } {
  return instructionShares(readFileSync(file, "utf8"));
}
