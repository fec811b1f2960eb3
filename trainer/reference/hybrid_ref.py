#!/usr/bin/python3
"""PyTorch reference for the Qwen3.5/3.6 hybrid decoder (Gated DeltaNet + gated attention).

Written from the public modelling equations, plain torch, float64, no transformers library:

  decoder layer   h += mixer(rms1p(h)); h += mlp(rms1p(h))      rms1p(x) = x/rms(x) * (1 + w)
  full attention  q_proj -> per head [query | gate]; q_norm, k_norm (1 + w form); RoPE on the
                  first head_dim*partial_rotary_factor dims (text positions: the three mrope
                  sections see one position, so mrope is plain RoPE); causal GQA softmax;
                  out * sigmoid(gate); o_proj
  Gated DeltaNet  in_proj_qkv -> depthwise causal conv1d (width K, no bias) -> SiLU -> q, k, v;
                  beta = sigmoid(in_proj_b x); g = -exp(A_log) * softplus(in_proj_a x + dt_bias);
                  q, k repeated to the value heads, L2-normalised (eps 1e-6), q scaled 1/sqrt(dk);
                  recurrent rule S = e^g S; delta = beta (v - S^T k); S += k delta^T; o = S^T q;
                  gated RMSNorm o/rms(o) * w * silu(in_proj_z x); out_proj

Writes into --out the same debug state as qwen3_ref.py (model/ in the official nested layout with
model.visual.* and mtp.* tensors the trainer must carry, lora_init.safetensors, ref.safetensors,
debug.json). Run with Debian's python3-torch: /usr/bin/python3 hybrid_ref.py --arch hybrid --out DIR
"""
import argparse
import json
import math
import os

import torch
import torch.nn.functional as F

from qwen3_ref import lr_at, read_safetensors, window_loss, write_safetensors, OPT

# hybrid-tiny's shapes (trainer/model/presets.go) with a 512-token vocabulary, so that the
# checked-in state stays small.
CFG = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
           num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
           rope_theta=10000000.0, partial_rotary_factor=0.25, linear_conv_kernel_dim=4,
           linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
           linear_value_head_dim=16, tie_word_embeddings=False,
           layer_types=["linear_attention"] * 3 + ["full_attention"])
LORA = dict(r=4, lora_alpha=8.0, lora_dropout=0.0, use_rslora=False,
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                            "in_proj_qkv", "in_proj_z", "out_proj"])
P = "model.language_model."
ATTN = {"q_proj", "k_proj", "v_proj", "o_proj"}
LIN = {"in_proj_qkv", "in_proj_z", "out_proj"}
GROUP = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
         "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp",
         "in_proj_qkv": "linear_attn", "in_proj_z": "linear_attn", "out_proj": "linear_attn"}


def shapes():
    c = CFG
    d, f, hd, nh, nkv = c["hidden_size"], c["intermediate_size"], c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"]
    kw = c["linear_num_key_heads"] * c["linear_key_head_dim"]
    vw = c["linear_num_value_heads"] * c["linear_value_head_dim"]
    return dict(q_proj=(d, 2 * nh * hd), k_proj=(d, nkv * hd), v_proj=(d, nkv * hd), o_proj=(nh * hd, d),
                gate_proj=(d, f), up_proj=(d, f), down_proj=(f, d),
                in_proj_qkv=(d, 2 * kw + vw), in_proj_z=(d, vw), out_proj=(vw, d),
                in_proj_b=(d, c["linear_num_value_heads"]), in_proj_a=(d, c["linear_num_value_heads"]))


def has(layer, m):
    lin = CFG["layer_types"][layer] == "linear_attention"
    return GROUP[m] == "mlp" or (m in LIN) == lin


