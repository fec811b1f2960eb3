// Package reference holds the PyTorch reference (qwen3_ref.py) and the Go
// tests that hold the reference backend (trainer/refbackend) to its debug state: logits, loss, LoRA
// gradients of one backward pass and the losses of ten AdamW steps.
package reference
