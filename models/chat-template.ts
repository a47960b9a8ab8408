/**
 * Chat templates. A checkpoint that has one (tokenizer_config.json's `chat_template`, a Jinja
 * template) is rendered with @huggingface/jinja exactly as transformers renders it. Our own
 * models get CHATML_TEMPLATE, the ChatML layout Qwen2 uses, without a default system prompt:
 *
 *     <|im_start|>system
 *     {system}<|im_end|>
 *     <|im_start|>user
 *     {user}<|im_end|>
 *     <|im_start|>assistant
 *     {assistant}<|im_end|>
 *
 * Each message is `<|im_start|>{role}\n{content}<|im_end|>\n`; a generation prompt is
 * `<|im_start|>assistant\n`; the model ends its turn with `<|im_end|>`.
 */
import { Template } from "@huggingface/jinja";

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

export const CHATML_TEMPLATE =
  "{%- for message in messages %}" +
  "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  "{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

const compiled = new Map<string, Template>();

export function renderChat(
  template: string,
  messages: readonly ChatMessage[],
  opts: { addGenerationPrompt: boolean; bosToken?: string | null; eosToken?: string | null },
): string {
  let t = compiled.get(template);
  if (!t) {
    t = new Template(template);
    compiled.set(template, t);
  }
  return t.render({
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    add_generation_prompt: opts.addGenerationPrompt,
    bos_token: opts.bosToken ?? "",
    eos_token: opts.eosToken ?? "",
  });
}

/**
 * The conversation's text in pieces, each marked as written by the assistant or not, so that a
 * trainer can put the loss on the assistant's tokens only. Works for any template where a
 * conversation's rendering starts with the rendering of its prefix (true of ChatML and Qwen's).
 */
export function chatSegments(template: string, messages: readonly ChatMessage[], special: { bosToken?: string | null; eosToken?: string | null } = {}): { text: string; assistant: boolean }[] {
  const segments: { text: string; assistant: boolean }[] = [];
  let done = "";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const before = renderChat(template, messages.slice(0, i), { addGenerationPrompt: true, ...special });
    const through = renderChat(template, messages.slice(0, i + 1), { addGenerationPrompt: false, ...special });
    if (!before.startsWith(done) || !through.startsWith(before))
      throw new Error("the chat template does not render conversations as extensions of their prefixes; cannot mark the assistant's tokens");
    if (before.length > done.length) segments.push({ text: before.slice(done.length), assistant: false });
    segments.push({ text: through.slice(before.length), assistant: true });
    done = through;
  }
  const all = renderChat(template, messages, { addGenerationPrompt: false, ...special });
  if (all.length > done.length) segments.push({ text: all.slice(done.length), assistant: false });
  return segments;
}
