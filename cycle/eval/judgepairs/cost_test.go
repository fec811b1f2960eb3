package judgepairs

import (
	"context"
	"math"
	"testing"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/judge"
)

// billed is a judger whose every judgment used 10,000 prompt and 2,000
// completion tokens.
type billed struct{ prefer }

func (b *billed) Judge(ctx context.Context, r Request) (judge.Result, error) {
	res, err := b.prefer.Judge(ctx, r)
	res.PromptTokens, res.CompletionTokens = 10000, 2000
	return res, err
}

// TestExecuteCosts: a priced judge's verdicts carry its price and
// cost_usd; an unpriced judge's carry none; judgement.json sums them.
func TestExecuteCosts(t *testing.T) {
	p, _ := ParseParams([]byte(`{"rollout":"ev","no_self":true}`))
	price := model.Price{InputPerMTok: 5, OutputPerMTok: 25}
	c := Config{Dir: t.TempDir(), Rollout: testRollout(), Params: p, Parts: Parts{
		Judges: []JudgeSpec{{Model: "ja", Seeds: []int64{42, 43}}, {Model: "jb", Seeds: []int64{42}}},
		Judger: &billed{}, Prices: map[string]model.Price{"ja": price}}}
	res, err := Execute(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	one := (10000*5.0 + 2000*25.0) / 1e6 // $0.10
	vs, _ := ReadVerdicts(c.Dir)
	for _, v := range vs {
		switch {
		case v.Model == "ja" && (v.Price == nil || math.Abs(v.CostUSD-one) > 1e-12):
			t.Errorf("ja verdict cost %v price %v, want %v", v.CostUSD, v.Price, one)
		case v.Model == "jb" && (v.Price != nil || v.CostUSD != 0):
			t.Errorf("unpriced jb verdict cost %v", v.CostUSD)
		}
	}
	if got, want := res.CostUSD, 4*2*one; math.Abs(got-want) > 1e-9 {
		t.Errorf("total %v, want %v", got, want)
	}
	if len(res.Costs) != 2 || res.Costs[0].Judge != "ja" || res.Costs[0].Verdicts != 8 || res.Costs[1].Unpriced != 4 || res.Costs[1].PromptTokens != 40000 {
		t.Errorf("costs %+v", res.Costs)
	}
}
