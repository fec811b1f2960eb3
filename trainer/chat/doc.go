// Package chat renders OpenAI-style conversations with the Qwen3 and Qwen2.5 chat templates
// natively in Go, byte for byte as the Hugging Face Jinja templates do, and marks which
// tokens belong to assistant turns.
package chat
