package refimport

import (
	"fmt"
	"io"
)

// Report says what an import wrote and what has no mass equivalent.
type Report struct {
	Source       string       `json:"source"`
	Out          string       `json:"out"`
	Tasks        []TaskReport `json:"tasks"`
	NoEquivalent []string     `json:"no_equivalent"` // set-wide
}

// TaskReport is one imported task.
type TaskReport struct {
	Query        int    `json:"query"`
	ID           string `json:"id"`
	Spec         string `json:"spec"`
	Split        string `json:"split"`
	Domain       string `json:"domain,omitempty"`
	JudgedOnly   bool   `json:"judged_only"` // no grader: judged, never graded
	PromptBytes  int    `json:"prompt_bytes"`
	DesignAgents int    `json:"design_agents"`
	// AfterDesign is the initial file's text after the design, which mass's
	// teacher prompt (task + design + directive) has no place for.
	AfterDesign string   `json:"after_design"`
	Notes       []string `json:"notes,omitempty"`
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "imported %d tasks from %s into %s\n", len(r.Tasks), r.Source, r.Out)
	for _, t := range r.Tasks {
		fmt.Fprintf(w, "  %-10s query %-4d split %-8s domain %-9s design %d agents  %s\n", t.ID, t.Query, t.Split, t.Domain, t.DesignAgents, t.Spec)
		for _, n := range t.Notes {
			fmt.Fprintf(w, "      - %s\n", n)
		}
	}
	if len(r.NoEquivalent) > 0 {
		fmt.Fprintln(w, "no mass equivalent:")
		for _, n := range r.NoEquivalent {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}
