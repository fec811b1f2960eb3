package workflow

import (
	"strings"
	"testing"
)

func TestParseRenderRoundTrip(t *testing.T) {
	in := "  " + Header + "\n```json\n[{\"agent_id\":\"a1\",\"role\":\"R <&>\",\"instruction\":\"do x; then hand to a2\"}]\n```\n"
	w, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	out := w.Render()
	w2, err := Parse(out)
	if err != nil {
		t.Fatalf("reparse: %v", err)
	}
	if w2.Render() != out {
		t.Fatalf("render not stable:\n%s\n%s", out, w2.Render())
	}
	if !strings.Contains(out, "R <&>") {
		t.Fatalf("html escaped: %s", out)
	}
}

func TestParseRejects(t *testing.T) {
	good := `[{"agent_id":"a","role":"r","instruction":"i"}]`
	cases := map[string]string{
		"no header":    good,
		"trailing":     Header + good + " and more",
		"unknown key":  Header + `[{"agent_id":"a","role":"r","instruction":"i","x":1}]`,
		"duplicate":    Header + `[{"agent_id":"a","role":"r","instruction":"i"},{"agent_id":"a","role":"r","instruction":"i"}]`,
		"empty":        Header + `[]`,
		"bad id":       Header + `[{"agent_id":"../x","role":"r","instruction":"i"}]`,
		"empty instr":  Header + `[{"agent_id":"a","role":"r","instruction":" "}]`,
		"not an array": Header + `{"agent_id":"a"}`,
		"huge":         Header + strings.Repeat(" ", MaxBytes),
	}
	for name, in := range cases {
		if _, err := Parse(in); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, err := Parse(Header + good); err != nil {
		t.Fatal(err)
	}
}

func TestGenericIsValid(t *testing.T) {
	if _, err := Parse(Generic().Render()); err != nil {
		t.Fatal(err)
	}
}

func TestVersionsAndPointer(t *testing.T) {
	dir := t.TempDir()
	v := Versions{Dir: dir}
	if err := v.Put(0, Generic()); err != nil {
		t.Fatal(err)
	}
	if err := v.Put(0, Generic()); err != nil {
		t.Fatalf("idempotent put: %v", err)
	}
	other := Workflow{Agents: []Agent{{AgentID: "x", Role: "r", Instruction: "i"}}}
	if err := v.Put(0, other); err == nil {
		t.Fatal("overwrote v0")
	}
	if err := v.Put(2, other); err != nil {
		t.Fatal(err)
	}
	ks, err := v.List()
	if err != nil || len(ks) != 2 || ks[0] != 0 || ks[1] != 2 {
		t.Fatalf("list %v %v", ks, err)
	}
	got, err := v.Get(2)
	if err != nil || got.Agents[0].AgentID != "x" {
		t.Fatalf("get %v %v", got, err)
	}
	if err := WritePointer(dir, Pointer{TaskID: "t", SearchID: "s", Version: 2}); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPointer(dir)
	if err != nil || p.Version != 2 || p.SearchID != "s" {
		t.Fatalf("pointer %v %v", p, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Generic().Render())
	f.Add(Header + "```json\n[]\n```")
	f.Add(Header + `[{"agent_id":"a","role":"r","instruction":"i"}] x`)
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		w, err := Parse(s)
		if err != nil {
			return
		}
		out := w.Render()
		w2, err := Parse(out)
		if err != nil {
			t.Fatalf("rendered workflow does not parse: %v\n%s", err, out)
		}
		if w2.Render() != out {
			t.Fatalf("render not byte-stable")
		}
	})
}

// A design as the reference accepts it: its text renders back as written
// and parses to the same design again.
func FuzzParseDesign(f *testing.F) {
	f.Add(Generic().Render())
	f.Add(Header + "\n" + `[{"agent_id":"a","role":"r","instruction":"i","output_to_orchestrator":"x"}] and prose`)
	f.Add(Header)
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseDesign(s)
		if err != nil {
			return
		}
		out := w.Render()
		if out != strings.TrimSpace(s)+"\n" || !strings.HasPrefix(out, Header) {
			t.Fatalf("render %q of %q", out, s)
		}
		again, err := ParseDesign(out)
		if err != nil || again.Render() != out || again.Strict() != w.Strict() {
			t.Fatalf("reparse: %v", err)
		}
	})
}

func TestParseDesignFreeText(t *testing.T) {
	free := Header + "\n" + `[{"agent_id":"a","role":"r","instruction":"i","output_to_orchestrator":"table"}]` + "\nThen recall a."
	w, err := ParseDesign(free)
	if err != nil || w.Strict() || w.Render() != free+"\n" {
		t.Fatalf("%+v %v", w, err)
	}
	if _, err := Parse(free); err == nil {
		t.Fatal("the strict parser accepted a free design")
	}
	for _, bad := range []string{"", "Make a team.", Header + "  \n", Header + "\x00"} {
		if _, err := ParseDesign(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	g := Generic()
	w, err = ParseDesign("  " + g.Render())
	if err != nil || !w.Strict() || len(w.Agents) != len(g.Agents) || w.Render() != g.Render() {
		t.Fatalf("strict design: %+v %v", w, err)
	}
}
