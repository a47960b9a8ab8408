/**
 * Some of a ToMi file's questions, as a ToMi file of their own: each question is its story's
 * numbered sentences then the question line (tab-separated answer), and the trace file has one
 * line per question, so the kept blocks and their trace lines make a file every reader takes.
 */
export function questionSubset(txt: string, trace: string, indices: readonly number[]): { txt: string; trace: string } {
  const blocks: string[][] = [];
  let block: string[] = [];
  for (const line of txt.split("\n")) {
    if (line === "") continue;
    block.push(line);
    if (line.includes("\t")) {
      blocks.push(block);
      block = [];
    }
  }
  const traces = trace.split("\n").filter((l) => l !== "");
  if (traces.length !== blocks.length) throw new Error(`questionSubset: ${blocks.length} questions but ${traces.length} trace lines`);
  const out = indices.map((i) => {
    if (!blocks[i]) throw new Error(`questionSubset: no question ${i} (the file has ${blocks.length})`);
    return blocks[i]!.join("\n");
  });
  return { txt: out.join("\n") + "\n", trace: indices.map((i) => traces[i]!).join("\n") + "\n" };
}
