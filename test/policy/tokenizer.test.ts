import { describe, expect, it } from "vitest";
import { preTokenize, SPECIAL_TOKENS, trainBpe } from "../../models/bpe-trainer.js";
import { CHATML_TEMPLATE, chatSegments, renderChat } from "../../models/chat-template.js";
import { PolicyTokenizer } from "../../models/tokenizer.js";
import { CORPUS } from "./fixtures.js";

const tokenizerConfig = { chat_template: CHATML_TEMPLATE, eos_token: "<|im_end|>", bos_token: null };

describe("tokenizers built from a corpus", () => {
  it("byte-level BPE: loads with the Hugging Face loader, round-trips any text, learns frequent words", () => {
    const t = trainBpe(CORPUS, { kind: "bpe", vocabSize: 400 });
    expect(t.vocabSize).toBeLessThanOrEqual(400);
    const tok = new PolicyTokenizer(t.tokenizer, tokenizerConfig);
    expect(tok.vocabSize).toBe(t.vocabSize);
    for (const text of ["Where is the spinach?", "unseen wörds, émojis 🙂 and\ttabs\n\nnewlines", "  leading spaces", "x".repeat(50)]) expect(tok.decode(tok.encode(text))).toBe(text);
    // "garage" is frequent in the corpus: one token, with its leading space.
    expect(tok.encode(" garage")).toHaveLength(1);
    // Special tokens are single ids after the learned vocabulary.
    expect(tok.encode("<|im_start|>user")[0]).toBe(t.specialIds["<|im_start|>"]);
    expect(Object.values(t.specialIds)).toEqual(SPECIAL_TOKENS.map((_, i) => t.vocabSize - SPECIAL_TOKENS.length + i));
    // The loader splits text exactly as the trainer did.
    const trained = new Set(Object.keys((t.tokenizer.model as { vocab: Record<string, number> }).vocab));
    for (const piece of preTokenize("Ella moved the spinach to the blue_box.")) {
      if (!trained.has(piece)) continue;
      expect(tok.encode(Buffer.from(piece, "latin1").toString()).length).toBeGreaterThan(0);
    }
  });

  it("gives each token's bytes, parts of a character included (logprobs' bytes)", () => {
    const t = trainBpe(CORPUS, { kind: "bpe", vocabSize: 400 });
    const tok = new PolicyTokenizer(t.tokenizer, tokenizerConfig);
    const text = "unseen wörds, émojis 🙂 and€";
    const ids = tok.encode(text);
    // Some token is part of a character: its decoded text is U+FFFD, its bytes are not.
    expect(ids.some((id) => tok.decode([id]).includes("\ufffd"))).toBe(true);
    expect(Buffer.from(ids.flatMap((id) => tok.tokenBytes(id)))).toEqual(Buffer.from(text, "utf8"));
    expect(tok.tokenBytes(t.specialIds["<|im_end|>"]!)).toEqual([...Buffer.from("<|im_end|>")]);

    // Byte fallback (SentencePiece-style, Llama's): "é" as <0xC3> <0xA9>.
    const fallback = new PolicyTokenizer(
      {
        version: "1.0",
        added_tokens: [],
        normalizer: null,
        pre_tokenizer: null,
        post_processor: null,
        decoder: { type: "Sequence", decoders: [{ type: "ByteFallback" }, { type: "Fuse" }] },
        model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: true, vocab: { a: 0, "<0xC3>": 1, "<0xA9>": 2 }, merges: [] },
      },
      {},
    );
    const ea = fallback.encode("éa");
    expect(ea).toEqual([1, 2, 0]);
    expect(ea.map((id) => fallback.tokenBytes(id))).toEqual([[0xc3], [0xa9], [0x61]]);
    expect(fallback.decode(ea)).toBe("éa");
  });

  it("word-level: every word seen often enough becomes one token", () => {
    const corpus = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"];
    const t = trainBpe(corpus, { kind: "word", vocabSize: 1000, minFrequency: 2 });
    const tok = new PolicyTokenizer(t.tokenizer, tokenizerConfig);
    for (const w of ["the", " the", " cat", " sat", " on", " dog"]) expect(tok.encode(w), w).toHaveLength(1);
    // A word seen once falls back to pieces and still round-trips.
    expect(tok.encode(" mat").length).toBeGreaterThan(1);
    expect(tok.decode(tok.encode("the cat sat on the zebra"))).toBe("the cat sat on the zebra");
  });

  it("is deterministic and independent of the corpus's order", () => {
    const a = trainBpe(CORPUS, { kind: "bpe", vocabSize: 350 });
    const b = trainBpe([...CORPUS].reverse(), { kind: "bpe", vocabSize: 350 });
    expect(JSON.stringify(b.tokenizer)).toBe(JSON.stringify(a.tokenizer));
  });
});

describe("chat templates", () => {
  it("render our ChatML layout as documented", () => {
    const text = renderChat(
      CHATML_TEMPLATE,
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Where is the ball?" },
      ],
      { addGenerationPrompt: true },
    );
    expect(text).toBe("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhere is the ball?<|im_end|>\n<|im_start|>assistant\n");
  });

  it("render a checkpoint's own Jinja template (Qwen2.5's default-system-prompt form)", () => {
    const qwenLike =
      "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}" +
      "{%- for message in messages %}{%- if message.role != 'system' %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
    const t = trainBpe(CORPUS, { kind: "bpe", vocabSize: 300 });
    const tok = new PolicyTokenizer(t.tokenizer, { ...tokenizerConfig, chat_template: qwenLike });
    expect(tok.ownTemplate).toBe(true);
    expect(tok.applyChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true })).toBe(
      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  it("mark the assistant's tokens, and only those, for the loss", () => {
    const messages = [
      { role: "user" as const, content: "Q1" },
      { role: "assistant" as const, content: "A1" },
      { role: "user" as const, content: "Q2" },
      { role: "assistant" as const, content: "A2" },
    ];
    const segs = chatSegments(CHATML_TEMPLATE, messages);
    expect(segs.filter((s) => s.assistant).map((s) => s.text)).toEqual(["A1<|im_end|>\n", "A2<|im_end|>\n"]);
    expect(segs.map((s) => s.text).join("")).toBe(renderChat(CHATML_TEMPLATE, messages, { addGenerationPrompt: false }));
    const t = trainBpe(CORPUS, { kind: "bpe", vocabSize: 300 });
    const tok = new PolicyTokenizer(t.tokenizer, tokenizerConfig);
    const { ids, assistant } = tok.encodeChat(messages);
    const marked = ids.filter((_, i) => assistant[i]);
    expect(tok.decode(marked)).toBe("A1<|im_end|>\nA2<|im_end|>\n");
    expect(tok.decode(ids)).toBe(renderChat(CHATML_TEMPLATE, messages, { addGenerationPrompt: false }));
  });
});
