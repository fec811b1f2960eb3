package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"
)

// fact is one parameter in testdata/qwen-code-0.20.0-tools.json.
type fact struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Required   bool     `json:"required"`
	Integral   bool     `json:"integral"`
	Min        *int64   `json:"min"`
	Max        *int64   `json:"max"`
	MinLength  int      `json:"min_length"`
	Format     string   `json:"format"`
	Enum       []string `json:"enum"`
	Items      *fact    `json:"items"`
	Properties []fact   `json:"properties"`
}

type facts struct {
	Legacy map[string]string `json:"legacy_names"`
	Tools  []struct {
		Name   string `json:"name"`
		Params []fact `json:"params"`
	} `json:"tools"`
}

func loadFacts(t *testing.T) facts {
	t.Helper()
	b, err := os.ReadFile("testdata/qwen-code-0.20.0-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var f facts
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("facts: %v", err)
	}
	return f
}

// samples are valid values for one parameter, the first being the plain one.
func samples(f fact) []any {
	switch f.Type {
	case "boolean":
		return []any{true, false}
	case "number", "integer":
		lo := int64(0)
		if f.Min != nil {
			lo = *f.Min
		}
		out := []any{json.Number(fmt.Sprint(lo + 10)), json.Number(fmt.Sprint(lo)), json.Number(fmt.Sprintf("%d.0", lo+1))}
		if f.Max != nil {
			out = append(out, json.Number(fmt.Sprint(*f.Max)))
		}
		return out
	case "array":
		one := samples(*f.Items)
		two := []any{one[0], one[len(one)-1]}
		if f.Items.Type == "object" {
			two = []any{withID(one[0], "a"), withID(one[len(one)-1], "b")}
		}
		return []any{[]any{one[0]}, []any{}, two}
	case "object":
		var out []any
		for _, sub := range shapes(f.Properties) {
			out = append(out, sub)
		}
		return out
	}
	if len(f.Enum) > 0 {
		out := make([]any, len(f.Enum))
		for i, e := range f.Enum {
			out[i] = e
		}
		return out
	}
	switch f.Format {
	case "absolute_path":
		return []any{"/workspace/src/a.py", "/workspace"}
	case "page_range":
		return []any{"1-5", "3", "2-2"}
	case "regexp":
		return []any{`def \w+\(`, "TODO"}
	}
	return []any{"check the tests", "x"}
}

// withID gives a todo item object a distinct id.
func withID(v any, id string) any {
	m := map[string]any{}
	for k, x := range v.(map[string]any) {
		m[k] = x
	}
	if _, ok := m["id"]; ok {
		m["id"] = id
	}
	return m
}

// shapes returns argument objects covering every subset of the optional
// parameters (each at its plain value) and every sample of every parameter.
func shapes(ps []fact) []map[string]any {
	var req, opt []fact
	for _, p := range ps {
		if p.Required {
			req = append(req, p)
		} else {
			opt = append(opt, p)
		}
	}
	base := func() map[string]any {
		m := map[string]any{}
		for _, p := range req {
			m[p.Name] = samples(p)[0]
		}
		return m
	}
	var out []map[string]any
	for mask := 0; mask < 1<<len(opt); mask++ {
		m := base()
		for i, p := range opt {
			if mask&(1<<i) != 0 {
				m[p.Name] = samples(p)[0]
			}
		}
		out = append(out, m)
	}
	for _, p := range ps {
		for _, v := range samples(p)[1:] {
			m := base()
			m[p.Name] = v
			out = append(out, m)
		}
	}
	return out
}

// Every call shape qwen-code 0.20.0's schemas allow parses and validates.
func TestConformance(t *testing.T) {
	f := loadFacts(t)
	n := 0
	for _, tool := range f.Tools {
		names := []string{tool.Name}
		for old, cur := range f.Legacy {
			if cur == tool.Name {
				names = append(names, old)
			}
		}
		for _, name := range names {
			for _, args := range shapes(tool.Params) {
				b, err := json.Marshal(args)
				if err != nil {
					t.Fatal(err)
				}
				spec, a, err := Parse(name, string(b))
				if err == nil {
					err = Validate(spec, a)
				}
				if err != nil {
					t.Errorf("%s %s: %v", name, b, err)
				}
				n++
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d call shapes generated", n)
	}
	t.Logf("%d call shapes accepted", n)
}

// What mass advertises is what the facts say: same tools, parameter names,
// required sets, JSON types and enums.
func TestAdvertisedSchemasMatchFacts(t *testing.T) {
	f := loadFacts(t)
	var want, got []string
	for _, tool := range f.Tools {
		want = append(want, tool.Name)
		spec, ok := Lookup(tool.Name)
		if !ok {
			t.Errorf("mass has no tool %s", tool.Name)
			continue
		}
		params := OpenAI([]Spec{spec})[0].Function.Parameters.(map[string]any)
		compareObject(t, tool.Name, tool.Params, params)
	}
	for _, s := range Orchestrator() {
		got = append(got, s.Name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	for old, cur := range f.Legacy {
		if s, ok := Lookup(old); !ok || s.Name != cur {
			t.Errorf("legacy name %s resolves to %q, want %s", old, s.Name, cur)
		}
	}
}

func compareObject(t *testing.T, where string, fs []fact, schema map[string]any) {
	t.Helper()
	props := schema["properties"].(map[string]any)
	req, _ := schema["required"].([]string)
	if len(props) != len(fs) {
		t.Errorf("%s: %d properties, want %d", where, len(props), len(fs))
	}
	for _, p := range fs {
		ps, ok := props[p.Name].(map[string]any)
		if !ok {
			t.Errorf("%s: no parameter %s", where, p.Name)
			continue
		}
		if got := ps["type"]; got != p.Type {
			t.Errorf("%s.%s: type %v, want %s", where, p.Name, got, p.Type)
		}
		if got := slices.Contains(req, p.Name); got != p.Required {
			t.Errorf("%s.%s: required %v, want %v", where, p.Name, got, p.Required)
		}
		if e, _ := ps["enum"].([]string); !slices.Equal(e, p.Enum) {
			t.Errorf("%s.%s: enum %v, want %v", where, p.Name, e, p.Enum)
		}
		switch p.Type {
		case "object":
			compareObject(t, where+"."+p.Name, p.Properties, ps)
		case "array":
			items := ps["items"].(map[string]any)
			if items["type"] != p.Items.Type {
				t.Errorf("%s.%s: items %v, want %s", where, p.Name, items["type"], p.Items.Type)
			}
			if p.Items.Type == "object" {
				compareObject(t, where+"."+p.Name+"[]", p.Items.Properties, items)
			}
		}
	}
}

// Shapes the schemas do not allow are argument errors: each required
// parameter left out, and each parameter given a value of another type.
func TestConformanceRejects(t *testing.T) {
	f := loadFacts(t)
	wrong := map[string]any{"string": json.Number("7"), "number": "7", "boolean": "yes", "array": "a", "object": []any{}}
	for _, tool := range f.Tools {
		base := shapes(tool.Params)[0]
		for _, p := range tool.Params {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			if p.Required {
				delete(m, p.Name)
				expectArgError(t, tool.Name, m)
			}
			m[p.Name] = wrong[p.Type]
			expectArgError(t, tool.Name, m)
		}
	}
}

func expectArgError(t *testing.T, name string, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	spec, a, err := Parse(name, string(b))
	if err == nil {
		err = Validate(spec, a)
	}
	if err == nil {
		t.Errorf("%s %s accepted, want an argument error", name, b)
	}
}
