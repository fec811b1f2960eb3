// Package tokenizer implements the byte-level BPE tokenizers of the Qwen2, Qwen2.5 and Qwen3
// models, loaded from a Hugging Face tokenizer.json: NFC normalization, the split pattern as a
// hand-written scanner, ByteLevel mapping, added and special tokens, encode and decode.
package tokenizer
