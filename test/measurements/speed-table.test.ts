import { describe, expect, it } from "vitest";
import { againstTable, certificatesNote, contentionNote, median, speedTable, type Sample } from "../../measurements/speed-table.js";

const s = (wall: number, user: number, sys: number): Sample => ({ wall, user, sys });
// Three runs and the three bare starts taken between them (the second run met a busy machine).
const RUNS = [s(700, 650, 60), s(900, 850, 70), s(690, 640, 50)];
const BARE = [s(60, 45, 10), s(80, 60, 15), s(55, 40, 10)];

/** The table's rows as { measure: [median, min, max] }. */
function rows(table: string): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const line of table.trim().split("\n").slice(2)) {
    const [name, ...cells] = line.split("|").slice(1, -1).map((c) => c.trim());
    out[name!] = cells.filter((c) => c !== "").map(Number);
  }
  return out;
}

describe("speed-tomi's tables", () => {
  it("takes medians over an odd or even number of runs", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(3);
    expect(() => median([])).toThrow(RangeError);
  });

  it("gives each measure's median, min and max, and the run less Node's own start, run by run", () => {
    const t = rows(speedTable(RUNS, BARE));
    expect(t["wall (ms)"]).toEqual([700, 690, 900]);
    expect(t["CPU total (ms)"]).toEqual([710, 690, 920]);
    expect(t["`node -e 0`: CPU total (ms)"]).toEqual([55, 50, 75]);
    // Differences pair each run with the start taken beside it: 655, 845, 640.
    expect(t["CPU total less `node -e 0` (ms)"]).toEqual([655, 640, 845]);
  });

  it("refuses runs and bare starts that do not pair up", () => {
    expect(() => speedTable(RUNS, BARE.slice(1))).toThrow(/3 runs against 2 bare starts/);
  });

  it("compares against a peer by the ratio of medians, Node's start taken out of both", () => {
    const theirs = [s(1000, 900, 100), s(1100, 1000, 100), s(1050, 950, 100)];
    const t = rows(againstTable(RUNS, theirs, BARE));
    expect(t["CPU total (ms)"]).toEqual([710, 690, 1050, 1000, 0.68]);
    expect(t["CPU total less `node -e 0` (ms)"]).toEqual([655, 640, 1000, 945, 0.66]);
    expect(t["`node -e 0`: CPU total (ms)"]).toEqual([55, 50]);
  });

  it("says what NODE_EXTRA_CA_CERTS costs only where it is set", () => {
    const without = [s(15, 10, 2), s(16, 11, 3), s(14, 10, 2)];
    expect(certificatesNote(undefined, BARE, without, RUNS)).toBeUndefined();
    const note = certificatesNote("/etc/ssl/certs/ca-certificates.crt", BARE, without, RUNS)!;
    expect(note).toContain("takes 55 ms of CPU with it and 12 ms without");
    expect(note).toContain("about 667 ms (median 710 less 43)");
  });

  it("warns that the host was busy when Node's own start varied by more than a fifth", () => {
    // Steady starts (median 4% above the fastest): no warning, whatever the runs did.
    expect(contentionNote([s(100, 80, 22), s(110, 84, 22), s(100, 82, 22), s(100, 85, 21), s(100, 83, 23)])).toBeUndefined();
    // Too few starts to tell.
    expect(contentionNote([s(100, 80, 20), s(200, 180, 20)])).toBeUndefined();
    // A busy patch: the median start is 39% above the fastest.
    const note = contentionNote([s(160, 127, 22), s(200, 149, 0), s(120, 87, 20), s(210, 190, 20), s(150, 129, 20)])!;
    expect(note).toContain("took 107-210 ms of CPU (median 149, 39% above its fastest)");
    expect(note).toContain("--against");
  });
});
