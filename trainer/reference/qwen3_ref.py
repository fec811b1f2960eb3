#!/usr/bin/python3
"""PyTorch reference for mass-train's reference backend (llm.c-style debug state).

Builds a tiny random Qwen3 (or, with --arch qwen2, a Qwen2 with qkv bias, tied
embeddings, rsLoRA on a subset of modules) decoder with LoRA written from the equations (no
transformers library), computes in float64, and writes into --out:

  model/config.json, model/model.safetensors   base weights (F32)
  lora_init.safetensors                        LoRA A/B (F32, PEFT names without prefix)
  ref.safetensors                              logits_<w> [T,V], grad:<name> (F64)
  debug.json                                   windows, config, losses, 10-step losses

Run with Debian's python3-torch: /usr/bin/python3 qwen3_ref.py --out DIR
"""
import argparse
import json
import math
import os
import struct

import torch

CFG = dict(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
           num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6,
           rope_theta=10000.0, tie_word_embeddings=False)
LORA = dict(r=4, lora_alpha=8.0, lora_dropout=0.0,
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
OPT = dict(lr=1e-2, warmup=2, steps=10, floor=0.1, weight_decay=0.01, betas=[0.9, 0.999], eps=1e-8, clip=1.0)
MODULES = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
           "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp"}


def write_safetensors(path, tensors):
    """Minimal safetensors writer: sorted names, little-endian, 8-byte aligned header."""
    names = sorted(tensors)
    header, blobs, off = {}, [], 0
    for n in names:
        t = tensors[n].contiguous()
        dt = {torch.float32: "F32", torch.float64: "F64"}[t.dtype]
        b = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[n] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Minimal safetensors reader (F32/F64) for checking files mass-train wrote."""
    import numpy as np
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, ti in header.items():
        if name == "__metadata__":
            continue
        dt = {"F32": "<f4", "F64": "<f8"}[ti["dtype"]]
        b, e = ti["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:e], dtype=dt).reshape(ti["shape"]).copy())
    return out


def check_adapter(model_dir, adapter_dir, windows_path, out_path):
    """Logits of windows with a PEFT adapter folder applied, read as PEFT lays it out."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(adapter_dir, "adapter_config.json")) as f:
        ac = json.load(f)
    assert ac["peft_type"] == "LORA" and ac["task_type"] == "CAUSAL_LM" and ac["bias"] == "none", ac
    set_arch(cfg["model_type"])
    LORA.update(r=ac["r"], lora_alpha=ac["lora_alpha"], use_rslora=ac["use_rslora"], target_modules=ac["target_modules"])
    W = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    L = {}
    prefix = "base_model.model."
    for k, t in read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors")).items():
        assert k.startswith(prefix), k
        L[k[len(prefix):]] = t
    with open(windows_path) as f:
        windows = json.load(f)
    write_safetensors(out_path, {f"logits_{i}": forward(W, L, w["input_ids"]).detach() for i, w in enumerate(windows)})


def dims(m):
    c = CFG
    d, q, kv, f = c["hidden_size"], c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"], c["intermediate_size"]
    return {"q_proj": (d, q), "k_proj": (d, kv), "v_proj": (d, kv), "o_proj": (q, d),
            "gate_proj": (d, f), "up_proj": (d, f), "down_proj": (f, d)}[m]


def set_arch(arch):
    """Switch the module-level settings to a variant before anything is built."""
    CFG["arch"] = arch
    if arch == "qwen2":
        CFG["tie_word_embeddings"] = True
        LORA["use_rslora"] = True
        LORA["target_modules"] = ["q_proj", "v_proj", "o_proj", "up_proj"]
    else:
        LORA["use_rslora"] = False


