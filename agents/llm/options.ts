/**
 * The `llm:` agent spec: `llm:MODEL@BASE_URL?option=value&...`, for any OpenAI-compatible chat
 * endpoint (vLLM, Ollama, llama.cpp's server, OpenAI, Together, `socialworld serve-policy`).
 *
 *   llm:gpt-4o-mini                                   (base URL from the environment, else OpenAI)
 *   llm:qwen2.5:7b@http://localhost:11434/v1?temperature=0.7&max_tokens=256
 *   llm:policy@http://127.0.0.1:8000/v1?response_format=text
 *
 * The key never appears in a spec (specs are logged): it comes from the environment variable
 * `key_env` names, else $SOCIALWORLD_LLM_API_KEY, else $OPENAI_API_KEY; local servers need none.
 */
import { z } from "zod";
import { AgentSpecError } from "../agent-spec-error.js";

const flag = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

export const LlmOptionsSchema = z.strictObject({
  temperature: z.coerce.number().min(0).max(2).default(0),
  top_p: z.coerce.number().gt(0).max(1).optional(),
  /** The answer's token budget (unset: the endpoint's default). */
  max_tokens: z.coerce.number().int().positive().optional(),
  /** Simulation mode: the socialized context's token budget (unset: the endpoint's default). */
  context_max_tokens: z.coerce.number().int().positive().optional(),
  /** Sent with every request, varied per turn (endpoints treat it as best effort). */
  seed: z.coerce.number().int().nonnegative().optional(),
  /** Milliseconds one HTTP attempt may take. */
  timeout: z.coerce.number().int().positive().default(60_000),
  /** Further attempts after a failure that may pass (network, timeout, 408, 409, 429, 5xx). */
  retries: z.coerce.number().int().min(0).max(20).default(3),
  /** Milliseconds before the first retry; doubles each time (with jitter) up to backoff_max. */
  backoff: z.coerce.number().int().min(0).default(500),
  backoff_max: z.coerce.number().int().min(0).default(20_000),
  /** Requests to this endpoint in flight at once, across the agents with the same settings. */
  concurrency: z.coerce.number().int().min(1).max(4096).default(8),
  /** Requests to this endpoint started per minute at most, across the agents and judges with the same settings (unset: no pace). */
  rpm: z.coerce.number().positive().max(1_000_000).optional(),
  /** How the reply's structure is asked for: a JSON schema, any JSON object, or plain text. */
  response_format: z.enum(["json_schema", "json_object", "text"]).default("json_schema"),
  /** One repair attempt when a reply cannot be read (the error goes back to the model). */
  repair: flag.default(true),
  /** A system message before the format instructions. */
  system: z.string().max(100_000).optional(),
  /** The environment variable holding the API key. */
  key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
    .optional(),
});
export type LlmOptions = z.infer<typeof LlmOptionsSchema>;

export interface LlmTarget {
  readonly model: string;
  /** The API root, without a trailing slash: POST {baseUrl}/chat/completions. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly options: LlmOptions;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Reads `MODEL[@BASE_URL][?options]` (what follows `llm:`); errors name the spec and the option. */
export function parseLlmTarget(spec: string, target: string, env: NodeJS.ProcessEnv = process.env): LlmTarget {
  const at = target.indexOf("@");
  const head = at < 0 ? target : target.slice(0, at);
  let rest = at < 0 ? "" : target.slice(at + 1);
  let query = "";
  // The query string follows the URL, or the model when there is no URL.
  const q = at < 0 ? head.indexOf("?") : rest.indexOf("?");
  const model = at < 0 && q >= 0 ? head.slice(0, q) : head;
  if (at < 0 && q >= 0) query = head.slice(q + 1);
  if (at >= 0 && q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!model) throw new AgentSpecError(`${spec}: the agent needs a model name (llm:MODEL@BASE_URL)`);
  const base = (at >= 0 ? rest : (env.SOCIALWORLD_LLM_BASE_URL ?? env.OPENAI_BASE_URL ?? DEFAULT_BASE_URL)).replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new AgentSpecError(`${spec}: "${base}" is not a URL (expected http://HOST:PORT/v1)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new AgentSpecError(`${spec}: the base URL must be http or https (got "${base}")`);
  if (url.username || url.password) throw new AgentSpecError(`${spec}: put no credentials in the URL; the key comes from the environment (key_env)`);
  const params = new URLSearchParams(query);
  const seen = new Set<string>();
  for (const k of params.keys()) {
    if (seen.has(k)) throw new AgentSpecError(`${spec}: ${k}: given twice`);
    seen.add(k);
  }
  const r = LlmOptionsSchema.safeParse(Object.fromEntries(params));
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const name = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : issue.path.join(".") || "option";
    throw new AgentSpecError(`${spec}: ${name}: ${issue.code === "unrecognized_keys" ? `unknown option (known: ${Object.keys(LlmOptionsSchema.shape).join(", ")})` : issue.message}`);
  }
  const options = r.data;
  let apiKey: string | undefined;
  if (options.key_env) {
    apiKey = env[options.key_env];
    if (!apiKey) throw new AgentSpecError(`${spec}: key_env: $${options.key_env} is not set`);
  } else apiKey = env.SOCIALWORLD_LLM_API_KEY || env.OPENAI_API_KEY || undefined;
  return { model, baseUrl: base, ...(apiKey ? { apiKey } : {}), options };
}
