/**
 * The scripts under measurements/ take their arguments the way the command does: `--help` prints
 * the usage, and a bad option or value is one line naming it, with exit status 2, no stack trace.
 * The built scripts are run as users run them (node dist/measurements/NAME.js).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { intArg, numArg } from "../../cli/args.js";
import { parseScriptArgs, type ScriptSpec } from "../../measurements/script-args.js";
import { MAX_QUIZ_QUESTIONS, QuizOptionsSchema } from "../../server/rooms/options.js";
import { usageMessage } from "../cli/usage-message.js";

const spec = {
  name: "example",
  usage: "node example.js [--runs N] [--quick]",
  schema: z.object({ runs: intArg(1, 100).default(5), quick: z.boolean().default(false), data: z.string().optional() }),
} satisfies ScriptSpec<z.ZodObject>;

describe("a script's schema", () => {
  it("is refused when the command line cannot fill it, naming the option, even on --help", () => {
    expect(() => parseScriptArgs({ name: "x", usage: "x", schema: z.object({ list: z.array(z.number()) }) }, ["--help"])).toThrow(/--list: a array/);
  });
});

describe("parseScriptArgs", () => {
  it("fills defaults and converts values with the schema", () => {
    expect(parseScriptArgs(spec, [])).toEqual({ help: false, values: { runs: 5, quick: false } });
    expect(parseScriptArgs(spec, ["--runs", "12", "--quick", "--data", "x.txt"])).toEqual({ help: false, values: { runs: 12, quick: true, data: "x.txt" } });
  });

  it("asks for the usage on --help or -h, even beside bad arguments", () => {
    expect(parseScriptArgs(spec, ["--help"])).toEqual({ help: true });
    expect(parseScriptArgs(spec, ["--bogus", "-h"])).toEqual({ help: true });
  });

  it("names the option that is wrong", () => {
    const message = (argv: string[]) => usageMessage(() => parseScriptArgs(spec, argv), argv.join(" "));
    expect(message(["--runs", "x"])).toBe("--runs: expected a number");
    // A range error says so (a schema-wide zod message once turned it into "expected a number").
    expect(message(["--runs", "0"])).toBe("--runs: Too small: expected number to be >=1");
    expect(message(["--runs", "101"])).toBe("--runs: Too big: expected number to be <=100");
    expect(message(["--runs", "2.5"])).toBe("--runs: expected an integer");
    expect(message(["--bogus"])).toBe("unknown option --bogus");
    expect(message(["--rusn", "3"])).toBe("unknown option --rusn (did you mean --runs?)");
    expect(message(["--runs"])).toBe("--runs needs a value");
    expect(message(["stray"])).toMatch(/^Unexpected argument 'stray'/);
  });

  it("takes positionals as _ when the schema has that key, and refuses them otherwise", () => {
    const withFiles = { ...spec, schema: spec.schema.extend({ _: z.array(z.string()) }) };
    expect(parseScriptArgs(withFiles, ["a", "--quick", "b"])).toEqual({ help: false, values: { _: ["a", "b"], runs: 5, quick: true } });
    expect(usageMessage(() => parseScriptArgs(spec, ["a"]), "a")).toMatch(/^Unexpected argument 'a'/);
  });

  it("reads a negative number as the value of an option, for its schema to judge", () => {
    expect(usageMessage(() => parseScriptArgs(spec, ["--runs", "-3"]), "--runs -3")).toBe("--runs: Too small: expected number to be >=1");
  });
});

const root = resolve(import.meta.dirname, "../..");
const script = (name: string) => join(root, "dist", "measurements", `${name}.js`);
if (!existsSync(script("speed-tomi"))) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");
const run = (name: string, args: string[]) => spawnSync(process.execPath, [script(name), ...args], { encoding: "utf8", timeout: 30_000 });

describe("the built scripts", () => {
  it("learn-demo: --agents names agents it evaluates or refuses, before any stage runs", () => {
    const out = mkdtempSync(join(tmpdir(), "learn-demo-agents-"));
    // grpo beside another agent was left out unsaid where no GRPO stage runs.
    const grpo = run("learn-demo", ["--agents", "sft,grpo", "--grpo-steps", "0", "--out", out]);
    expect(grpo.status, grpo.stderr).toBe(2);
    expect(grpo.stderr.split("\n")[0]).toBe("learn-demo: --agents grpo: --grpo-steps 0 trains no GRPO policy to evaluate");
    const unknown = run("learn-demo", ["--agents", "sft,bogus", "--out", out]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split("\n")[0]).toBe('learn-demo: --agents: unknown agent "bogus" (one of random, base, sft, grpo, symbolic)');
    expect(readdirSync(out)).toEqual([]);
  });

  for (const name of ["speed-tomi", "learn-demo", "alloc-profile", "load-server", "engine-speed", "lora-sft", "peft-check", "social-demo-compare", "usersim-generation"]) {
    it(`${name}: --help prints the usage; an unknown option is exit status 2 with the usage`, () => {
      const help = run(name, ["--help"]);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout.startsWith(`node dist/measurements/${name}.js`)).toBe(true);
      expect(help.stdout).toContain("--help");
      const bad = run(name, ["--bogus"]);
      expect(bad.status).toBe(2);
      expect(bad.stderr.split("\n")[0]).toBe(`${name}: unknown option --bogus`);
      expect(bad.stderr).toContain(`node dist/measurements/${name}.js`);
      expect(bad.stderr).not.toMatch(/^\s+at /m);
    });
  }

  it("a bad value stops the script before any work, naming the option", () => {
    const r = run("speed-tomi", ["--runs", "x"]);
    expect(r.status).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe("speed-tomi: --runs: expected a number");
    expect(r.stdout).toBe("");
    // An agent the command line does not know, too (it failed the first timed run with a stack trace).
    const agent = run("speed-tomi", ["--agent", "bogus", "--data", script("speed-tomi")]);
    expect(agent.status).toBe(2);
    expect(agent.stderr).toMatch(/^speed-tomi: --agent: unknown agent "bogus"/);
    expect(agent.stdout).toBe("");
  });

  it("a script with a `_` key takes positionals and checks them; a flag takes no value", () => {
    const action = run("peft-check", ["bogus"]);
    expect(action.status).toBe(2);
    expect(action.stderr.split("\n")[0]).toBe("peft-check: argument: expected prepare or check");
    const flag = run("engine-speed", ["--quick=1"]);
    expect(flag.status).toBe(2);
    expect(flag.stderr.split("\n")[0]).toBe("engine-speed: Option '--quick' does not take an argument");
  });

  it("selfplay-quiz asks a seat as many quiz questions as a room allows, no more", () => {
    const over = run("selfplay-quiz", ["--quiz-questions", String(MAX_QUIZ_QUESTIONS + 1)]);
    expect(over.status).toBe(2);
    expect(over.stderr.split("\n")[0]).toBe(`selfplay-quiz: --quiz-questions: Too big: expected number to be <=${MAX_QUIZ_QUESTIONS}`);
    expect(over.stdout).toBe("");
    expect(QuizOptionsSchema.safeParse({ questions: MAX_QUIZ_QUESTIONS }).success).toBe(true);
    expect(QuizOptionsSchema.safeParse({ questions: MAX_QUIZ_QUESTIONS + 1 }).success).toBe(false);
    expect(run("selfplay-quiz", ["--help"]).stdout).toContain(`--quiz-questions N      quiz questions per seat per episode, 1-${MAX_QUIZ_QUESTIONS}`);
  });

  it("selfplay-quiz refuses an episode of no timesteps, a negative or too long warmup and a minimum rate above the rate before any work", () => {
    for (const [flag, ...args] of [["--max-steps", "0"], ["--round-warmup", "-1"], ["--round-min-lr", "1e-3", "--round-lr", "1e-4"], ["--round-warmup", "7", "--round-steps", "6"]] as const) {
      const r = run("selfplay-quiz", [flag, ...args]);
      expect(r.status).toBe(2);
      expect(r.stderr.split("\n")[0]).toMatch(new RegExp(`^selfplay-quiz: ${flag}: `));
      expect(r.stdout).toBe("");
    }
  });

  it("usersim-generation --reuse refuses an output made with other arguments, naming them, before any work", () => {
    const out = mkdtempSync(join(tmpdir(), "usersim-generation-"));
    try {
      writeFileSync(join(out, "usersim.jsonl"), "");
      const generate = (n: number) => ["generate", "usersim", "--n", String(n), "--seed", "0", "--out", join(out, "usersim.jsonl")];
      writeFileSync(join(out, "stages.json"), JSON.stringify({ generate: generate(50) }));
      const r = run("usersim-generation", ["--out", out, "--reuse", "--n", "70"]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`usersim-generation: --reuse: ${join(out, "usersim.jsonl")} was made by stage "generate" with other arguments (--n 50 -> 70)`);
      expect(r.stdout).toBe("");
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("the load script's worker says what it is when run by hand", () => {
    const r = run("load-spectators", []);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("a worker thread of the load script");
  });
});
