// Package reference holds the PyTorch references (qwen3_ref.py for the dense
// Qwen2/Qwen3 decoders, hybrid_ref.py for the Qwen3.5/3.6 Gated DeltaNet +
// gated-attention hybrid) and the Go tests that hold the reference backend
// (trainer/refbackend) to their debug state: logits, loss, LoRA gradients of
// one backward pass and the losses of ten AdamW steps; the exported PEFT
// adapter and, for the hybrid, the merged folder are read back by torch.
package reference
