package export

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// peftConfig is adapter_config.json as PEFT writes it: the fields whose
// several forms (a string or a list, a bool or a name) are kept raw.
type peftConfig struct {
	PEFTType          string          `json:"peft_type"`
	R                 int             `json:"r"`
	LoRAAlpha         float64         `json:"lora_alpha"`
	LoRADropout       float64         `json:"lora_dropout"`
	TargetModules     json.RawMessage `json:"target_modules"`
	ExcludeModules    json.RawMessage `json:"exclude_modules"`
	Bias              string          `json:"bias"`
	UseRSLoRA         bool            `json:"use_rslora"`
	UseDoRA           bool            `json:"use_dora"`
	FanInFanOut       bool            `json:"fan_in_fan_out"`
	InitLoRAWeights   json.RawMessage `json:"init_lora_weights"`
	ModulesToSave     []string        `json:"modules_to_save"`
	LayersToTransform json.RawMessage `json:"layers_to_transform"`
	LayerReplication  json.RawMessage `json:"layer_replication"`
	LoRABias          bool            `json:"lora_bias"`
	RankPattern       lora.Patterns   `json:"rank_pattern"`
	AlphaPattern      lora.Patterns   `json:"alpha_pattern"`
}

// ParseAdapterConfig reads PEFT adapter_config.json text into a LoRA
// configuration for a model: target_modules as a list of names (matched as
// PEFT does, by the whole module name or its last components), a regular
// expression (matched against the whole name) or "all-linear";
// exclude_modules in the same forms; rank_pattern and alpha_pattern; every
// init_lora_weights value. It refuses clearly what it cannot honour: other
// adapter types, DoRA, trained biases, modules_to_save, layer selection or
// replication, targets that cover a projection in some layers only, and
// initializations that rewrite the base weights (PiSSA, OLoRA, CorDA, LoftQ).
func ParseAdapterConfig(b []byte, mc *model.Config) (lora.Config, error) {
	var pc peftConfig
	if err := json.Unmarshal(b, &pc); err != nil {
		return lora.Config{}, fmt.Errorf("parse %s: %w", AdapterConfigFile, err)
	}
	if pc.PEFTType != "LORA" {
		return lora.Config{}, fmt.Errorf("peft_type %q, want LORA", pc.PEFTType)
	}
	switch {
	case pc.UseDoRA:
		return lora.Config{}, fmt.Errorf("use_dora: DoRA adapters are not supported")
	case pc.FanInFanOut:
		return lora.Config{}, fmt.Errorf("fan_in_fan_out: transposed (Conv1D) weights are not supported")
	case (pc.Bias != "" && pc.Bias != "none") || pc.LoRABias:
		return lora.Config{}, fmt.Errorf("bias %q / lora_bias: trained biases are not supported", pc.Bias)
	case len(pc.ModulesToSave) > 0:
		return lora.Config{}, fmt.Errorf("modules_to_save %v: fully trained modules are not supported", pc.ModulesToSave)
	case !isNull(pc.LayersToTransform) || !isNull(pc.LayerReplication):
		return lora.Config{}, fmt.Errorf("layers_to_transform / layer_replication are not supported")
	}
	if err := checkInit(pc.InitLoRAWeights); err != nil {
		return lora.Config{}, err
	}
	targets, err := resolveTargets(pc.TargetModules, pc.ExcludeModules, mc)
	if err != nil {
		return lora.Config{}, err
	}
	cfg := lora.Config{Rank: pc.R, Alpha: pc.LoRAAlpha, Dropout: pc.LoRADropout, RSLoRA: pc.UseRSLoRA, Targets: targets,
		RankPattern: pc.RankPattern, AlphaPattern: pc.AlphaPattern}
	if err := cfg.Validate(); err != nil {
		return lora.Config{}, err
	}
	return cfg, nil
}

func isNull(r json.RawMessage) bool {
	s := strings.TrimSpace(string(r))
	return s == "" || s == "null" || s == "[]"
}

// checkInit accepts the init_lora_weights values that only set the adapter's
// starting values (the saved A and B are the trained ones either way).
func checkInit(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("init_lora_weights %s: want a bool or a name", raw)
	}
	switch {
	case s == "gaussian" || s == "eva" || s == "orthogonal":
		return nil
	case s == "pissa" || strings.HasPrefix(s, "pissa_niter_") || s == "olora" || s == "corda" || s == "loftq":
		return fmt.Errorf("init_lora_weights %q: the adapter applies to PEFT's rewritten residual base weights, not to the base model; "+
			"save it with PEFT's path_initial_model_for_weight_conversion to get a plain LoRA adapter", s)
	}
	return fmt.Errorf("init_lora_weights %q is not a PEFT initialization this reader knows", s)
}

// matcher is one of target_modules' or exclude_modules' forms.
type matcher struct {
	names []string       // list form: the name or its dotted suffix
	re    *regexp.Regexp // string form: the whole name
	all   bool           // "all-linear"
}

func parseMatcher(field string, raw json.RawMessage) (*matcher, error) {
	if isNull(raw) {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return &matcher{names: list}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s %s: want a list of names or a regular expression", field, raw)
	}
	if s == "all-linear" {
		return &matcher{all: true}, nil
	}
	re, err := regexp.Compile(`^(?:` + s + `)$`)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a regular expression this reader accepts: %w", field, s, err)
	}
	return &matcher{re: re}, nil
}

func (m *matcher) match(name string) bool {
	switch {
	case m == nil:
		return false
	case m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(name)
	}
	for _, n := range m.names {
		if name == n || strings.HasSuffix(name, "."+n) {
			return true
		}
	}
	return false
}

// resolveTargets turns target_modules/exclude_modules into the projections
// adapted in every layer, refusing a projection adapted in some layers only
// and list entries that name nothing of this model.
func resolveTargets(rawT, rawX json.RawMessage, mc *model.Config) ([]string, error) {
	tm, err := parseMatcher("target_modules", rawT)
	if err != nil {
		return nil, err
	}
	if tm == nil {
		return nil, fmt.Errorf("target_modules missing")
	}
	xm, err := parseMatcher("exclude_modules", rawX)
	if err != nil {
		return nil, err
	}
	var out []string
	used := map[string]bool{}
	for _, mod := range lora.AllModules() {
		n, have := 0, 0
		for l := 0; l < mc.NumLayers; l++ {
			if !lora.Exists(mc, l, mod) {
				continue
			}
			have++
			name := lora.ModuleName(l, mod)
			if tm.match(name) && !xm.match(name) {
				n++
			}
			for _, t := range tm.names {
				if name == t || strings.HasSuffix(name, "."+t) {
					used[t] = true
				}
			}
		}
		switch {
		case n > 0 && n == have:
			out = append(out, mod)
		case n > 0:
			return nil, fmt.Errorf("target_modules cover %s in %d of %d layers; per-layer targets are not supported", mod, n, have)
		}
	}
	for _, t := range tm.names {
		if !used[t] {
			return nil, fmt.Errorf("target_modules entry %q names no projection of this model (supported: %s)", t, strings.Join(lora.AllModules(), ", "))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("target_modules select no projection of this model")
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(lora.AllModules(), a) - slices.Index(lora.AllModules(), b) })
	return out, nil
}
