package daemon

import (
	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/taskspec"
)

// templateTeacher is the teacher prompt of a task with a query template,
// as the reference's collection writes it: the design's query (the
// template file for its own design, else the design rendered into it),
// then the execution directive — the task's, else mass's.
func templateTeacher(spec *taskspec.Spec, workflow, directive string) (string, error) {
	t, err := search.LoadTemplate(spec)
	if err != nil {
		return "", err
	}
	if directive == "" {
		directive = prompts.Directive()
	}
	if err := prompts.CheckDirective(directive); err != nil {
		return "", err
	}
	return t.Teacher(workflow, directive), nil
}
