package search

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/workflow"
)

// pySplit re-types the reference's _read_query_template and
// _render_query_with_design in Python, as an oracle for the split and the
// rendered bytes.
const pySplit = `import json, sys
start_marker = "Create an agent team with following agent candidates to solve this problem:"
end_marker = "Use uv for all Python workflows"
out = []
for raw, design in json.load(sys.stdin):
    s = raw.find(start_marker)
    e = raw.rfind(end_marker)
    before, block, after = raw[:s], raw[s:e].strip(), raw[e:]
    task = before.rstrip()
    if "\\n" in task:
        task = task.replace("\\n", "\n")
    rendered = f"{before}{design.strip()}\n\n{after.lstrip()}"
    query = raw if design.strip() == block else rendered
    out.append([before, block, after, task.strip(), rendered, query.rstrip() + "\n\n" + "## Directive\n"])
json.dump(out, sys.stdout)`

func TestQueryTemplateMatchesReference(t *testing.T) {
	raw, err := os.ReadFile("testdata/template/query7_ourTeam.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := [][2]string{
		{string(raw), workflow.Header + "\n[]\n\n  "},
		{"Task \\n two.\r\n\t" + workflow.Header + " x\n" + EndMarker + " inside\n\n" + EndMarker + "  tail \n", "\u00a0" + workflow.Header + " y\u2028"},
		{"é" + workflow.Header + EndMarker, workflow.Header},
		{string(raw), ""}, // v0: its own design, replaced below
	}
	own, _ := ParseQueryTemplate(string(raw))
	cases[3][1] = "\n" + own.Design + "\n"
	var gots [][6]string
	for _, c := range cases {
		q, err := ParseQueryTemplate(c[0])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c[0], q.Before) || !strings.HasSuffix(c[0], q.After) {
			t.Fatalf("split loses bytes: %+v", q)
		}
		gots = append(gots, [6]string{q.Before, q.Design, q.After, q.TaskText(), q.Render(c[1]), q.Teacher(c[1], "## Directive\n")})
	}
	if q, _ := ParseQueryTemplate(string(raw)); !strings.Contains(q.Design, "Use uv for all Python workflows when you run code") || !strings.HasPrefix(q.After, EndMarker+"—") {
		t.Fatalf("the last end marker did not end the design: %q", q.After)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", pySplit)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want [][6]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i := range cases {
		for j, name := range []string{"before", "design", "after", "task text", "rendered query", "teacher prompt"} {
			if gots[i][j] != want[i][j] {
				t.Errorf("case %d %s:\n got %q\nwant %q", i, name, gots[i][j], want[i][j])
			}
		}
	}
}

func TestQueryTemplateRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"no start":  "task " + EndMarker,
		"no end":    "task " + workflow.Header + " [...]",
		"end first": EndMarker + " " + workflow.Header,
		"nul":       "a\x00" + workflow.Header + EndMarker,
		"not utf8":  "\xff" + workflow.Header + EndMarker,
		"too large": strings.Repeat("x", MaxQueryBytes) + workflow.Header + EndMarker,
	} {
		if _, err := ParseQueryTemplate(raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseQueryTemplate(f *testing.F) {
	raw, _ := os.ReadFile("testdata/template/query7_ourTeam.txt")
	f.Add(string(raw), "design")
	f.Add(workflow.Header+EndMarker, "")
	f.Fuzz(func(t *testing.T, raw, design string) {
		q, err := ParseQueryTemplate(raw)
		if err != nil {
			return
		}
		if !strings.HasPrefix(raw, q.Before) || !strings.HasSuffix(raw, q.After) || !strings.HasPrefix(q.After, EndMarker) ||
			!strings.HasPrefix(q.Design, workflow.Header) {
			t.Fatalf("split %+v of %q", q, raw)
		}
		if r := q.Render(design); !strings.HasPrefix(r, q.Before) || !strings.Contains(r, strings.TrimFunc(design, pySpace)) {
			t.Fatalf("render %q", r)
		}
	})
}

// The results/*.json appendix reads agent-written files from an export.
func FuzzResultsAppendix(f *testing.F) {
	f.Add("results/a.json", `{"x": 1}`, 10, 30)
	f.Add("results/../x.json", "\xff\r\n", 0, 0)
	f.Fuzz(func(t *testing.T, name, body string, perFile, total int) {
		if perFile < 0 || total < 0 || perFile > 1<<16 || total > 1<<20 {
			return
		}
		path := t.TempDir() + "/x.tar"
		if err := writeTarFile(path, map[string]string{name: body, "results/z.json": body}); err != nil {
			return
		}
		out, err := ResultsAppendix(path, "query202_ourTeam", perFile, total)
		if err != nil {
			return
		}
		if out == "" {
			t.Fatal("empty appendix")
		}
	})
}
