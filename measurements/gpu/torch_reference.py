#!/usr/bin/env python3
"""PyTorch reference for measurements/gpu/bench.mjs, on the same machine and shapes.

Hugging Face's Qwen2ForCausalLM built from the same config (random init), trained as PyTorch
users train it: fp32 master weights, bf16 autocast, fused AdamW, the model's own loss (labels);
eager, and with torch.compile (--compile; the first step, which compiles, is timed apart as
compileS; run.sh compiles the 0.5B model only). Generation with transformers' generate on the model in
bf16 (greedy, every sequence forced to its full length). Each measurement is a JSON line on
stdout, as bench.mjs writes them; a failing stage prints its error and the next one runs.

  python3 torch_reference.py --stages train:10m,train:100m,train:0.5b,generate:1,generate:32
  python3 torch_reference.py --stages train:0.5b --compile
"""
import argparse
import json
import sys
import time
import traceback

PEAK_BF16 = 989e12

# bench.mjs's BENCH_CONFIGS, in Hugging Face's field names.
CONFIGS = {
    "tiny": dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128, max_position_embeddings=512),
    "10m": dict(vocab_size=4096, hidden_size=256, num_hidden_layers=12, num_attention_heads=4, num_key_value_heads=2, intermediate_size=768, max_position_embeddings=1024),
    "100m": dict(vocab_size=32768, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4, intermediate_size=2048, max_position_embeddings=4096),
    "0.5b": dict(vocab_size=151936, hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, intermediate_size=4864, max_position_embeddings=32768),
}


def linear_weights(c):
    hd = c["hidden_size"] // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    per_layer = c["hidden_size"] * (q + 2 * kv) + q * c["hidden_size"] + 3 * c["hidden_size"] * c["intermediate_size"]
    return c["num_hidden_layers"] * per_layer + c["vocab_size"] * c["hidden_size"]


def train_flops(c, batch, seq):
    hd = c["hidden_size"] // c["num_attention_heads"]
    tokens = batch * seq
    return 6 * linear_weights(c) * tokens + 6 * c["num_hidden_layers"] * c["num_attention_heads"] * hd * seq * tokens


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def build(torch, name, dtype):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    kwargs = dict(CONFIGS[name], rms_norm_eps=1e-6, tie_word_embeddings=True, use_sliding_window=False)
    try:
        cfg = Qwen2Config(**kwargs, attn_implementation="sdpa")
    except TypeError:
        cfg = Qwen2Config(**kwargs)
    torch.manual_seed(0)
    return Qwen2ForCausalLM(cfg).to(device="cuda", dtype=dtype)


def median(xs):
    return sorted(xs)[len(xs) // 2]


def train(torch, name, compile_, batch, seq, steps):
    model = build(torch, name, torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
    fwd = torch.compile(model) if compile_ else model
    ids = torch.randint(0, CONFIGS[name]["vocab_size"], (batch, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    # The first step compiles (forward and backward graphs) when compile_: timed on its own.
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    if compile_:
        print(f"{name}: the first compiled step (compilation included) took {first:.1f} s", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    for _ in range(2 if compile_ else 1):
        step()
    torch.cuda.synchronize()
    warm = first + time.perf_counter() - t0
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    s = median(times)
    flops = train_flops(CONFIGS[name], batch, seq)
    result = dict(msPerStep=s * 1000, tokensPerS=batch * seq / s, tflops=flops / s / 1e12, mfu=flops / s / PEAK_BF16, steps=steps, warmupS=warm)
    if compile_:
        result["compileS"] = first
    return result


def generate(torch, name, batch, prompt, new, repeats):
    model = build(torch, name, torch.bfloat16)
    model.eval()
    ids = torch.randint(0, CONFIGS[name]["vocab_size"], (batch, prompt), device="cuda")
    mask = torch.ones_like(ids)

    def run():
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new, min_new_tokens=new, do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
        return (out.shape[1] - prompt) * batch

    run()
    times, n = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = run()
        times.append(time.perf_counter() - t0)
    s = median(times)
    return dict(seconds=s, newTokens=n, tokensPerS=n / s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stages", default="train:10m,train:100m,train:0.5b,generate:1,generate:32")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=5)  # timed steps (--compile: 3)
    ap.add_argument("--gen-config", default="0.5b")
    ap.add_argument("--prompt", type=int, default=256)
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()

    import torch
    import transformers

    engine = "pytorch-compile" if a.compile else "pytorch-eager"
    emit(dict(engine=engine, stage="versions", torch=torch.__version__, transformers=transformers.__version__, gpu=torch.cuda.get_device_name(0)))
    for spec in a.stages.split(","):
        kind, arg = spec.split(":")
        head = dict(engine=engine, stage=kind, device="cuda", precision="bf16-autocast" if kind == "train" else "bf16")
        t0 = time.perf_counter()
        try:
            if kind == "train":
                head.update(config=arg, batch=a.batch, seq=a.seq)
                result = train(torch, arg, a.compile, a.batch, a.seq, min(a.steps, 3) if a.compile else a.steps)
            elif kind == "generate":
                head.update(config=a.gen_config, batch=int(arg), prompt=a.prompt, new=a.new)
                result = generate(torch, a.gen_config, int(arg), a.prompt, a.new, a.repeats)
            else:
                raise ValueError(f"unknown stage {kind}")
            emit(dict(head, **result, wallS=time.perf_counter() - t0))
        except Exception as err:  # one failing stage must not stop the others
            traceback.print_exc(file=sys.stderr)
            emit(dict(head, error=f"{type(err).__name__}: {err}"))
        finally:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
