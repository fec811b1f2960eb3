package export

import (
	"sort"
	"strings"

	"github.com/mass-dev/mass/trainer/model"
)

// hybridFP8Groups are the projections vLLM fuses in a Qwen3.5/3.6 layer
// (qkv; gate/up; in_proj_qkv with in_proj_z; in_proj_b with in_proj_a).
var hybridFP8Groups = [][]string{
	{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"}, {"self_attn.o_proj"},
	{"mlp.gate_proj", "mlp.up_proj"}, {"mlp.down_proj"},
	{"linear_attn.in_proj_qkv", "linear_attn.in_proj_z"}, {"linear_attn.in_proj_b", "linear_attn.in_proj_a"},
	{"linear_attn.out_proj"},
}

// hybridFP8Skipped is FP8Skipped for a hybrid: the groups present in each
// layer whose weights do not tile into FP8Block blocks (in_proj_b and
// in_proj_a, whose outputs are one value per head, always among them).
func hybridFP8Skipped(c *model.Config) []string {
	exp := c.Expected()
	var out []string
	for l := 0; l < c.NumLayers; l++ {
		for _, g := range hybridFP8Groups {
			if _, ok := exp[model.LayerName(l, g[0]+".weight")]; !ok {
				continue
			}
			fits := true
			for _, mod := range g {
				shape := exp[model.LayerName(l, mod+".weight")]
				fits = fits && shape[0]%FP8Block == 0 && shape[1]%FP8Block == 0
			}
			if !fits {
				for _, mod := range g {
					out = append(out, strings.TrimSuffix(model.LayerName(l, mod+".weight"), ".weight"))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
