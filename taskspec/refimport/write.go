package refimport

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mass-dev/mass/taskspec"
)

// specDoc is task.yaml as written, in this field order.
type specDoc struct {
	ID          string   `yaml:"id"`
	Prompt      string   `yaml:"prompt"`
	Split       string   `yaml:"split"`
	Domain      string   `yaml:"domain,omitempty"`
	ReferenceID string   `yaml:"reference_id"`
	Workflow    string   `yaml:"workflow"`
	Directive   string   `yaml:"directive,omitempty"`
	Query       string   `yaml:"query_template,omitempty"`
	Image       string   `yaml:"image,omitempty"`
	Limits      limitDoc `yaml:"limits"`
}

type limitDoc struct {
	EpisodeWallTime string  `yaml:"episode_wall_time"`
	AgentTurns      int     `yaml:"agent_turns"`
	CPUs            float64 `yaml:"cpus,omitempty"`
	Memory          string  `yaml:"memory_bytes,omitempty"`
}

// doc is the spec's limits block.
func (lim Limits) doc() limitDoc {
	return limitDoc{EpisodeWallTime: lim.EpisodeWallTime, AgentTurns: lim.AgentTurns, CPUs: lim.CPUs, Memory: lim.Memory}
}

// checkLimits refuses limits (and an image profile) no spec would
// accept, before anything is written.
func checkLimits(lim Limits) error {
	doc, err := yaml.Marshal(specDoc{ID: "query1", Prompt: "p", Split: "train", ReferenceID: "1", Workflow: WorkflowFile,
		Image: lim.Image, Limits: lim.doc()})
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	if _, err := taskspec.Parse(doc); err != nil {
		return fmt.Errorf("limits for the imported tasks: %w", err)
	}
	return nil
}

// writeTask writes one task folder: task.yaml, prompt.txt, workflow.txt and
// directive.txt when the set has one.
func writeTask(out string, t task, directive string, lim Limits) error {
	dir := filepath.Join(out, t.rep.ID)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create task folder: %w", err)
	}
	doc := specDoc{ID: t.rep.ID, Prompt: t.prompt, Split: t.rep.Split, Domain: t.rep.Domain,
		ReferenceID: strconv.Itoa(t.rep.Query), Workflow: WorkflowFile,
		Image: lim.Image, Limits: lim.doc()}
	files := map[string]string{PromptFile: t.prompt, WorkflowFile: t.initial.Design + "\n"}
	if directive != "" {
		doc.Directive = DirectiveFile
		files[DirectiveFile] = directive
	}
	// The initial file itself, byte for byte: a search runs each design
	// inside it, as the reference does, when it has the end marker.
	if raw := t.initial.Before + t.initial.Design + t.initial.After; strings.LastIndex(raw, EndMarker) > len(t.initial.Before) {
		doc.Query = QueryFile
		files[QueryFile] = raw
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("render %s: %w", SpecFile, err)
	}
	head := fmt.Sprintf("# Imported by massctl task import-reference from the reference's query %d.\n"+
		"# No grader: judged only. prompt.txt is the bare query byte for byte; workflow.txt is the\n"+
		"# initial design; limits are the importer's (the reference sets none).\n", t.rep.Query)
	files[SpecFile] = head + string(body)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
