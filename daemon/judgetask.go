package daemon

import (
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/taskspec"
)

// judgeTask is the task as a generation's or an evaluation's judge reads
// it. A task with a query template is a reference task: its bare prompt is
// read as the reference's judges read tasks/bare/query{q}.txt
// (search.BareTaskText); any other task's prompt as written.
func judgeTask(id string, s *taskspec.Spec) judge.Task {
	p := s.Prompt
	if s.QueryTemplate != "" {
		p = search.BareTaskText(p)
	}
	return judge.Task{ID: id, Prompt: p, Domain: s.Domain, Required: requiredOutputs(s)}
}
