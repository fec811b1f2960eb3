package services

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// Specs loads each task's stored spec once: make one per job (NewSpecs),
// so that a later job sees a task updated since.
type Specs struct {
	l  datadir.Layout
	mu sync.Mutex
	m  map[string]*taskspec.Spec
}

// NewSpecs is an empty spec cache on data directory l.
func NewSpecs(l datadir.Layout) *Specs {
	return &Specs{l: l, m: map[string]*taskspec.Spec{}}
}

// Get is task's spec, loaded on first use.
func (c *Specs) Get(task string) (*taskspec.Spec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[task]; ok {
		return s, nil
	}
	s, err := taskspec.Load(filepath.Join(c.l.Task(task), taskspec.FileName))
	if err != nil {
		return nil, fmt.Errorf("load task %s: %w", task, err)
	}
	c.m[task] = s
	return s, nil
}

// Split is task's split as its spec says; "" counts as train.
func (c *Specs) Split(_ context.Context, task string) (string, error) {
	spec, err := c.Get(task)
	if err != nil {
		return "", err
	}
	if spec.Split == "" {
		return taskspec.SplitTrain, nil
	}
	return spec.Split, nil
}

// ModelCalls are the role calls (judges, optimizer) through massd's model
// registry.
func ModelCalls(s Services) judge.Model { return judge.Clients(s.EpisodeEnv().Deps().Models) }

// Role is one model role of a loop job: its params key and the model it
// names ("" for none).
type Role struct{ Key, Model string }

// NotJudge refuses an external judge in any role of a job of a loop kind
// (search, generation, cycle): judges judge the loop's output and never
// take part in it. The first role is the executor; when it names none,
// the default model plays it.
func NotJudge(m Models, def, kind string, roles ...Role) error {
	for i, r := range roles {
		name := r.Model
		if name == "" && i == 0 {
			name = def
		}
		if name != "" && m.IsJudge(name) {
			return fmt.Errorf("%s job: %s %q is an external judge (massd.yaml judges); judges are kept out of search, generation and cycle: pick another model", kind, r.Key, name)
		}
	}
	return nil
}

// JudgeAgents runs a task's judge-agent episodes through a job's runner.
func JudgeAgents(eps Episodes, spec *taskspec.Spec) judge.AgentRunner { return judgeAgents{eps, spec} }

type judgeAgents struct {
	eps  Episodes
	spec *taskspec.Spec
}

func (j judgeAgents) RunJudge(ctx context.Context, req judge.AgentRequest) (judge.AgentAnswer, error) {
	return j.eps.RunJudge(ctx, j.spec, req)
}
