package config

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// DefaultJudgeSeeds are the seeds of a judge that names none (the
// paper's three: two judges × 42, 43, 44 = six verdicts per pair).
var DefaultJudgeSeeds = []int64{42, 43, 44}

// Judge is one external judge of the evaluation: a model massd can call
// (an entry of models, or a scripted name) and the seeds it judges every
// pair with; the seed also decides which workspace is shown first. A
// judge model is kept out of every loop stage: search, generation and
// cycle jobs refuse it as executor, evaluator or optimizer.
type Judge struct {
	Model string  `yaml:"model"`
	Seeds []int64 `yaml:"seeds"`
}

// JudgeModels is the set of the judges' model names.
func (c *Config) JudgeModels() map[string]bool {
	out := map[string]bool{}
	for _, j := range c.Judges {
		out[j.Model] = true
	}
	return out
}

// validatePrices checks the prices table: each key a models entry, each
// price finite and not negative.
func (c *Config) validatePrices(bad badFunc) {
	for _, name := range slices.Sorted(maps.Keys(c.Prices)) {
		f := "prices." + name
		if _, ok := c.Models[name]; !ok {
			bad(f, "names no entry of the models section; prices are keyed by models entry")
		}
		if err := c.Prices[name].Check(); err != nil {
			bad(f, "%v", err)
		}
	}
}

// validateJudges checks the judges section and fills the default seeds.
func (c *Config) validateJudges(bad badFunc) {
	seen := map[string]bool{}
	for i := range c.Judges {
		j := &c.Judges[i]
		f := "judges[" + strconv.Itoa(i) + "]"
		j.Model = strings.TrimSpace(j.Model)
		switch {
		case j.Model == "":
			bad(f+".model", "is empty; name a model of the models section")
		case seen[j.Model]:
			bad(f+".model", "%q is listed twice; give one entry several seeds instead", j.Model)
		}
		seen[j.Model] = true
		if len(j.Seeds) == 0 {
			j.Seeds = append([]int64(nil), DefaultJudgeSeeds...)
		}
		s := map[int64]bool{}
		for _, v := range j.Seeds {
			if s[v] {
				bad(f+".seeds", "seed %d is listed twice", v)
			}
			s[v] = true
		}
	}
}
