package judgepairs

import (
	"sort"

	"github.com/mass-dev/mass/agents/model"
)

// JudgeCost is one judge model's spending over the verdict files: the
// billed tokens of every attempt and their cost at the verdicts' prices.
type JudgeCost struct {
	Judge            string  `json:"judge"`
	External         bool    `json:"external"`
	Verdicts         int     `json:"verdicts"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	Unpriced         int     `json:"unpriced"` // verdicts made with no price configured (cost 0)
}

// priced sets v's cost from the judge's price (none: cost 0, no price).
func priced(v *Verdict, prices map[string]model.Price) {
	p, ok := prices[v.Model]
	if !ok {
		return
	}
	v.Price = &p
	v.CostUSD = p.Cost(v.PromptTokens, v.CompletionTokens)
}

// Costs sums the verdicts' costs per judge model (sorted by name) and in total.
func Costs(vs []Verdict) ([]JudgeCost, float64) {
	by := map[string]*JudgeCost{}
	total := 0.0
	for _, v := range vs {
		c := by[v.Model]
		if c == nil {
			c = &JudgeCost{Judge: v.Model, External: v.External}
			by[v.Model] = c
		}
		c.Verdicts++
		c.PromptTokens += v.PromptTokens
		c.CompletionTokens += v.CompletionTokens
		c.CostUSD += v.CostUSD
		total += v.CostUSD
		if v.Price == nil {
			c.Unpriced++
		}
	}
	out := make([]JudgeCost, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Judge < out[j].Judge })
	return out, total
}
