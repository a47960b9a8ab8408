/** The `socialworld` command. */
import { DataError } from "../worlds/core/errors.js";
import { UsageError } from "./args.js";
import { BENCH_HELP, benchCommand } from "./commands/bench.js";
import { DEMO_HELP, demoCommand } from "./commands/demo.js";
import { generateCommand, generateHelp } from "./commands/generate.js";
import { MODEL_HELP, modelCommand } from "./commands/model.js";
import { RUNS_HELP, runsCommand } from "./commands/runs.js";
import { TRAIN_HELP, trainCommand } from "./commands/train.js";
import { SERVE_HELP, serveCommand } from "./commands/serve.js";
import { EVAL_CONTEXT_HELP, evalContextCommand } from "./commands/eval-context.js";
import { EXPORT_HELP, exportCommand } from "./commands/export.js";
import { IMPORT_HELP, importCommand } from "./commands/import.js";

interface Command {
  readonly summary: string;
  readonly help: () => string;
  readonly run: (argv: readonly string[]) => Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  bench: { summary: "run a benchmark file with an agent and report accuracy", help: () => BENCH_HELP, run: benchCommand },
  generate: { summary: "write new benchmark questions labelled by the world model", help: generateHelp, run: generateCommand },
  runs: { summary: "list runs in the store and read their episodes", help: () => RUNS_HELP, run: runsCommand },
  demo: { summary: "play generated stories step by step in the terminal", help: () => DEMO_HELP, run: demoCommand },
  model: { summary: "make, sample from, inspect and export policy models (Qwen2 checkpoints)", help: () => MODEL_HELP, run: modelCommand },
  train: { summary: "train a policy: supervised fine-tuning on prompt/response pairs", help: () => TRAIN_HELP, run: trainCommand },
  serve: { summary: "the live server: rooms, REST API, web client, progress stream", help: () => SERVE_HELP, run: serveCommand },
  "eval-context": { summary: "score generated socialized contexts against the world model's", help: () => EVAL_CONTEXT_HELP, run: evalContextCommand },
  export: { summary: "write a run as training data (VERL/SFT Parquet, chat JSONL) or socialized contexts", help: () => EXPORT_HELP, run: exportCommand },
  import: { summary: "load a socialized context (ours or social-world-model's) as a run to replay", help: () => IMPORT_HELP, run: importCommand },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return `usage: socialworld <command> [options]

${Object.entries(COMMANDS)
  .map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`)
  .join("\n")}

socialworld <command> --help shows a command's options.
`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    process.stdout.write(topic && COMMANDS[topic] ? COMMANDS[topic].help() : usage());
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`socialworld: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(command.help());
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`socialworld ${name}: ${err.message}\n\n${command.help()}`);
      return 2;
    }
    if (err instanceof DataError) {
      process.stderr.write(`socialworld ${name}: bad input: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
