package judgepairs

import (
	"fmt"

	"github.com/mass-dev/mass/cycle/rollout"
)

// PairRef is one pair of a rollout: episode Index of Candidate and of the
// baseline on Task, run with the same seed.
type PairRef struct {
	Task, Candidate, Baseline string
	Index                     int
	CandidateEp, BaseEp       string
}

// Pairs lists a rollout's pairs against base, in task, index, model
// order; a pair one of whose episodes never ran is left out.
func Pairs(ro rollout.Summary, base string) []PairRef {
	ep := map[string]string{}
	key := func(t, m string, i int) string { return fmt.Sprintf("%s\x00%s\x00%d", t, m, i) }
	for _, r := range ro.Runs {
		if r.EpisodeID != "" && r.Error == "" {
			ep[key(r.Task, r.Model, r.Index)] = r.EpisodeID
		}
	}
	var out []PairRef
	for _, t := range ro.Tasks {
		for i := 0; i < ro.Episodes; i++ {
			b := ep[key(t, base, i)]
			for _, m := range ro.Models {
				c := ep[key(t, m, i)]
				if m == base || b == "" || c == "" {
					continue
				}
				out = append(out, PairRef{Task: t, Candidate: m, Baseline: base, Index: i, CandidateEp: c, BaseEp: b})
			}
		}
	}
	return out
}
