/**
 * The tables speed-tomi prints, from the timings of its runs. Kept apart from the script (which
 * spawns processes) so that what the table claims, medians, the ratio against a peer and Node's
 * own start-up taken out, is tested.
 */

/** One process, as the child reported it from its exit handler. */
export interface Sample {
  readonly wall: number;
  readonly user: number;
  readonly sys: number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError("median of no values");
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

const cpu = (s: Sample) => s.user + s.sys;

type Row = readonly [name: string, values: number[]];

/** Each measure of `ss`, then its CPU total less the bare start taken beside each run. */
function measures(ss: readonly Sample[], bare: readonly Sample[]): Row[] {
  return [
    ["wall (ms)", ss.map((s) => s.wall)],
    ["user CPU (ms)", ss.map((s) => s.user)],
    ["system CPU (ms)", ss.map((s) => s.sys)],
    ["CPU total (ms)", ss.map(cpu)],
    ["CPU total less `node -e 0` (ms)", minus(ss.map(cpu), bare.map(cpu))],
  ];
}

/**
 * Median, min and max of each measure of this checkout's runs, then Node's own start (`node -e 0`,
 * run alternately with them) and the run less it: the part that is socialworld's.
 */
export function speedTable(runs: readonly Sample[], bare: readonly Sample[]): string {
  const rows = measures(runs, bare);
  // Node's own start goes just above the row that takes it out.
  rows.splice(rows.length - 1, 0, ["`node -e 0`: CPU total (ms)", bare.map(cpu)]);
  let out = "| measure | median | min | max |\n|---|---:|---:|---:|\n";
  for (const [name, xs] of rows) out += `| ${name} | ${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)} | ${Math.max(...xs).toFixed(0)} |\n`;
  return out;
}

/** This checkout's runs against a peer's, alternating: medians, mins and the ratio of medians. */
export function againstTable(runs: readonly Sample[], theirs: readonly Sample[], bare: readonly Sample[]): string {
  const ours = measures(runs, bare);
  const peer = measures(theirs, bare);
  let out = "| measure | this: median | min | against: median | min | ratio of medians |\n|---|---:|---:|---:|---:|---:|\n";
  ours.forEach(([name, xs], i) => {
    const ys = peer[i]![1];
    out += `| ${name} | ${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)} | ${median(ys).toFixed(0)} | ${Math.min(...ys).toFixed(0)} | ${(median(xs) / median(ys)).toFixed(2)} |\n`;
  });
  const b = bare.map(cpu);
  out += `| \`node -e 0\`: CPU total (ms) | ${median(b).toFixed(0)} | ${Math.min(...b).toFixed(0)} | | | |\n`;
  return out;
}

/**
 * Pairwise differences of runs taken alternately (run i with bare start i), so that a slow patch
 * of the machine weighs on both sides of each difference.
 */
function minus(xs: readonly number[], ys: readonly number[]): number[] {
  if (xs.length !== ys.length) throw new RangeError(`${xs.length} runs against ${ys.length} bare starts`);
  return xs.map((x, i) => x - ys[i]!);
}

/**
 * What NODE_EXTRA_CA_CERTS costs every Node process on this machine: Node reads and parses the
 * certificates it names before running any JavaScript, so it is start-up time no program can save.
 * Undefined when the variable is not set.
 */
export function certificatesNote(file: string | undefined, withIt: readonly Sample[], without: readonly Sample[], runs: readonly Sample[]): string | undefined {
  if (!file) return undefined;
  const slow = median(withIt.map(cpu));
  const fast = median(without.map(cpu));
  const extra = slow - fast;
  const run = median(runs.map(cpu));
  return (
    `NODE_EXTRA_CA_CERTS is set (${file}): Node reads those certificates as it starts, before any JavaScript runs. ` +
    `\`node -e 0\` takes ${slow.toFixed(0)} ms of CPU with it and ${fast.toFixed(0)} ms without, ` +
    `so on a machine without it the run would take about ${(run - extra).toFixed(0)} ms (median ${run.toFixed(0)} less ${extra.toFixed(0)}).\n`
  );
}

/** How far the median start may sit above the fastest before the host counts as busy. */
const BUSY_START = 1.2;

/**
 * A warning when Node's own start (`node -e 0`, taken between the runs) varied enough to show the
 * host was busy: on a guest that counts the time its CPU is taken away as the process's own, the
 * same work then costs more CPU, and every figure in the table grows with it. Undefined when the
 * starts held steady (median within a fifth of the fastest), or when there are too few to say.
 */
export function contentionNote(bare: readonly Sample[]): string | undefined {
  if (bare.length < 3) return undefined;
  const b = bare.map(cpu);
  const fastest = Math.min(...b);
  const typical = median(b);
  if (typical <= BUSY_START * fastest) return undefined;
  return (
    `The host was busy during these runs: \`node -e 0\` took ${fastest.toFixed(0)}-${Math.max(...b).toFixed(0)} ms of CPU ` +
    `(median ${typical.toFixed(0)}, ${((100 * typical) / fastest - 100).toFixed(0)}% above its fastest) for the same work, and the runs' figures grow the same way. ` +
    `Ratios of alternating runs (--against) still compare; for the absolute figure, run again when \`node -e 0\` holds steady.\n`
  );
}
