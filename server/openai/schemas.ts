/**
 * The OpenAI chat-completions request, as zod reads it. What a policy on the native engine can do
 * is accepted (messages, temperature, top_p, max_tokens, stop, seed, n, stream, response_format,
 * logprobs, and vLLM's top_k); what it cannot (tools, penalties, logit bias, images, top
 * logprobs) is refused by name rather than silently ignored. Other fields clients commonly send
 * (user, metadata, store, parallel_tool_calls...) are ignored, as vLLM does.
 */
import { z } from "zod";
import type { ChatMessage } from "../../models/chat-template.js";
import { OpenAiError } from "./errors.js";

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const OtherPart = z.looseObject({ type: z.string() });
const Content = z.union([z.string(), z.array(z.union([TextPart, OtherPart]))]).nullable();

const Message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"], { error: "expected system, developer, user or assistant" }),
  content: Content.optional(),
  name: z.string().optional(),
  tool_calls: z.array(z.unknown()).optional(),
});

export const JsonSchemaFormat = z.object({
  type: z.literal("json_schema"),
  json_schema: z.object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes"),
    description: z.string().optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

export const ResponseFormat = z.discriminatedUnion("type", [z.object({ type: z.literal("text") }), z.object({ type: z.literal("json_object") }), JsonSchemaFormat], {
  error: "expected {type: text | json_object | json_schema}",
});
export type ResponseFormat = z.infer<typeof ResponseFormat>;

const zeroOrAbsent = (what: string) =>
  z
    .number()
    .nullable()
    .optional()
    .refine((v) => v == null || v === 0, `${what} is not supported by this server (only 0)`);

export const ChatRequestSchema = z.looseObject({
  model: z.string({ error: "is required" }).min(1),
  messages: z.array(Message, { error: "is required (a list of messages)" }).min(1, "needs at least one message"),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  /** vLLM's extension; 0 or -1: no limit. */
  top_k: z.number().int().min(-1).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  stop: z
    .union([z.string().min(1), z.array(z.string().min(1)).max(16)])
    .nullable()
    .optional(),
  seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
  n: z.number().int().min(1).max(16).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  response_format: ResponseFormat.nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z
    .number()
    .int()
    .nullable()
    .optional()
    .refine((v) => v == null || v === 0, "top_logprobs is not supported by this server: logprobs gives the sampled tokens' log-probabilities only"),
  frequency_penalty: zeroOrAbsent("frequency_penalty"),
  presence_penalty: zeroOrAbsent("presence_penalty"),
  logit_bias: z
    .record(z.string(), z.number())
    .nullable()
    .optional()
    .refine((v) => v == null || Object.keys(v).length === 0, "logit_bias is not supported by this server"),
  tools: z
    .array(z.unknown())
    .nullable()
    .optional()
    .refine((v) => v == null || v.length === 0, "tools are not supported by this server"),
  functions: z
    .array(z.unknown())
    .nullable()
    .optional()
    .refine((v) => v == null || v.length === 0, "functions are not supported by this server"),
  tool_choice: z
    .unknown()
    .optional()
    .refine((v) => v == null || v === "none", "tool_choice is not supported by this server"),
});
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

/** The request's messages as the chat template takes them; refuses what a text model cannot read. */
export function chatMessages(request: ChatRequest): ChatMessage[] {
  return request.messages.map((m, i) => {
    const param = `messages[${i}]`;
    if (m.role === "tool" || m.role === "function") throw new OpenAiError(400, `${param}.role: ${m.role} messages are not supported by this server`, { param: `${param}.role` });
    if (m.tool_calls && m.tool_calls.length > 0) throw new OpenAiError(400, `${param}.tool_calls: tool calls are not supported by this server`, { param: `${param}.tool_calls` });
    let content = "";
    if (typeof m.content === "string") content = m.content;
    else if (Array.isArray(m.content)) {
      content = m.content
        .map((part, j) => {
          if (part.type !== "text" || typeof (part as { text?: unknown }).text !== "string")
            throw new OpenAiError(400, `${param}.content[${j}]: only text parts are supported (got "${part.type}")`, { param: `${param}.content` });
          return (part as { text: string }).text;
        })
        .join("");
    } else if (m.role !== "assistant") throw new OpenAiError(400, `${param}.content: is required`, { param: `${param}.content` });
    // `developer` is what newer OpenAI models call the system message.
    const role = m.role === "developer" ? "system" : m.role;
    return { role, content };
  });
}
