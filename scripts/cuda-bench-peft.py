#!/usr/bin/env python3
"""Speed anchor for the CUDA backend: PyTorch + PEFT LoRA training steps on random
Qwen3-shaped models, same shapes, adapter (r 64, alpha 128, dropout 0.05, all seven
projections), bf16, sequence length and FLOP count as mass's BenchmarkTrainStep.
Prints one line per shape: PEFT <shape> seq<T> tokens/s <x> MFU <y>."""
import argparse
import statistics
import sys

import torch

SHAPES = {
    "0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                 num_attention_heads=16, num_key_value_heads=8),
    "4b": dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
               num_attention_heads=32, num_key_value_heads=8),
}
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def flops_per_token(s, seq, vocab=151936, hd=128):
    """Same count as trainer/cudabackend/flops.go: 4·N (frozen products) + causal attention."""
    d, f, L = s["hidden_size"], s["intermediate_size"], s["num_hidden_layers"]
    q, kv = s["num_attention_heads"] * hd, s["num_key_value_heads"] * hd
    n = L * (d * q + 2 * d * kv + q * d + 3 * d * f) + vocab * d
    return 4 * n + 6 * L * s["num_attention_heads"] * hd * (seq + 1)


def bench(name, seq, steps, warmup, peak):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from peft import LoraConfig, get_peft_model

    s = SHAPES[name]
    cfg = Qwen3Config(vocab_size=151936, head_dim=128, rms_norm_eps=1e-6, rope_theta=1000000.0,
                      tie_word_embeddings=True, max_position_embeddings=40960, use_cache=False,
                      attn_implementation="sdpa", **s)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(cfg).to(dtype=torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=64, lora_alpha=128, lora_dropout=0.05, target_modules=TARGETS,
                                             bias="none", task_type="CAUSAL_LM"))
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (1, seq), device="cuda")
    times = []
    for i in range(warmup + steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        model.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end) / 1e3)
    t = statistics.median(times)
    tps = seq / t
    mfu = tps * flops_per_token(s, seq) / (peak * 1e12)
    print(f"PEFT qwen3-{name} seq{seq} tokens/s {tps:.1f} MFU {mfu:.4f} step_s {t:.4f}", flush=True)
    del model, out
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shapes", default="0.6b,4b")
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--peak-tflops", type=float, default=989.4)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("cuda-bench-peft: no CUDA device visible to torch")
    for name in a.shapes.split(","):
        bench(name, a.seq, a.steps, a.warmup, a.peak_tflops)


if __name__ == "__main__":
    main()
