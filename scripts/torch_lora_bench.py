#!/usr/bin/python3
"""Plain-PyTorch LoRA training loop, the anchor of mass-train's CPU benchmark.

Reads a mass-train model folder (config.json + model.safetensors, float32 or
bf16), the windows and initial LoRA weights that `mass-train bench-train
--dump DIR` wrote, and runs one AdamW step per window (constant lr, no
clipping, no weight decay, LoRA dropout 0) in float32 or float64. The first
step is a warm-up; the rest are timed. Prints one JSON line with the same
fields as bench-train: CPU-seconds and wall seconds per step, peak RSS, the
losses of every step. Says on stderr which BLAS library the process mapped.

Usage: torch_lora_bench.py MODEL_DIR DUMP_DIR [--dtype float32|float64] [--lr 1e-3] [--threads N]
"""
import argparse
import json
import os
import resource
import struct
import sys
import time

import torch
import torch.nn.functional as F


def read_safetensors(path):
    """Returns {name: float32 tensor} of a safetensors file."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        raw = bytearray(data[lo:hi])
        dt = info["dtype"]
        if dt == "F32":
            a = torch.frombuffer(raw, dtype=torch.float32)
        elif dt == "BF16":
            a = torch.frombuffer(raw, dtype=torch.bfloat16).float()
        elif dt == "F16":
            a = torch.frombuffer(raw, dtype=torch.float16).float()
        else:
            raise SystemExit(f"{path}: tensor {name} has dtype {dt}")
        out[name] = a.reshape(info["shape"]).clone()
    return out


def load_weights(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        files = sorted(set(json.load(open(index))["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    w = {}
    for f in files:
        w.update(read_safetensors(os.path.join(model_dir, f)))
    return w


def blas_libraries():
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in os.path.basename(p).lower() or "lapack" in os.path.basename(p).lower():
                libs.add(os.path.realpath(p))
    return sorted(libs)


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Model:
    def __init__(self, cfg, w, lora, dtype):
        self.cfg, self.dtype = cfg, dtype
        self.w = {k: v.to(dtype) for k, v in w.items()}
        self.lora = {k: torch.nn.Parameter(v.to(dtype)) for k, v in lora.items()}
        self.scale = cfg["lora_alpha"] / cfg["lora_r"]
        self.head = self.w.get("lm_head.weight", self.w["model.embed_tokens.weight"])

    def linear(self, x, layer, path):
        name = f"model.layers.{layer}.{path}"
        y = F.linear(x, self.w[name + ".weight"], self.w.get(name + ".bias"))
        a = self.lora.get(name + ".lora_A.weight")
        if a is not None:
            y = y + self.scale * F.linear(F.linear(x, a), self.lora[name + ".lora_B.weight"])
        return y

    def loss(self, ids, labels):
        c = self.cfg
        t = ids.shape[0]
        nh, nkv, hd, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        ang = torch.arange(t, dtype=torch.float64)[:, None] * inv[None, :]
        ang = torch.cat((ang, ang), dim=-1)
        cos, sin = ang.cos().to(self.dtype)[None], ang.sin().to(self.dtype)[None]
        mask = torch.full((t, t), float("-inf"), dtype=self.dtype).triu(1)
        x = self.w["model.embed_tokens.weight"][ids]
        for l in range(c["num_hidden_layers"]):
            p = f"model.layers.{l}."
            h = rms_norm(x, self.w[p + "input_layernorm.weight"], eps)
            q = self.linear(h, l, "self_attn.q_proj").view(t, nh, hd).transpose(0, 1)
            k = self.linear(h, l, "self_attn.k_proj").view(t, nkv, hd).transpose(0, 1)
            v = self.linear(h, l, "self_attn.v_proj").view(t, nkv, hd).transpose(0, 1)
            if p + "self_attn.q_norm.weight" in self.w:
                q = rms_norm(q, self.w[p + "self_attn.q_norm.weight"], eps)
                k = rms_norm(k, self.w[p + "self_attn.k_norm.weight"], eps)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k = k.repeat_interleave(nh // nkv, dim=0)
            v = v.repeat_interleave(nh // nkv, dim=0)
            s = torch.matmul(q, k.transpose(1, 2)) / (hd ** 0.5) + mask
            o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(0, 1).reshape(t, nh * hd)
            x = x + self.linear(o, l, "self_attn.o_proj")
            h = rms_norm(x, self.w[p + "post_attention_layernorm.weight"], eps)
            g = self.linear(h, l, "mlp.gate_proj")
            u = self.linear(h, l, "mlp.up_proj")
            x = x + self.linear(F.silu(g) * u, l, "mlp.down_proj")
        x = rms_norm(x, self.w["model.norm.weight"], eps)
        logits = F.linear(x[:-1], self.head)
        return F.cross_entropy(logits, labels[1:], ignore_index=-100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("dump")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cpu0 = time.process_time()
    cfg = json.load(open(os.path.join(args.model, "config.json")))
    if not cfg.get("head_dim"):
        cfg["head_dim"] = cfg["hidden_size"] // cfg["num_attention_heads"]
    cfg.setdefault("rms_norm_eps", 1e-6)
    cfg.setdefault("rope_theta", 10000.0)
    dump = json.load(open(os.path.join(args.dump, "windows.json")))
    cfg["lora_r"], cfg["lora_alpha"] = dump["rank"], dump["alpha"]
    dtype = getattr(torch, args.dtype)
    m = Model(cfg, load_weights(args.model), read_safetensors(os.path.join(args.dump, "lora_init.safetensors")), dtype)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, BLAS mapped: {', '.join(blas_libraries()) or 'none'}", file=sys.stderr)
    opt = torch.optim.AdamW(list(m.lora.values()), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    losses = []
    t0 = c0 = None
    for i, win in enumerate(dump["windows"]):
        if i == 1:
            t0, c0 = time.perf_counter(), time.process_time()
        ids = torch.tensor(win["input_ids"], dtype=torch.long)
        labels = torch.tensor(win["labels"], dtype=torch.long)
        opt.zero_grad(set_to_none=True)
        loss = m.loss(ids, labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    n = len(dump["windows"]) - 1
    cpu, wall = (time.process_time() - c0) / n, (time.perf_counter() - t0) / n
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"impl": "torch-" + args.dtype, "seq": len(dump["windows"][0]["input_ids"]), "steps": n,
                      "cpu_s_per_step": cpu, "wall_s_per_step": wall, "peak_rss_mib": rss, "losses": losses,
                      "load_cpu_s": time.process_time() - cpu0 - cpu * n, "dtype": args.dtype,
                      "blas": blas_libraries()}))


if __name__ == "__main__":
    main()
