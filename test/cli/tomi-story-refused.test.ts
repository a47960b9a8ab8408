/**
 * A ToMi story whose sentences all read but that the world model refuses to play ("Ella exited
 * the kitchen." while she is in the garage) is found when it is played, as docs/benchmarks.md says: exit 2
 * with the file and line on one line, no report, the run marked failed, and the questions answered
 * before that story kept in its log.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { RunStore } from "../../store/run-store.js";

const io = captureOutput();
const root = mkdtempSync(join(tmpdir(), "sw-tomi-refused-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const good = ["1 Ella entered the garage.", "2 Avery entered the garage.", "3 The spinach is in the green_crate.", "4 Ella exited the garage."];
const block = (story: readonly string[]) => [...story, "5 Where is the spinach really?\tgreen_crate\t1"];

describe("a ToMi story the world refuses", () => {
  for (const [what, bad] of [
    ["an exit from a room the agent is not in", [...good.slice(0, 3), "4 Ella exited the kitchen."]],
    ["an agent entering the room it is in", [...good.slice(0, 3), "4 Ella entered the garage."]],
  ] as const) {
    it(`${what}: exit 2 naming the line, no report, a failed run keeping the questions before it`, async () => {
      const dir = mkdtempSync(join(root, "case-"));
      const lines = [...Array.from({ length: 10 }, () => block(good)).flat(), ...block(bad)];
      const data = join(dir, "d.txt");
      writeFileSync(data, lines.join("\n") + "\n");
      const store = join(dir, "store");
      const code = await main(["bench", "tomi", "--data", data, "--agent", "simulation", "--store", store, "--json", join(dir, "r.json"), "--quiet"]);
      expect(code).toBe(2);
      // (After the warning that the file has no .trace beside it.)
      expect(io.err).toMatch(new RegExp(`^warning: ${data}: no d\\.trace beside it: .+\\nrun \\S+ in the store ${store}\\nsocialworld bench: bad input: ${data}:54: .+\\n$`));
      expect(existsSync(join(dir, "r.json"))).toBe(false);
      const s = await RunStore.open(store);
      const [run] = s.list();
      expect(run?.status).toBe("failed");
      const logged = readFileSync(s.episodesPath(run!), "utf8").trimEnd().split("\n");
      expect(logged).toHaveLength(10);
    });
  }
});
