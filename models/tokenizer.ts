/**
 * A checkpoint's tokenizer: Hugging Face's tokenizer.json (any of them: read by
 * @huggingface/tokenizers), tokenizer_config.json for the special tokens and chat template, and
 * generation_config.json for the tokens that end generation.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { z } from "zod";
import { DataError } from "../worlds/core/errors.js";
import { readTextInput } from "../worlds/core/text-input.js";
import type { VocabularyInput } from "./grammar/index.js";
import { bytesToUnicode } from "./bpe-trainer.js";
import { CHATML_TEMPLATE, chatSegments, renderChat, type ChatMessage } from "./chat-template.js";

const TokenText = z.union([z.string(), z.object({ content: z.string() }).loose(), z.null()]).optional();

const TokenizerConfigSchema = z
  .object({
    chat_template: z.union([z.string(), z.array(z.object({ name: z.string(), template: z.string() }))]).optional(),
    bos_token: TokenText,
    eos_token: TokenText,
    pad_token: TokenText,
  })
  .loose();

export const GenerationConfigSchema = z
  .object({
    eos_token_id: z.union([z.number().int(), z.array(z.number().int())]).optional(),
    bos_token_id: z.number().int().nullish(),
    pad_token_id: z.number().int().nullish(),
    temperature: z.number().nonnegative().optional(),
    top_k: z.number().int().nonnegative().optional(),
    top_p: z.number().positive().max(1).optional(),
    do_sample: z.boolean().optional(),
    max_new_tokens: z.number().int().positive().optional(),
  })
  .loose();
export type GenerationConfig = z.infer<typeof GenerationConfigSchema>;

function readJson(file: string): unknown {
  const text = readTextInput(file);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DataError(file, {}, `not valid JSON: ${(err as Error).message}`);
  }
}

function parseWith<T extends z.ZodType>(schema: T, value: unknown, file: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new DataError(file, { field: issue.path.join(".") || "(root)" }, issue.message);
  }
  return r.data;
}

/** GPT-2's byte-level alphabet read backwards: the byte each printable character stands for. */
const BYTE_OF_CHAR: ReadonlyMap<string, number> = new Map(bytesToUnicode().map((ch, byte) => [ch, byte]));

const tokenText = (t: z.infer<typeof TokenText>): string | null => (t == null ? null : typeof t === "string" ? t : t.content);

export class PolicyTokenizer {
  private readonly tok: Tokenizer;
  readonly chatTemplate: string;
  /** True when the checkpoint brought its own template (else CHATML_TEMPLATE). */
  readonly ownTemplate: boolean;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  /** Token ids that end generation: generation_config's eos_token_id, else the tokenizer's eos token. */
  readonly stopTokenIds: readonly number[];
  readonly vocabSize: number;
  /** How tokenBytes reads a token: the byte-level alphabet, `<0xNN>` byte tokens, added tokens as text. */
  private readonly byteLevel: boolean;
  private readonly byteFallback: boolean;
  private readonly metaspace: boolean;
  private readonly addedIds: ReadonlySet<number>;

  constructor(
    readonly tokenizerJson: Record<string, unknown>,
    readonly tokenizerConfig: Record<string, unknown>,
    readonly generationConfig: GenerationConfig = {},
    readonly source = "tokenizer.json",
  ) {
    try {
      this.tok = new Tokenizer(tokenizerJson, tokenizerConfig);
    } catch (err) {
      throw new DataError(source, {}, `not a tokenizer the loader understands: ${(err as Error).message}`);
    }
    const cfg = parseWith(TokenizerConfigSchema, tokenizerConfig, source.replace(/tokenizer\.json$/, "tokenizer_config.json"));
    const tmpl = Array.isArray(cfg.chat_template) ? cfg.chat_template.find((t) => t.name === "default")?.template : cfg.chat_template;
    this.ownTemplate = typeof tmpl === "string";
    this.chatTemplate = tmpl ?? CHATML_TEMPLATE;
    this.bosToken = tokenText(cfg.bos_token);
    this.eosToken = tokenText(cfg.eos_token);
    const eos = generationConfig.eos_token_id;
    const ids = eos === undefined ? [] : Array.isArray(eos) ? eos : [eos];
    if (ids.length === 0 && this.eosToken !== null) {
      const id = this.tok.token_to_id(this.eosToken);
      if (id !== undefined) ids.push(id);
    }
    this.stopTokenIds = ids;
    this.vocabSize = this.tok.get_vocab(true).size;
    const decoder = tokenizerJson.decoder as { type?: string; decoders?: { type?: string }[] } | null | undefined;
    this.byteLevel = decoder?.type === "ByteLevel" || (decoder?.decoders ?? []).some((d) => d?.type === "ByteLevel");
    this.byteFallback = (tokenizerJson.model as { byte_fallback?: unknown } | undefined)?.byte_fallback === true;
    this.metaspace = decoder?.type === "Metaspace" || (decoder?.decoders ?? []).some((d) => d?.type === "Metaspace" || (d?.type === "Replace" && JSON.stringify(d).includes("\u2581")));
    const added = Array.isArray(tokenizerJson.added_tokens) ? (tokenizerJson.added_tokens as { id?: unknown }[]) : [];
    this.addedIds = new Set(added.map((t) => t?.id).filter((i): i is number => typeof i === "number"));
  }

