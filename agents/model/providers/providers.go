// Package providers links every model provider into a program: importing
// it makes model.Open (and so model.NewRegistry) build openai-responses
// and anthropic clients beside the built-in openai-chat one.
package providers

import (
	// Each registers its provider with agents/model in init.
	_ "github.com/mass-dev/mass/agents/model/anthropic"
	_ "github.com/mass-dev/mass/agents/model/responses"
)