def make_weights(g):
    c = CFG
    d, v = c["hidden_size"], c["vocab_size"]
    w = {"model.embed_tokens.weight": torch.randn(v, d, generator=g) * 0.5,
         "model.norm.weight": 1 + 0.1 * torch.randn(d, generator=g)}
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = torch.randn(v, d, generator=g) * 0.2
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(d, generator=g)
        w[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d, generator=g)
        if c["arch"] == "qwen3":
            w[p + "self_attn.q_norm.weight"] = 1 + 0.1 * torch.randn(c["head_dim"], generator=g)
            w[p + "self_attn.k_norm.weight"] = 1 + 0.1 * torch.randn(c["head_dim"], generator=g)
        for m, grp in MODULES.items():
            i_, o = dims(m)
            w[p + f"{grp}.{m}.weight"] = torch.randn(o, i_, generator=g) / math.sqrt(i_)
            if c["arch"] == "qwen2" and m in ("q_proj", "k_proj", "v_proj"):
                w[p + f"{grp}.{m}.bias"] = 0.1 * torch.randn(o, generator=g)
    return {k: t.float() for k, t in w.items()}


def make_lora(g):
    out = {}
    for i in range(CFG["num_hidden_layers"]):
        for m, grp in MODULES.items():
            if m not in LORA["target_modules"]:
                continue
            i_, o = dims(m)
            bound = 1 / math.sqrt(i_)  # kaiming_uniform_(a=sqrt(5)) as PEFT
            out[f"model.layers.{i}.{grp}.{m}.lora_A.weight"] = ((torch.rand(LORA["r"], i_, generator=g) * 2 - 1) * bound).float()
            # B is zero in PEFT; random here so that every gradient is non-trivial.
            out[f"model.layers.{i}.{grp}.{m}.lora_B.weight"] = (torch.randn(o, LORA["r"], generator=g) * 0.1).float()
    return out


