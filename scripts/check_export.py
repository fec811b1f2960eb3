#!/usr/bin/python3
"""Check mass-train's exports against the rules their loaders apply.

The rules below are facts read from PEFT's and vLLM's sources, written out
here as checks (no code of theirs is used):

PEFT (LoraConfig / save_pretrained / set_peft_model_state_dict)
  - adapter_config.json: peft_type "LORA", integer r > 0, lora_alpha,
    target_modules a list of names (matched by the whole module name or its
    dotted suffix) or a string (a regex over the whole name, or "all-linear");
    rank_pattern/alpha_pattern map keys matched as ^(.*\\.)?(key)$ in order.
  - adapter_model.safetensors keys: base_model.model.<module>.lora_A.weight
    [r, in] and ...lora_B.weight [out, r], the module being a Linear of the
    base model whose weight is [out, in].
vLLM (PEFTHelper, LoRAModel.from_local_checkpoint, Fp8Config,
validate_fp8_block_shape, is_layer_skipped)
  - no DoRA, bias "none", no modules_to_save; r <= --max-lora-rank (default
    16; choices 8, 16, 32, 64, 128, 256, 320, 512).
  - block FP8: quant_method "fp8", weight_block_size [n, k]; every quantized
    weight's output size divisible by n and input size by k, with a float32
    <name>_scale_inv [ceil(out/n), ceil(in/k)]; layers left unquantized are
    named in ignored_layers or modules_to_not_convert, and the shards of a
    fused layer (q/k/v, gate/up) are all quantized or all skipped.
transformers: config.json's torch_dtype is the dtype of the stored weights.

Usage: check_export.py --base DIR [--adapter DIR] [--merged DIR] [--fp8 DIR] [--max-lora-rank N]
Exit status 1 and one line per violation when a rule fails.
"""
import argparse
import json
import math
import os
import re
import struct
import sys

DTYPES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}
FUSED = [("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj")]
VLLM_RANKS = [8, 16, 32, 64, 128, 256, 320, 512]
problems = []


def bad(msg):
    problems.append(msg)


def header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        h = json.loads(f.read(n))
    h.pop("__metadata__", None)
    return h


def tensors(folder):
    """{name: (dtype, shape)} over a folder's safetensors, checking the index."""
    index = os.path.join(folder, "model.safetensors.index.json")
    out = {}
    if os.path.exists(index):
        wm = json.load(open(index))["weight_map"]
        for f in sorted(set(wm.values())):
            for k, v in header(os.path.join(folder, f)).items():
                if wm.get(k) != f:
                    bad(f"{folder}: {k} is in {f} but the index says {wm.get(k)}")
                out[k] = (v["dtype"], v["shape"])
        for k in wm:
            if k not in out:
                bad(f"{folder}: index names {k}, which no shard holds")
    else:
        for k, v in header(os.path.join(folder, "model.safetensors")).items():
            out[k] = (v["dtype"], v["shape"])
    return out


def matches_targets(targets, module):
    if isinstance(targets, str):
        return targets == "all-linear" or re.fullmatch(targets, module) is not None
    return any(module == t or module.endswith("." + t) for t in targets)


def pattern(patterns, module, default):
    for key, value in (patterns or {}).items():
        if re.match(rf"(.*\.)?({key})$", module):
            return value
    return default


def check_adapter(d, base, max_rank):
    cfg = json.load(open(os.path.join(d, "adapter_config.json")))
    if cfg.get("peft_type") != "LORA":
        bad(f"adapter: peft_type {cfg.get('peft_type')!r}, want 'LORA'")
    r = cfg.get("r")
    if not isinstance(r, int) or r <= 0:
        bad(f"adapter: r {r!r} is not a positive integer")
        return
    if not isinstance(cfg.get("lora_alpha"), (int, float)):
        bad("adapter: lora_alpha missing")
    if cfg.get("use_dora"):
        bad("adapter: use_dora (vLLM does not load DoRA)")
    if cfg.get("bias", "none") != "none":
        bad(f"adapter: bias {cfg.get('bias')!r} (vLLM needs 'none')")
    if cfg.get("modules_to_save"):
        bad("adapter: modules_to_save (vLLM does not load them)")
    bm = cfg.get("base_model_name_or_path") or ""
    if not (os.path.isfile(os.path.join(bm, "config.json")) or re.fullmatch(r"[\w.-]+/[\w.-]+", bm) and not os.path.isabs(bm)):
        bad(f"adapter: base_model_name_or_path {bm!r} is neither a model folder nor a hub id")
    ranks = [r] + [v for v in (cfg.get("rank_pattern") or {}).values()]
    top = max(ranks)
    if top > max_rank:
        need = next((x for x in VLLM_RANKS if x >= top), None)
        print(f"note: vLLM needs --max-lora-rank {need} for rank {top} (its default is 16)")
    targets = cfg.get("target_modules")
    ts = header(os.path.join(d, "adapter_model.safetensors"))
    pairs = {}
    for k, v in ts.items():
        m = re.fullmatch(r"base_model\.model\.(.+)\.lora_([AB])\.weight", k)
        if not m:
            bad(f"adapter: key {k} is not base_model.model.<module>.lora_{{A,B}}.weight")
            continue
        mod, which = m.groups()
        pairs.setdefault(mod, {})[which] = v
        if v["dtype"] not in DTYPES:
            bad(f"adapter: {k} has dtype {v['dtype']}")
    for mod, ab in sorted(pairs.items()):
        if set(ab) != {"A", "B"}:
            bad(f"adapter: {mod} has lora_{''.join(ab)} only")
            continue
        w = base.get(mod + ".weight")
        if w is None or len(w[1]) != 2:
            bad(f"adapter: {mod} is not a linear layer of the base model")
            continue
        out, inp = w[1]
        rm = pattern(cfg.get("rank_pattern"), mod, r)
        if ab["A"]["shape"] != [rm, inp] or ab["B"]["shape"] != [out, rm]:
            bad(f"adapter: {mod} A{ab['A']['shape']} B{ab['B']['shape']}, want A[{rm}, {inp}] B[{out}, {rm}]")
        if targets is not None and not matches_targets(targets, mod):
            bad(f"adapter: {mod} carries weights but target_modules {targets!r} do not select it")
    if not pairs:
        bad("adapter: no LoRA weights")


