package lora

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
)

// Pattern is one entry of PEFT's rank_pattern or alpha_pattern: a module key
// (a name or a regular expression) and the rank or alpha it sets.
type Pattern struct {
	Key   string
	Value float64
}

// Patterns keep the order of the file, because PEFT takes the first key that
// matches a module.
type Patterns []Pattern

// Lookup returns the value of the first key matching the module name as
// PEFT's get_pattern_key does: the whole key, optionally preceded by any
// dotted prefix (^(.*\.)?(key)$).
func (ps Patterns) Lookup(name string) (float64, bool, error) {
	for _, p := range ps {
		re, err := regexp.Compile(`^(.*\.)?(` + p.Key + `)$`)
		if err != nil {
			return 0, false, fmt.Errorf("pattern %q: %w", p.Key, err)
		}
		if re.MatchString(name) {
			return p.Value, true, nil
		}
	}
	return 0, false, nil
}

// UnmarshalJSON reads a JSON object in its order.
func (ps *Patterns) UnmarshalJSON(b []byte) error {
	*ps = nil
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("pattern: want a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("pattern: %w", err)
		}
		key, _ := t.(string)
		var v float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("pattern %q: want a number: %w", key, err)
		}
		*ps = append(*ps, Pattern{Key: key, Value: v})
	}
	_, err := dec.Token()
	return err
}

// MarshalJSON writes an object in order ({} when empty).
func (ps Patterns) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(p.Key)
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func (ps Patterns) validate(what string, integer bool) error {
	for _, p := range ps {
		if _, err := regexp.Compile(`^(.*\.)?(` + p.Key + `)$`); err != nil {
			return fmt.Errorf("%s key %q is not a regular expression this reader accepts: %w", what, p.Key, err)
		}
		if !(p.Value > 0) || (integer && p.Value != math.Trunc(p.Value)) {
			return fmt.Errorf("%s %q: value %v must be a positive %s", what, p.Key, p.Value, map[bool]string{true: "integer", false: "number"}[integer])
		}
	}
	return nil
}

// ModuleName is the PEFT module key of a projection, e.g.
// model.layers.3.self_attn.q_proj.
func ModuleName(layer int, module string) string {
	return fmt.Sprintf("model.layers.%d.%s", layer, ModulePath(module))
}

// RankOf is the rank of one layer's module: rank_pattern's, else Rank.
func (c Config) RankOf(layer int, module string) int {
	if v, ok, _ := c.RankPattern.Lookup(ModuleName(layer, module)); ok {
		return int(v)
	}
	return c.Rank
}

// ScalingOf is alpha/r (or alpha/√r with rsLoRA) of one layer's module, with
// alpha_pattern's alpha and rank_pattern's rank where they match.
func (c Config) ScalingOf(layer int, module string) float64 {
	alpha := c.Alpha
	if v, ok, _ := c.AlphaPattern.Lookup(ModuleName(layer, module)); ok {
		alpha = v
	}
	r := float64(c.RankOf(layer, module))
	if c.RSLoRA {
		return alpha / math.Sqrt(r)
	}
	return alpha / r
}

// Uniform reports whether every module has Rank and Alpha (no patterns).
func (c Config) Uniform() bool { return len(c.RankPattern) == 0 && len(c.AlphaPattern) == 0 }
