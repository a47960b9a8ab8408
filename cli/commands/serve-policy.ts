/**
 * `socialworld serve-policy DIR... [--adapters ROOT] [--port N] [--host H] [--api-key K]
 *  [--max-batch N] [--max-waiting N] [--threads N] [--no-enforce-format]`: trained policies, and
 *  LoRA adapters of them, behind an OpenAI-compatible API.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { intArg, parseCommand, UsageError } from "../args.js";
import { DEVICE_HELP, deviceArgs, useDevice } from "../device.js";

export const SERVE_POLICY_HELP = `socialworld serve-policy DIR [DIR...] [options]

Serves policy checkpoints (Qwen2 folders: ours, or real Qwen2/Qwen2.5) on the native engine
behind an OpenAI-compatible API: GET /v1/models, POST /v1/chat/completions (stream: true for
server-sent events). Any OpenAI client can use them with base URL http://HOST:PORT/v1.

A model's id is its folder's name; ID=DIR names it. Concurrent requests with the same sampling
settings are decoded together as one batch. A request's response_format (json_schema, strict or
not, or json_object) is enforced while sampling: every reply matches it, unless a stop string cuts
it short.

LoRA adapters (folders in PEFT's layout, as \`train sft|grpo --lora\` and PEFT write them) are
served over their base model as BASE:NAME, from the base's weights: give an adapter folder as a
DIR (its base is the served folder its adapter_config.json names, or BASE:NAME=DIR names it), or
put adapter folders in --adapters ROOT, read again on every request: adapters added there are
served at once, and removed ones are unloaded, without a restart.

Options:
  --adapters ROOT   serve the adapter folders in ROOT too (each as BASE:FOLDER), as they come and go
  --port N          port (default 8000, or $SOCIALWORLD_POLICY_PORT; 0 picks a free one)
  --host H          interface (default 127.0.0.1; 0.0.0.0 for every one)
  --api-key K       requests must carry "Authorization: Bearer K" (default: $SOCIALWORLD_OPENAI_API_KEY;
                    unset: no key needed on a loopback --host, and required on any other)
  --open            serve without a key on a non-loopback --host (printed as a warning at start)
  --max-per-client N  requests one client address may have in progress (default 32; past it: 429)
  --max-batch N     sequences decoded together at most (default 32)
  --max-waiting N   requests that may wait; past it the server answers 429 with Retry-After (default 256)
  --threads N       native engine threads (default: one per core)
  --no-enforce-format
                    only check replies against response_format after sampling (format_check),
                    to measure how well a policy keeps the format on its own
${DEVICE_HELP}
`;

const Args = z.object({
  _: z.array(z.string().min(1)).min(1, "give at least one checkpoint folder (DIR or ID=DIR)"),
  adapters: z.string().min(1).optional(),
  port: intArg(0, 65535).optional(),
  host: z.string().min(1).default("127.0.0.1"),
  "api-key": z.string().min(1).optional(),
  open: z.boolean().default(false),
  "max-per-client": intArg(1, 100_000).optional(),
  "max-batch": intArg(1, 4096).optional(),
  "max-waiting": intArg(0, 1_000_000).optional(),
  threads: intArg(1, 1024).optional(),
  ...deviceArgs,
  "no-enforce-format": z.boolean().default(false),
});

export async function servePolicyCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  await useDevice(args);
  const { attachAdapters, parseModelArg, repeatedId } = await import("../../server/openai/models.js");
  const { ConfigError, portFromEnv } = await import("../../server/config.js");
  const { startPolicyServer } = await import("../../server/openai/app.js");
  const { openV1Warning } = await import("../../server/security/v1-exposure.js");
  if (args.threads !== undefined) {
    const { loadNative } = await import("../../models/native.js");
    loadNative().setThreads(args.threads);
  }
  let envPort: number | undefined;
  try {
    envPort = args.port === undefined ? portFromEnv("SOCIALWORLD_POLICY_PORT") : undefined;
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const apiKey = args["api-key"] ?? process.env.SOCIALWORLD_OPENAI_API_KEY;
  const models = args._.map(parseModelArg);
  const { models: attached, unattached } = attachAdapters(models);
  if (unattached.length > 0)
    throw new UsageError(`${unattached[0]!.dir} is a LoRA adapter whose base model is not served here: give its base folder too, or name it BASE:${unattached[0]!.id}=DIR`);
  const twice = repeatedId(attached);
  if (twice !== undefined) throw new UsageError(`two models are served as "${twice}": name them apart (ID=DIR)`);
  if (args.adapters !== undefined && !existsSync(args.adapters)) throw new UsageError(`--adapters: ${args.adapters} does not exist`);
  let server;
  try {
    server = await startPolicyServer({
      models,
      ...(args.adapters !== undefined ? { adapterRoot: resolve(args.adapters) } : {}),
      port: args.port ?? envPort ?? 8000,
      host: args.host,
      open: args.open,
      ...(args["max-per-client"] !== undefined ? { maxPerClient: args["max-per-client"] } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(args["max-batch"] !== undefined ? { maxBatch: args["max-batch"] } : {}),
      ...(args["max-waiting"] !== undefined ? { maxWaiting: args["max-waiting"] } : {}),
      ...(args["no-enforce-format"] ? { enforceFormat: false } : {}),
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const out = (s: string) => process.stdout.write(s + "\n");
  out(`socialworld policy server on ${server.baseUrl}`);
  for (const m of server.service.health()) {
    out(`  model ${m.id}: ${m.dir}`);
    for (const a of m.adapters ?? []) out(`  model ${m.id}:${a.name}: LoRA adapter ${a.dir}`);
  }
  if (args.adapters !== undefined) out(`  adapters in ${resolve(args.adapters)} are served as they come and go`);
  out(apiKey ? "  requests need the API key (Authorization: Bearer ...)" : "  no API key needed");
  if (server.exposure === "open") process.stderr.write(`${openV1Warning(args.host)}\n`);
  if (args["no-enforce-format"]) out("  response_format is checked, not enforced");
  out("  Ctrl-C to stop");
  await new Promise<void>((done) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  out("stopped.");
  return 0;
}
