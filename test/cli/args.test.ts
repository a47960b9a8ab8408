/** Number options of the command: text that is not a number and a number out of range say different things. */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { intArg, numArg, parseCommand } from "../../cli/args.js";
import { main } from "../../cli/main.js";
import { captureOutput } from "../capture.js";
import { usageMessage } from "./usage-message.js";

const io = captureOutput();

describe("number options", () => {
  const schema = z.object({ n: intArg(1, 10).optional(), t: numArg().positive().optional() });
  const options = { n: { type: "string" }, t: { type: "string" } } as const;
  const error = (argv: string[]) => usageMessage(() => parseCommand(argv, options, schema), argv.join(" "));

  it("say which check failed", () => {
    expect(error(["--n", "ten"])).toBe("--n: expected a number");
    expect(error(["--n", "1.5"])).toBe("--n: expected an integer");
    expect(error(["--n", "0"])).toBe("--n: Too small: expected number to be >=1");
    expect(error(["--n", "11"])).toBe("--n: Too big: expected number to be <=10");
    expect(error(["--t=x"])).toBe("--t: expected a number");
    expect(error(["--t=-1"])).toBe("--t: Too small: expected number to be >0");
    // A negative number after the option is its value (parseArgs alone calls it ambiguous).
    expect(error(["--n", "-3"])).toBe("--n: Too small: expected number to be >=1");
    expect(error(["--t", "-.5"])).toBe("--t: Too small: expected number to be >0");
    expect(parseCommand(["--n", "2", "--", "--t", "-1"], options, schema.extend({ _: z.array(z.string()) }))).toEqual({ n: 2, _: ["--t", "-1"] });
    expect(error(["--n", "-x"])).toMatch(/^Option '--n' argument is ambiguous/);
    expect(parseCommand(["--n", "3", "--t", "0.5"], options, schema)).toEqual({ n: 3, t: 0.5 });
  });

  it("reach the user through the command with exit status 2", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "sw-args-")), "g.txt");
    expect(await main(["generate", "tomi", "--n", "0", "--out", out, "--quiet"])).toBe(2);
    expect(io.err).toContain("socialworld generate: --n: Too small: expected number to be >=1");
    // Every number option says so, training's rates included (zod's own words were "received NaN").
    expect(await main(["train", "sft", "--model", out, "--data", out, "--out", out, "--lr", "abc"])).toBe(2);
    expect(io.err).toContain("socialworld train sft: --lr: expected a number");
    expect(await main(["model", "generate", out, "--prompt", "x", "--temperature", "hot"])).toBe(2);
    expect(io.err).toContain("--temperature: expected a number");
  });

  it("make the output's folder, and refuse a path that cannot be a file, before generating", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-args-"));
    expect(await main(["generate", "hitom", "--n", "5", "--out", join(dir, "a", "b", "h.json"), "--quiet"])).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "a", "b", "h.json"), "utf8")).data).toHaveLength(5);
    expect(await main(["generate", "hitom", "--n", "5", "--out", join(dir, "a"), "--quiet"])).toBe(2);
    expect(io.err).toContain(`socialworld generate: --out: ${join(dir, "a")} is a folder; give a file name`);
  });
});
