# The PEFT round trip on the GPU machine (stage "peft" of run.sh), against transformers:
#
#   python3 measurements/gpu/peft_parity.py --dir PREPARED --out OUT [--device cuda]
#
# PREPARED is what `node dist/measurements/peft-check.js prepare --out PREPARED` wrote here (it
# travels in .device/peft): base/ (a checkpoint of ours), adapter/ (a LoRA adapter our trainer
# wrote, PEFT's layout) and ours.json (our engine's logits of the base with the adapter, every
# position). (a) transformers loads base/ and the adapter, through peft's PeftModel when peft is
# installed, else merged by hand (W + alpha/r B A), and its logits are compared with ours.json.
# (b) test/fixtures/peft-adapter.py writes an adapter as PEFT writes it, with its logits, to
# OUT/py-adapter; bring OUT back and `node dist/measurements/peft-check.js check OUT` loads it with
# our engine and compares. Prints one JSON line for results.jsonl; acceptance: 1e-4 relative.
import argparse, json, math, os, sys
import torch
from safetensors.torch import load_file
from transformers import Qwen2ForCausalLM

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "fixtures"))
import importlib.util
spec = importlib.util.spec_from_file_location("peft_adapter", os.path.join(sys.path[0], "peft-adapter.py"))
fixture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixture)

p = argparse.ArgumentParser()
p.add_argument("--dir", required=True)
p.add_argument("--out", required=True)
p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
a = p.parse_args()
# fp32 products (no TF32): the comparison is of the adapter's arithmetic, not of a precision mode.
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
base_dir = os.path.join(a.dir, "base")
adapter_dir = os.path.join(a.dir, "adapter")
ours = json.load(open(os.path.join(a.dir, "ours.json")))
res = {"engine": "pytorch", "stage": "peft", "device": a.device, "peft": fixture.peft.__version__ if fixture.peft else None}
model = Qwen2ForCausalLM.from_pretrained(base_dir, torch_dtype=torch.float32)
if fixture.peft is not None:
    model = fixture.peft.PeftModel.from_pretrained(model, adapter_dir)
    res["a_loaded_by"] = "peft.PeftModel.from_pretrained"
else:
    cfg = json.load(open(os.path.join(adapter_dir, "adapter_config.json")))
    scale = cfg["lora_alpha"] / (math.sqrt(cfg["r"]) if cfg.get("use_rslora") else cfg["r"])
    tensors = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, A in tensors.items():
            if not name.endswith(".lora_A.weight"):
                continue
            B = tensors[name.replace(".lora_A.", ".lora_B.")]
            target = name.removeprefix("base_model.model.").replace(".lora_A.weight", ".weight")
            params[target] += scale * (B.float() @ A.float())
    res["a_loaded_by"] = f"merged by hand ({len(tensors) // 2} targets, scale {scale})"
model = model.to(a.device).eval()
with torch.no_grad():
    logits = model(torch.tensor([ours["ids"]], device=a.device)).logits[0].flatten().double().cpu()
ref = torch.tensor(ours["logits"], dtype=torch.float64)
res["a_ours_vs_transformers"] = float((logits - ref).abs().max() / ref.abs().max())
res["a_pass"] = res["a_ours_vs_transformers"] <= 1e-4
# (b): an adapter as PEFT writes it, for our engine to load once OUT is back.
b = fixture.make_adapter(base_dir, os.path.join(a.out, "py-adapter"), ids=ours["ids"])
res["b_written"] = os.path.join(a.out, "py-adapter")
res["b_written_by"] = "peft save_pretrained" if b["peft"] else "by hand, PEFT's names"
print(json.dumps(res))