def make_weights(g):
    c, sh = CFG, shapes()
    d, v = c["hidden_size"], c["vocab_size"]
    rn = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
    w = {P + "embed_tokens.weight": rn(v, d) * 0.5, P + "norm.weight": 0.1 * rn(d), "lm_head.weight": rn(v, d) * 0.2}
    for i in range(c["num_hidden_layers"]):
        p = f"{P}layers.{i}."
        w[p + "input_layernorm.weight"] = 0.1 * rn(d)
        w[p + "post_attention_layernorm.weight"] = 0.1 * rn(d)
        mods = [m for m in GROUP if has(i, m)]
        if c["layer_types"][i] == "full_attention":
            w[p + "self_attn.q_norm.weight"] = 0.1 * rn(c["head_dim"])
            w[p + "self_attn.k_norm.weight"] = 0.1 * rn(c["head_dim"])
        else:
            mods += ["in_proj_b", "in_proj_a"]
            nv, cd = c["linear_num_value_heads"], shapes()["in_proj_qkv"][1]
            w[p + "linear_attn.conv1d.weight"] = rn(cd, 1, c["linear_conv_kernel_dim"]) * 0.5
            w[p + "linear_attn.A_log"] = torch.log(1 + 15 * torch.rand(nv, generator=g, dtype=torch.float64))
            w[p + "linear_attn.dt_bias"] = 1 + 0.1 * rn(nv)
            w[p + "linear_attn.norm.weight"] = 1 + 0.1 * rn(c["linear_value_head_dim"])
        for m in mods:
            i_, o = sh[m]
            grp = "linear_attn" if m.startswith("in_proj") else GROUP[m]
            w[p + f"{grp}.{m}.weight"] = rn(o, i_) / math.sqrt(i_)
    # Tensors the trainer does not train and must carry through merge and export.
    w["model.visual.patch_embed.proj.weight"] = rn(8, 3, 2, 2, 2)
    w["model.visual.blocks.0.attn.qkv.weight"] = rn(24, 8)
    w["mtp.fc.weight"] = rn(d, 2 * d)
    w["mtp.layers.0.mlp.up_proj.weight"] = rn(8, d)
    return {k: t.float() for k, t in w.items()}


def make_lora(g):
    out = {}
    for i in range(CFG["num_hidden_layers"]):
        for m in LORA["target_modules"]:
            if not has(i, m):
                continue
            i_, o = shapes()[m]
            bound = 1 / math.sqrt(i_)
            out[f"{P}layers.{i}.{GROUP[m]}.{m}.lora_A.weight"] = ((torch.rand(LORA["r"], i_, generator=g) * 2 - 1) * bound).float()
            out[f"{P}layers.{i}.{GROUP[m]}.{m}.lora_B.weight"] = (torch.randn(o, LORA["r"], generator=g) * 0.1).float()
    return out


