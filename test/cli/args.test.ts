/**
 * The command's options: each declared once, in its zod schema (parseArgs' table derived from it);
 * number options: text that is not a number and a number out of range say different things.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { intArg, numArg, parseArgsOptions, parseCommand } from "../../cli/args.js";
import { householdList } from "../../measurements/economy-options.js";
import { main } from "../../cli/main.js";
import { captureOutput } from "../capture.js";
import { usageMessage } from "./usage-message.js";

const io = captureOutput();

describe("a command's options, declared once in its zod schema (parseArgsOptions)", () => {
  it("makes a boolean a flag and every other option a value, from the schema's keys", () => {
    expect(parseArgsOptions(z.object({ runs: intArg(1, 100).default(5), quick: z.boolean().default(false), data: z.string().optional() }))).toEqual({ runs: { type: "string" }, quick: { type: "boolean" }, data: { type: "string" } });
  });

  it("reads through defaults, optionals, refinements and transforms to the type parseArgs gives; an array of text may be given again", () => {
    const schema = z.object({
      households: householdList("100,1000"),
      sizes: z.string().regex(/^\d+(,\d+)*$/).transform((s) => s.split(",").map(Number)).refine((xs) => xs.length > 0).default([1]),
      mode: z.enum(["on", "off"]).default("on"),
      lr: numArg().positive().optional(),
      share: z.coerce.number().min(0).max(1).default(0.5),
      "no-kill": z.boolean().default(false).optional(),
      root: z.array(z.string().min(1)).default([]),
      _: z.array(z.string()),
    });
    const types = Object.entries(parseArgsOptions(schema)).map(([name, o]) => `${name}:${o.type}${o.multiple ? "*" : ""}`);
    expect(types).toEqual(["households:string", "sizes:string", "mode:string", "lr:string", "share:string", "no-kill:boolean", "root:string*"]);
  });

  it("refuses a schema the command line cannot fill, naming the option", () => {
    // parseArgs gives text: a number without coerce would fail every value, a coerced boolean take "false" for true.
    expect(() => parseArgsOptions(z.object({ runs: z.number().default(1) }))).toThrow(/--runs: a number schema/);
    expect(() => parseArgsOptions(z.object({ quick: z.coerce.boolean() }))).toThrow(/--quick: a boolean \(coerced\)/);
    expect(() => parseArgsOptions(z.object({ list: z.array(z.number()) }))).toThrow(/--list: a array/);
  });

  it("takes positionals only where the schema has `_`, and an array's option each time it is given", () => {
    const schema = z.object({ root: z.array(z.string().min(1)).default([]) });
    expect(usageMessage(() => parseCommand(["a"], schema), "a")).toMatch(/^Unexpected argument 'a'/);
    expect(parseCommand(["--root", "a", "--root", "b"], schema)).toEqual({ root: ["a", "b"] });
    expect(parseCommand(["a", "--root", "b"], schema.extend({ _: z.tuple([z.string()]) }))).toEqual({ _: ["a"], root: ["b"] });
  });

  it("are read from every command's schema: an unknown option is a usage error, not a crash", async () => {
    const commands = [
      ["audit"], ["bench"], ["bench", "rec"], ["data"], ["demo"], ["eval-context"], ["export"], ["generate"], ["import"], ["questions"], ["runs"],
      ["model", "init"], ["model", "generate"], ["model", "logits"], ["model", "merge-lora"], ["model", "export-onnx"],
      ["serve"], ["serve-policy"], ["simulate"], ["train", "sft"], ["train", "grpo"],
    ];
    for (const c of commands) {
      io.err = "";
      expect(await main([...c, "--no-such-option"]), c.join(" ")).toBe(2);
      expect(io.err).toContain(`: unknown option --no-such-option\n`);
    }
  });
});

describe("number options", () => {
  const schema = z.object({ n: intArg(1, 10).optional(), t: numArg().positive().optional() });
  const error = (argv: string[]) => usageMessage(() => parseCommand(argv, schema), argv.join(" "));

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
    expect(parseCommand(["--n", "2", "--", "--t", "-1"], schema.extend({ _: z.array(z.string()) }))).toEqual({ n: 2, _: ["--t", "-1"] });
    expect(error(["--n", "-x"])).toMatch(/^Option '--n' argument is ambiguous/);
    expect(parseCommand(["--n", "3", "--t", "0.5"], schema)).toEqual({ n: 3, t: 0.5 });
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
