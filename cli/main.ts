/** The `socialworld` command. */
import { DataError } from "../worlds/core/errors.js";
import { FileLockTimeout } from "../store/file-lock.js";
import { closest, UsageError } from "./args.js";

/** What a command module gives: its help text (a subcommand's own, given the arguments) and its entry point. */
interface Loaded {
  readonly help: string | ((argv: readonly string[]) => string | Promise<string>);
  readonly run: (argv: readonly string[]) => Promise<number>;
}

interface Command {
  readonly summary: string;
  /** Subcommands with a help text of their own (`train sft --help`). */
  readonly subcommands?: readonly string[];
  /** Commands load only when used: `bench` should not pay for the trainer's or the server's modules. */
  readonly load: () => Promise<Loaded>;
}

const COMMANDS: Record<string, Command> = {
  bench: {
    summary: "run a benchmark file with an agent and report accuracy",
    load: async () => {
      const m = await import("./commands/bench.js");
      return { help: async (argv) => (argv[0] === "rec" ? (await import("./commands/bench-rec.js")).BENCH_REC_HELP : m.benchHelp()), run: m.benchCommand };
    },
  },
  data: {
    summary: "download the official ToMi, Hi-ToM and FANToM files (checked against their checksums)",
    load: async () => {
      const m = await import("./commands/data.js");
      return { help: m.DATA_HELP, run: m.dataCommand };
    },
  },
  generate: {
    summary: "write new benchmark questions labelled by the world model",
    load: async () => {
      const m = await import("./commands/generate.js");
      return { help: m.generateHelp, run: m.generateCommand };
    },
  },
  simulate: {
    summary: "run a world's economy of households month by month (economy) and report its regularities",
    load: async () => {
      const m = await import("./commands/simulate.js");
      return { help: m.SIMULATE_HELP, run: m.simulateCommand };
    },
  },
  questions: {
    summary: "write ToM questions about a logged run's episodes, labelled by the world model",
    load: async () => {
      const m = await import("./commands/questions.js");
      return { help: m.questionsHelp, run: m.questionsCommand };
    },
  },
  runs: {
    summary: "list runs in the store and read their episodes",
    load: async () => {
      const m = await import("./commands/runs.js");
      return { help: m.RUNS_HELP, run: m.runsCommand };
    },
  },
  audit: {
    summary: "audit a logged run for information leaks (actions using facts their agent never perceived)",
    load: async () => {
      const m = await import("./commands/audit.js");
      return { help: m.auditHelp, run: m.auditCommand };
    },
  },
  demo: {
    summary: "play generated stories step by step in the terminal",
    load: async () => {
      const m = await import("./commands/demo.js");
      return { help: m.DEMO_HELP, run: m.demoCommand };
    },
  },
  model: {
    summary: "make, sample from, inspect and export policy models (Qwen2 checkpoints)",
    load: async () => {
      const m = await import("./commands/model.js");
      return { help: m.MODEL_HELP, run: m.modelCommand };
    },
  },
  train: {
    summary: "train a policy: supervised fine-tuning (sft) or GRPO on a world or a benchmark (grpo)",
    subcommands: ["sft", "grpo"],
    load: async () => {
      const m = await import("./commands/train.js");
      return { help: m.trainHelp, run: m.trainCommand };
    },
  },
  serve: {
    summary: "the live server: rooms, REST API, web client, progress stream",
    load: async () => {
      const m = await import("./commands/serve.js");
      return { help: m.SERVE_HELP, run: m.serveCommand };
    },
  },
  "serve-policy": {
    summary: "serve trained policies behind an OpenAI-compatible API (/v1/chat/completions)",
    load: async () => {
      const m = await import("./commands/serve-policy.js");
      return { help: m.SERVE_POLICY_HELP, run: m.servePolicyCommand };
    },
  },
  "eval-context": {
    summary: "score generated socialized contexts against the world model's",
    load: async () => {
      const m = await import("./commands/eval-context.js");
      return { help: m.EVAL_CONTEXT_HELP, run: m.evalContextCommand };
    },
  },
  export: {
    summary: "write a run as training data (VERL/SFT Parquet, chat JSONL) or socialized contexts",
    load: async () => {
      const m = await import("./commands/export.js");
      return { help: m.EXPORT_HELP, run: m.exportCommand };
    },
  },
  import: {
    summary: "load a socialized context (ours or social-world-model's) as a run to replay",
    load: async () => {
      const m = await import("./commands/import.js");
      return { help: m.IMPORT_HELP, run: m.importCommand };
    },
  },
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
    process.stdout.write(topic && Object.hasOwn(COMMANDS, topic) ? await helpOf(await COMMANDS[topic]!.load(), rest.slice(1)) : usage());
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    const near = closest(name, Object.keys(COMMANDS));
    process.stderr.write(`socialworld: unknown command "${name}"${near ? ` (did you mean ${near}?)` : ""}\nrun 'socialworld --help' for the list of commands\n`);
    return 2;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(await helpOf(command, rest));
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      // One line and where to read more: the whole help text buried the line that mattered.
      const sub = rest[0] !== undefined && entry.subcommands?.includes(rest[0]) ? ` ${rest[0]}` : "";
      process.stderr.write(`socialworld ${name}${sub}: ${err.message}\nrun 'socialworld ${name}${sub} --help' for its options\n`);
      return 2;
    }
    if (err instanceof DataError) {
      process.stderr.write(`socialworld ${name}: bad input: ${err.message}\n`);
      return 2;
    }
    // The machine said no (a file that cannot be written, a disk that is full): its message names
    // the path and the call, which is what the user needs; a stack trace would only bury it.
    if (err instanceof FileLockTimeout || isSystemError(err)) {
      process.stderr.write(`socialworld ${name}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/** A command's help text (some list what the world registry holds, and load it to say so; a subcommand's is its own). */
async function helpOf(command: Loaded, argv: readonly string[] = []): Promise<string> {
  return typeof command.help === "string" ? command.help : command.help(argv.filter((a) => a !== "--help" && a !== "-h"));
}

function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string" && typeof (err as NodeJS.ErrnoException).syscall === "string";
}