def check_model(d, base_cfg, base, fp8):
    cfg = json.load(open(os.path.join(d, "config.json")))
    for k in ("architectures", "model_type", "hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads", "num_key_value_heads"):
        if cfg.get(k) != base_cfg.get(k):
            bad(f"{d}: config {k} {cfg.get(k)!r}, base has {base_cfg.get(k)!r}")
    ts = tensors(d)
    for k, (_, shape) in base.items():
        if k not in ts:
            bad(f"{d}: tensor {k} missing")
        elif ts[k][1] != shape:
            bad(f"{d}: {k} shape {ts[k][1]}, base {shape}")
    plain = {v[0] for k, v in ts.items() if v[0] != "F8_E4M3" and not k.endswith("_scale_inv")}
    if len(plain) != 1 or DTYPES.get(next(iter(plain))) != cfg.get("torch_dtype"):
        bad(f"{d}: torch_dtype {cfg.get('torch_dtype')!r} but the unquantized weights are {sorted(plain)}")
    q = cfg.get("quantization_config")
    if not fp8:
        if q is not None or any(v[0] == "F8_E4M3" for v in ts.values()):
            bad(f"{d}: quantized tensors or quantization_config in a plain merged folder")
        return
    if q is None:
        bad(f"{d}: no quantization_config")
        return
    for k, want in (("quant_method", "fp8"), ("fmt", "e4m3"), ("activation_scheme", "dynamic")):
        if q.get(k) != want:
            bad(f"{d}: quantization_config {k} {q.get(k)!r}, want {want!r}")
    bn, bk = q.get("weight_block_size", [0, 0])
    skipped = set(q.get("ignored_layers") or q.get("modules_to_not_convert") or [])
    for k, (dt, shape) in ts.items():
        if not (k.startswith("model.layers.") and k.endswith("_proj.weight")):
            continue
        mod = k[: -len(".weight")]
        if dt == "F8_E4M3":
            out, inp = shape
            if out % bn or inp % bk:
                bad(f"{d}: {k} {shape} is FP8 but not divisible by the block [{bn}, {bk}]")
            s = ts.get(k + "_scale_inv")
            if s is None or s[0] != "F32" or s[1] != [math.ceil(out / bn), math.ceil(inp / bk)]:
                bad(f"{d}: {k}_scale_inv is {s}, want F32 [{math.ceil(out / bn)}, {math.ceil(inp / bk)}]")
            if mod in skipped:
                bad(f"{d}: {mod} is quantized but listed as not converted")
        elif mod not in skipped:
            bad(f"{d}: {mod} is {dt} but not listed in modules_to_not_convert / ignored_layers")
    for mod in skipped:
        for group in FUSED:
            for name in group:
                if mod.endswith("." + name):
                    prefix = mod[: -len(name)]
                    if any(prefix + o not in skipped for o in group):
                        bad(f"{d}: {mod} skipped but not the rest of its fused group {group}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--adapter")
    ap.add_argument("--merged")
    ap.add_argument("--fp8")
    ap.add_argument("--max-lora-rank", type=int, default=16)
    a = ap.parse_args()
    base_cfg = json.load(open(os.path.join(a.base, "config.json")))
    base = tensors(a.base)
    if a.adapter:
        check_adapter(a.adapter, base, a.max_lora_rank)
    if a.merged:
        check_model(a.merged, base_cfg, base, False)
    if a.fp8:
        check_model(a.fp8, base_cfg, base, True)
    for p in problems:
        print("FAIL", p)
    print(f"check_export: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
