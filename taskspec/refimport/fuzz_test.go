package refimport

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/taskspec"
	"gopkg.in/yaml.v3"
)

// FuzzParseSplits: any bytes give a parsed split file or an error, and a
// parsed one names only valid query numbers and contained patterns.
func FuzzParseSplits(f *testing.F) {
	f.Add([]byte(`{"designated_train":[1,2],"test":[3],"excluded_from_teacher_collection":{"2":"why"},"domains":{"x":[1]}}`))
	f.Add([]byte(`{"test":[1],"task_prompt_pattern":"bare/q{task_id}.txt"}`))
	f.Add([]byte(`{"test":[1e3]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSplits(b)
		if err != nil {
			return
		}
		for _, q := range s.All() {
			if q <= 0 || q > 999999999 {
				t.Fatalf("query %d accepted", q)
			}
		}
		for _, p := range []string{File(s.PromptPattern, 7), File(s.InitialPattern, 7)} {
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "..") || strings.Contains(p, "/../") {
				t.Fatalf("pattern escapes: %q", p)
			}
		}
	})
}

// FuzzQueryFiles: a bare query that parses survives task.yaml byte for
// byte; an initial file that parses is cut losslessly at a valid design.
func FuzzQueryFiles(f *testing.F) {
	f.Add([]byte("task – with \\n escapes\n\nUse uv.  \n"), []byte("task\n\n"+workflow.Header+" \n[{\"agent_id\":\"a\",\"role\":\"r\",\"instruction\":\"i\"}]\n\ntrailer "))
	f.Add([]byte("x"), []byte(workflow.Header+"[]"))
	f.Fuzz(func(t *testing.T, bare, initial []byte) {
		if p, err := ParseBare(bare); err == nil {
			doc, err := yaml.Marshal(specDoc{ID: "q1", Prompt: p, Split: "train", ReferenceID: "1", Workflow: "w", Limits: limitDoc{EpisodeWallTime: "1h", AgentTurns: 1}})
			if err != nil {
				t.Fatal(err)
			}
			s, err := taskspec.Parse(doc)
			if err != nil {
				t.Fatalf("imported spec does not parse: %v\n%s", err, doc)
			}
			if s.Prompt != p {
				t.Fatalf("prompt changed in task.yaml: %q -> %q", p, s.Prompt)
			}
		}
		in, err := ParseInitial(initial)
		if err != nil {
			return
		}
		if in.Before+in.Design+in.After != string(initial) {
			t.Fatal("the cut loses bytes")
		}
		if _, err := workflow.Parse(in.Design + "\n"); err != nil {
			t.Fatalf("design does not parse: %v", err)
		}
	})
}
