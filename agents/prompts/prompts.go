// Package prompts holds the documented prompt templates of the executor
// roles (orchestrator and worker system prompts) and the execution
// directive, embedded from templates/*.tmpl.
package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var files embed.FS

var tmpl = template.Must(template.ParseFS(files, "templates/*.tmpl"))

// Data fills the system prompt templates.
type Data struct {
	Agent     string   // agent id
	Parent    string   // parent agent id (workers)
	Workspace string   // container mount, /workspace
	Protected []string // workspace-relative protected paths
	ToolNames string   // comma-separated tool names
}

// System renders the system prompt for role "orchestrator" or "worker".
func System(role string, d Data) (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, role+".tmpl", d); err != nil {
		return "", fmt.Errorf("render %s system prompt: %w", role, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// Directive is the execution directive appended to task + workflow in
// teacher prompts: the outer loop of the MASS method.
func Directive() string {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "directive.tmpl", nil); err != nil {
		panic(err) // a static template; covered by tests
	}
	return strings.TrimSpace(b.String())
}

// Teacher builds the orchestrator's first user message: the bare task alone,
// or task, workflow and execution directive.
func Teacher(task, workflow string) string {
	task = strings.TrimSpace(task)
	if strings.TrimSpace(workflow) == "" {
		return task
	}
	return task + "\n\n" + strings.TrimSpace(workflow) + "\n\n" + Directive()
}