  /** Reads DIR/tokenizer.json (required), DIR/tokenizer_config.json and DIR/generation_config.json (optional). */
  static load(dir: string): PolicyTokenizer {
    const file = join(dir, "tokenizer.json");
    if (!existsSync(file)) throw new DataError(file, {}, "missing: the checkpoint folder has no tokenizer.json");
    const json = readJson(file);
    if (!json || typeof json !== "object" || !("model" in json)) throw new DataError(file, { field: "model" }, "not a Hugging Face tokenizer.json (no model section)");
    const cfgFile = join(dir, "tokenizer_config.json");
    const cfg = existsSync(cfgFile) ? readJson(cfgFile) : {};
    const genFile = join(dir, "generation_config.json");
    const gen = existsSync(genFile) ? parseWith(GenerationConfigSchema, readJson(genFile), genFile) : {};
    return new PolicyTokenizer(json as Record<string, unknown>, cfg as Record<string, unknown>, gen, file);
  }

  encode(text: string): number[] {
    return this.tok.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: readonly number[], opts: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return "";
    return this.tok.decode([...ids], { skip_special_tokens: opts.skipSpecialTokens ?? false });
  }

  tokenId(token: string): number | undefined {
    return this.tok.token_to_id(token);
  }

  /**
   * The bytes a token stands for (OpenAI's logprobs `bytes`). A byte-level token (GPT-2's
   * alphabet, Qwen's) or a byte-fallback token (`<0xE2>`) can be part of a character, which its
   * decoded text (U+FFFD) loses; so those are mapped back to their bytes, and only other tokens
   * are their decoded text's UTF-8.
   */
  tokenBytes(id: number): number[] {
    const piece = this.addedIds.has(id) ? undefined : this.tok.id_to_token(id);
    return (piece !== undefined ? this.byteBytes(piece) : null) ?? [...Buffer.from(this.decode([id]), "utf8")];
  }

  /** A byte-fallback (`<0xNN>`) or byte-level piece's bytes; null for other pieces. */
  private byteBytes(piece: string): number[] | null {
    const fallback = this.byteFallback ? /^<0x([0-9A-Fa-f]{2})>$/.exec(piece) : null;
    if (fallback) return [parseInt(fallback[1]!, 16)];
    if (!this.byteLevel) return null;
    const bytes: number[] = [];
    for (const ch of piece) {
      const b = BYTE_OF_CHAR.get(ch);
      if (b === undefined) return null;
      bytes.push(b);
    }
    return bytes;
  }

  /**
   * The vocabulary as constrained decoding reads it (grammarVocabulary in action-grammar.ts
   * builds and keeps its trie): each token's bytes, exactly as it writes
   * them inside a text (byte-level tokens through their alphabet, `<0xNN>` byte tokens, and
   * SentencePiece pieces with "\u2581" as a space); added and special tokens are never allowed
   * inside a text; the stop tokens end it. Throws for a tokenizer whose tokens have no fixed
   * bytes (a WordPiece vocabulary, say).
   */
  vocabulary(): VocabularyInput {
    if (!this.byteLevel && !this.byteFallback && !this.metaspace)
      throw new DataError(this.source, { field: "decoder" }, "constrained decoding needs a byte-level (GPT-2 / Qwen) or SentencePiece tokenizer");
    const tokens: (number[] | null)[] = [];
    for (let id = 0; id < this.vocabSize; id++) {
      const piece = this.addedIds.has(id) ? undefined : this.tok.id_to_token(id);
      const bytes = piece === undefined ? null : this.byteBytes(piece);
      tokens.push(bytes ?? (piece !== undefined && !this.byteLevel && this.metaspace ? [...Buffer.from(piece.replace(/\u2581/g, " "), "utf8")] : null));
    }
    return { tokens, eos: this.stopTokenIds };
  }

  applyChatTemplate(messages: readonly ChatMessage[], opts: { addGenerationPrompt: boolean }): string {
    return renderChat(this.chatTemplate, messages, { ...opts, bosToken: this.bosToken, eosToken: this.eosToken });
  }

  /**
   * A conversation as token ids with a mask of the assistant's tokens (the ones a trainer puts
   * the loss on). Pieces are tokenized separately, so the boundary falls exactly where the
   * assistant's text starts, as it does when the model generates after the prompt.
   */
  encodeChat(messages: readonly ChatMessage[]): { ids: number[]; assistant: boolean[] } {
    const ids: number[] = [];
    const assistant: boolean[] = [];
    for (const seg of chatSegments(this.chatTemplate, messages, { bosToken: this.bosToken, eosToken: this.eosToken })) {
      for (const id of this.encode(seg.text)) {
        ids.push(id);
        assistant.push(seg.assistant);
      }
    }
    return { ids, assistant };
  }
}
