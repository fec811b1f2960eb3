package daemon

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/jobkind"
)

// keepJudgesOut makes a loop kind (search, generation, cycle) refuse an
// external judge as executor, evaluator or optimizer, at submission and
// again when it runs; other kinds are returned as they are.
func (b *Builtins) keepJudgesOut(k jobkind.Kind) jobkind.Kind {
	switch k.Name {
	case search.KindName, generation.KindName, generation.CycleKindName:
	default:
		return k
	}
	judges := b.cfg.JudgeModels()
	if len(judges) == 0 {
		return k
	}
	check := func(raw json.RawMessage) error {
		var p map[string]json.RawMessage
		if len(raw) > 0 && json.Unmarshal(raw, &p) != nil {
			return nil // the kind's own validation explains it
		}
		names := map[string]string{"model": b.Env.DefaultModel}
		for _, key := range []string{"model", "judge_model", "optimizer_model"} {
			var s string
			if json.Unmarshal(p[key], &s) == nil && s != "" {
				names[key] = s
			}
		}
		for key, n := range names {
			if judges[n] {
				return fmt.Errorf("%s job: %s %q is an external judge (massd.yaml judges); judges are kept out of search, generation and cycle: pick another model", k.Name, key, n)
			}
		}
		return nil
	}
	validate, run := k.Validate, k.Run
	k.Validate = func(raw json.RawMessage) error {
		if err := check(raw); err != nil {
			return err
		}
		if validate != nil {
			return validate(raw)
		}
		return nil
	}
	k.Run = func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		if err := check(job.Params); err != nil {
			return err
		}
		return run(ctx, job, rep)
	}
	return k
}