def rms_norm(x, w, eps):
    # Hugging Face order: compute in fp32 (here float64), cast back, times weight.
    xf = x.to(torch.float64)
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return w * y.to(x.dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(W, L, ids):
    """Logits [T, V] of one window, float64."""
    c = CFG
    T, hd, nh, nkv = len(ids), c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"]
    scaling = LORA["lora_alpha"] / (math.sqrt(LORA["r"]) if LORA["use_rslora"] else LORA["r"])
    dbl = lambda t: t.to(torch.float64)

    def lin(x, name):
        y = x @ dbl(W[name + ".weight"]).T
        if name + ".bias" in W:
            y = y + dbl(W[name + ".bias"])
        if name + ".lora_A.weight" in L:
            y = y + (x @ dbl(L[name + ".lora_A.weight"]).T @ dbl(L[name + ".lora_B.weight"]).T) * scaling
        return y

    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    h = dbl(W["model.embed_tokens.weight"])[torch.tensor(ids)]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        x = rms_norm(h, dbl(W[p + "input_layernorm.weight"]), c["rms_norm_eps"])
        q = lin(x, p + "self_attn.q_proj").view(T, nh, hd)
        k = lin(x, p + "self_attn.k_proj").view(T, nkv, hd)
        v = lin(x, p + "self_attn.v_proj").view(T, nkv, hd)
        if c["arch"] == "qwen3":  # Qwen3: RMSNorm over head_dim before RoPE
            q = rms_norm(q, dbl(W[p + "self_attn.q_norm.weight"]), c["rms_norm_eps"])
            k = rms_norm(k, dbl(W[p + "self_attn.k_norm.weight"]), c["rms_norm_eps"])
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = nh // nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        s = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
        s = s.masked_fill(~causal, float("-inf"))
        a = torch.einsum("hts,shd->thd", s.softmax(-1), v).reshape(T, nh * hd)
        h = h + lin(a, p + "self_attn.o_proj")
        x = rms_norm(h, dbl(W[p + "post_attention_layernorm.weight"]), c["rms_norm_eps"])
        gte, up = lin(x, p + "mlp.gate_proj"), lin(x, p + "mlp.up_proj")
        h = h + lin(torch.nn.functional.silu(gte) * up, p + "mlp.down_proj")
    x = rms_norm(h, dbl(W["model.norm.weight"]), c["rms_norm_eps"])
    head = W["model.embed_tokens.weight"] if c["tie_word_embeddings"] else W["lm_head.weight"]
    return x @ dbl(head).T


def window_loss(logits, labels):
    """Mean over supervised positions; position t predicts labels[t+1]."""
    y = torch.tensor(labels[1:])
    return torch.nn.functional.cross_entropy(logits[:-1], y, ignore_index=-100, reduction="mean")


def lr_at(step):
    o = OPT
    if step < o["warmup"]:
        return o["lr"] * (step + 1) / o["warmup"]
    prog = (step - o["warmup"]) / max(1, o["steps"] - o["warmup"])
    return o["lr"] * (o["floor"] + (1 - o["floor"]) * 0.5 * (1 + math.cos(math.pi * prog)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--check-adapter", metavar="DIR", help="instead: logits with this PEFT adapter (needs --model, --windows)")
    ap.add_argument("--model", metavar="DIR")
    ap.add_argument("--windows", metavar="JSON")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--arch", choices=["qwen3", "qwen2"], default="qwen3")
    args = ap.parse_args()
    if args.check_adapter:
        check_adapter(args.model, args.check_adapter, args.windows, args.out)
        return
    set_arch(args.arch)
    g = torch.Generator().manual_seed(args.seed)
    W = make_weights(g)
    L0 = make_lora(g)
    V = CFG["vocab_size"]
    windows = []
    for T, masked in ((12, {0, 1, 2, 6, 7}), (9, {0, 4})):
        ids = torch.randint(0, V, (T,), generator=g).tolist()
        windows.append({"input_ids": ids, "labels": [-100 if t in masked else x for t, x in enumerate(ids)]})

    os.makedirs(os.path.join(args.out, "model"), exist_ok=True)
    arch = CFG["arch"]
    cfg = {k: v for k, v in CFG.items() if k != "arch"}
    cfg.update(architectures=["Qwen3ForCausalLM" if arch == "qwen3" else "Qwen2ForCausalLM"], model_type=arch,
               torch_dtype="float32", hidden_act="silu", max_position_embeddings=4096)
    if arch == "qwen2":
        del cfg["head_dim"]  # Qwen2 configs carry no head_dim; the loader derives it
    with open(os.path.join(args.out, "model", "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(args.out, "model", "model.safetensors"), W)
    write_safetensors(os.path.join(args.out, "lora_init.safetensors"), L0)

    # One forward/backward in float64.
    L = {k: t.to(torch.float64).requires_grad_(True) for k, t in L0.items()}
    ref, wl = {}, []
    total = 0
    for i, w in enumerate(windows):
        logits = forward(W, L, w["input_ids"])
        ref[f"logits_{i}"] = logits.detach()
        lw = window_loss(logits, w["labels"])
        wl.append(lw.item())
        total = total + lw
    loss = total / len(windows)
    loss.backward()
    for k, t in L.items():
        ref["grad:" + k] = t.grad.detach()
    write_safetensors(os.path.join(args.out, "ref.safetensors"), ref)

    # Ten AdamW steps: fp32 master parameters, float64 compute, torch's AdamW.
    P = {k: t.clone().requires_grad_(True) for k, t in L0.items()}
    names = sorted(P)
    opt = torch.optim.AdamW([P[k] for k in names], lr=OPT["lr"], betas=tuple(OPT["betas"]), eps=OPT["eps"],
                            weight_decay=OPT["weight_decay"], foreach=False)
    steps = []
    for s in range(OPT["steps"]):
        for grp in opt.param_groups:
            grp["lr"] = lr_at(s)
        opt.zero_grad()
        l = sum(window_loss(forward(W, P, w["input_ids"]), w["labels"]) for w in windows) / len(windows)
        l.backward()
        torch.nn.utils.clip_grad_norm_([P[k] for k in names], OPT["clip"])
        opt.step()
        steps.append(l.item())

    with open(os.path.join(args.out, "debug.json"), "w") as f:
        json.dump({"generator": "trainer/reference/qwen3_ref.py", "torch": torch.__version__, "seed": args.seed,
                   "dtype": "float64 compute, float32 LoRA masters and AdamW state",
                   "arch": arch, "config": CFG, "lora": LORA, "opt": OPT, "windows": windows,
                   "window_losses": wl, "loss": loss.item(), "step_losses": steps}, f, indent=1)


if __name__ == "__main__":
    main()