def rms(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def l2norm(x):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


class Net:
    """One window's forward pass over base weights W and LoRA tensors L (official names)."""

    def __init__(self, W, L):
        self.W, self.L = W, L
        self.scaling = LORA["lora_alpha"] / (math.sqrt(LORA["r"]) if LORA["use_rslora"] else LORA["r"])

    def w(self, n):
        return self.W[n].to(torch.float64)

    def lin(self, x, name):
        y = x @ self.w(name + ".weight").T
        if name + ".lora_A.weight" in self.L:
            a, b = self.L[name + ".lora_A.weight"].to(torch.float64), self.L[name + ".lora_B.weight"].to(torch.float64)
            y = y + (x @ a.T @ b.T) * self.scaling
        return y

    def attention(self, x, p, T):
        c = CFG
        hd, nh, nkv = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"]
        qg = self.lin(x, p + "q_proj").view(T, nh, 2 * hd)
        q, gate = qg[..., :hd], qg[..., hd:].reshape(T, nh * hd)
        q = rms(q, c["rms_norm_eps"]) * (1 + self.w(p + "q_norm.weight"))
        k = rms(self.lin(x, p + "k_proj").view(T, nkv, hd), c["rms_norm_eps"]) * (1 + self.w(p + "k_norm.weight"))
        v = self.lin(x, p + "v_proj").view(T, nkv, hd)
        rd = int(hd * c["partial_rotary_factor"])
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, rd, 2, dtype=torch.float64) / rd))
        ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
        emb = torch.cat((ang, ang), dim=-1)
        cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
        q = torch.cat((q[..., :rd] * cos + rotate_half(q[..., :rd]) * sin, q[..., rd:]), dim=-1)
        k = torch.cat((k[..., :rd] * cos + rotate_half(k[..., :rd]) * sin, k[..., rd:]), dim=-1)
        k, v = k.repeat_interleave(nh // nkv, dim=1), v.repeat_interleave(nh // nkv, dim=1)
        s = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
        s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        a = torch.einsum("hts,shd->thd", s.softmax(-1), v).reshape(T, nh * hd)
        return self.lin(a * torch.sigmoid(gate), p + "o_proj")

    def deltanet(self, x, p, T):
        c = CFG
        nk, nv, dk, dv, K = (c["linear_num_key_heads"], c["linear_num_value_heads"], c["linear_key_head_dim"],
                             c["linear_value_head_dim"], c["linear_conv_kernel_dim"])
        qkv = self.lin(x, p + "in_proj_qkv")
        C = qkv.shape[-1]
        conv = F.conv1d(qkv.T[None], self.w(p + "conv1d.weight"), padding=K - 1, groups=C)[0, :, :T].T
        conv = F.silu(conv)
        q = conv[:, :nk * dk].reshape(T, nk, dk)
        k = conv[:, nk * dk:2 * nk * dk].reshape(T, nk, dk)
        v = conv[:, 2 * nk * dk:].reshape(T, nv, dv)
        beta = torch.sigmoid(x @ self.w(p + "in_proj_b.weight").T)
        g = -self.w(p + "A_log").exp() * F.softplus(x @ self.w(p + "in_proj_a.weight").T + self.w(p + "dt_bias"))
        q = l2norm(q.repeat_interleave(nv // nk, dim=1)) / math.sqrt(dk)
        k = l2norm(k.repeat_interleave(nv // nk, dim=1))
        S = torch.zeros(nv, dk, dv, dtype=torch.float64)
        outs = []
        for t in range(T):
            S = S * g[t].exp()[:, None, None]
            delta = (v[t] - torch.einsum("hkv,hk->hv", S, k[t])) * beta[t][:, None]
            S = S + k[t][:, :, None] * delta[:, None, :]
            outs.append(torch.einsum("hkv,hk->hv", S, q[t]))
        o = torch.stack(outs)
        z = self.lin(x, p + "in_proj_z").view(T, nv, dv)
        o = rms(o, c["rms_norm_eps"]) * self.w(p + "norm.weight") * F.silu(z)
        return self.lin(o.reshape(T, nv * dv), p + "out_proj")

    def logits(self, ids):
        c, T = CFG, len(ids)
        eps = c["rms_norm_eps"]
        h = self.w(P + "embed_tokens.weight")[torch.tensor(ids)]
        for i in range(c["num_hidden_layers"]):
            p = f"{P}layers.{i}."
            x = rms(h, eps) * (1 + self.w(p + "input_layernorm.weight"))
            if c["layer_types"][i] == "linear_attention":
                h = h + self.deltanet(x, p + "linear_attn.", T)
            else:
                h = h + self.attention(x, p + "self_attn.", T)
            x = rms(h, eps) * (1 + self.w(p + "post_attention_layernorm.weight"))
            m = F.silu(self.lin(x, p + "mlp.gate_proj")) * self.lin(x, p + "mlp.up_proj")
            h = h + self.lin(m, p + "mlp.down_proj")
        x = rms(h, eps) * (1 + self.w(P + "norm.weight"))
        head = self.w(P + "embed_tokens.weight") if c["tie_word_embeddings"] else self.w("lm_head.weight")
        return x @ head.T


def official_config():
    c = {k: v for k, v in CFG.items()}
    text = dict(c, model_type="qwen3_5_text", attn_output_gate=True, hidden_act="silu", attention_bias=False,
                max_position_embeddings=4096, full_attention_interval=4, dtype="float32",
                rope_parameters={"rope_type": "default", "rope_theta": c["rope_theta"], "partial_rotary_factor": c["partial_rotary_factor"],
                                 "mrope_section": [1, 1, 0], "mrope_interleaved": True})
    del text["rope_theta"]
    return {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "tie_word_embeddings": False,
            "text_config": text, "vision_config": {"model_type": "qwen3_5", "depth": 1, "hidden_size": 8}}


def read_folder(d):
    """All tensors of a model folder (model.safetensors or the shards of its index)."""
    ix = os.path.join(d, "model.safetensors.index.json")
    files = sorted(set(json.load(open(ix))["weight_map"].values())) if os.path.exists(ix) else ["model.safetensors"]
    W = {}
    for f in files:
        W.update(read_safetensors(os.path.join(d, f)))
    return W


def check(model_dir, adapter_dir, windows_path, out_path):
    """Logits of windows for a model folder, with a PEFT adapter folder when given."""
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    assert cfg["model_type"] == "qwen3_5" and cfg["text_config"]["model_type"] == "qwen3_5_text", cfg
    W, L = read_folder(model_dir), {}
    for n in ("model.visual.blocks.0.attn.qkv.weight", "mtp.fc.weight"):
        assert n in W, f"carried tensor {n} missing from {model_dir}"
    if adapter_dir:
        ac = json.load(open(os.path.join(adapter_dir, "adapter_config.json")))
        assert ac["peft_type"] == "LORA" and sorted(ac["target_modules"]) == sorted(LORA["target_modules"]), ac
        LORA.update(r=ac["r"], lora_alpha=ac["lora_alpha"], use_rslora=ac["use_rslora"])
        for k, t in read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors")).items():
            assert k.startswith("base_model.model." + P), k
            L[k[len("base_model.model."):]] = t
    windows = json.load(open(windows_path))
    net = Net(W, L)
    write_safetensors(out_path, {f"logits_{i}": net.logits(w["input_ids"]).detach() for i, w in enumerate(windows)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", choices=["hybrid"], default="hybrid")
    ap.add_argument("--check-adapter", metavar="DIR")
    ap.add_argument("--check-merged", action="store_true", help="logits of --model alone (a merged folder)")
    ap.add_argument("--model", metavar="DIR")
    ap.add_argument("--windows", metavar="JSON")
    ap.add_argument("--seed", type=int, default=4321)
    args = ap.parse_args()
    if args.check_adapter or args.check_merged:
        check(args.model, args.check_adapter, args.windows, args.out)
        return
    g = torch.Generator().manual_seed(args.seed)
    W, L0 = make_weights(g), make_lora(g)
    V = CFG["vocab_size"]
    windows = []
    for T, masked in ((12, {0, 1, 2, 6, 7}), (9, {0, 4})):
        ids = torch.randint(0, V, (T,), generator=g).tolist()
        windows.append({"input_ids": ids, "labels": [-100 if t in masked else x for t, x in enumerate(ids)]})
    os.makedirs(os.path.join(args.out, "model"), exist_ok=True)
    with open(os.path.join(args.out, "model", "config.json"), "w") as f:
        json.dump(official_config(), f, indent=2)
    write_safetensors(os.path.join(args.out, "model", "model.safetensors"), W)
    write_safetensors(os.path.join(args.out, "lora_init.safetensors"), L0)

    internal = lambda k: "model." + k[len(P):] if k.startswith(P) else k
    L = {k: t.to(torch.float64).requires_grad_(True) for k, t in L0.items()}
    ref, wl, total = {}, [], 0
    for i, w in enumerate(windows):
        logits = Net(W, L).logits(w["input_ids"])
        ref[f"logits_{i}"] = logits.detach()
        lw = window_loss(logits, w["labels"])
        wl.append(lw.item())
        total = total + lw
    loss = total / len(windows)
    loss.backward()
    for k, t in L.items():
        ref["grad:" + internal(k)] = t.grad.detach()
    write_safetensors(os.path.join(args.out, "ref.safetensors"), ref)

    Pm = {k: t.clone().requires_grad_(True) for k, t in L0.items()}
    names = sorted(Pm, key=internal)
    opt = torch.optim.AdamW([Pm[k] for k in names], lr=OPT["lr"], betas=tuple(OPT["betas"]), eps=OPT["eps"],
                            weight_decay=OPT["weight_decay"], foreach=False)
    steps = []
    for s in range(OPT["steps"]):
        for grp in opt.param_groups:
            grp["lr"] = lr_at(s)
        opt.zero_grad()
        net = Net(W, Pm)
        l = sum(window_loss(net.logits(w["input_ids"]), w["labels"]) for w in windows) / len(windows)
        l.backward()
        torch.nn.utils.clip_grad_norm_([Pm[k] for k in names], OPT["clip"])
        opt.step()
        steps.append(l.item())
    with open(os.path.join(args.out, "debug.json"), "w") as f:
        json.dump({"generator": "trainer/reference/hybrid_ref.py", "torch": torch.__version__, "seed": args.seed,
                   "dtype": "float64 compute, float32 LoRA masters and AdamW state", "arch": "hybrid",
                   "config": CFG, "lora": LORA, "opt": OPT, "windows": windows,
                   "window_losses": wl, "loss": loss.item(), "step_losses": steps}, f, indent=1)


if __name__ == "__main__":
    main()
