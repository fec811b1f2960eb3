package judge

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed templates/evaluator.tmpl
var files embed.FS

var tmpl = template.Must(template.ParseFS(files, "templates/evaluator.tmpl"))

// Marker starts every evaluator user prompt (the scripted model keys on it).
const Marker = "MASS EVALUATOR:"

// Persona is the evaluator's persona: an expert of the task's domain (the
// spec's optional `domain` field), else a senior research engineer.
func Persona(domain string) string {
	domain = strings.TrimSpace(domain)
	if domain == "" {
		return "a senior research engineer and reviewer"
	}
	return "a senior expert in " + domain + " and a rigorous reviewer"
}

// Prompt is the rendered evaluator prompt.
type Prompt struct{ System, User string }

// Full is the prompt as full_prompt.txt stores it.
func (p Prompt) Full() string {
	return "=== system ===\n" + p.System + "\n\n=== user ===\n" + p.User + "\n"
}

// RenderPrompt fills the evaluator template; a and b are rendered bundles.
func RenderPrompt(t Task, a, b string) (Prompt, error) {
	data := map[string]any{"Persona": Persona(t.Domain), "Task": strings.TrimSpace(t.Prompt), "Required": t.Required, "A": a, "B": b}
	var p Prompt
	for name, dst := range map[string]*string{"system": &p.System, "user": &p.User} {
		var buf bytes.Buffer
		if err := tmpl.ExecuteTemplate(&buf, name, data); err != nil {
			return Prompt{}, fmt.Errorf("render evaluator %s prompt: %w", name, err)
		}
		*dst = strings.TrimSpace(buf.String())
	}
	return p, nil
}
