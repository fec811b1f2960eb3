package refimport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/taskspec"
)

// File names inside an imported task folder.
const (
	PromptFile    = "prompt.txt"
	WorkflowFile  = "workflow.txt"
	DirectiveFile = "directive.txt"
	QueryFile     = "query.txt" // the initial _ourTeam file, the task's query template
	SpecFile      = "task.yaml"
	splitsName    = "splits.json"
	directiveName = "teacher_directive.txt"
)

// Limits are what the reference's task files do not say: mass's episode
// bounds for every imported task.
type Limits struct {
	EpisodeWallTime string // a Go duration, e.g. "4h"
	AgentTurns      int
	CPUs            float64
	Memory          string // e.g. "8GiB"
	// Image is the image profile every task's boxes run in (the spec's
	// `image:`: base, research or a built profile); "" leaves it unset.
	Image string
}

// DefaultLimits bound a research episode: the reference runs its episodes
// with 2 threads per math library, hence 2 CPUs.
var DefaultLimits = Limits{EpisodeWallTime: "4h", AgentTurns: 400, CPUs: 2, Memory: "8GiB"}

// task is one query read and checked, ready to write.
type task struct {
	rep     TaskReport
	prompt  string
	initial Initial
}

// Import reads the reference-layout folder src (the reference's tasks/
// folder, or a checkout holding tasks/) and writes one task folder per
// query under out. Everything is read and checked before anything is
// written; an existing task folder is never overwritten.
func Import(src, out string, lim Limits) (*Report, error) {
	src = resolveSource(src)
	if err := checkLimits(lim); err != nil {
		return nil, err
	}
	sb, err := readRegular(filepath.Join(src, splitsName), MaxSplitsBytes)
	if err != nil {
		return nil, err
	}
	splits, err := ParseSplits(sb)
	if err != nil {
		return nil, err
	}
	directive, err := readDirective(src)
	if err != nil {
		return nil, err
	}
	rep := &Report{Source: src, Out: out, NoEquivalent: setNotes(splits, directive != "")}
	var tasks []task
	for _, q := range splits.All() {
		t, err := readTask(src, splits, q)
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", q, err)
		}
		t.rep.Spec = filepath.Join(out, t.rep.ID, SpecFile)
		if _, err := os.Lstat(filepath.Join(out, t.rep.ID)); err == nil {
			return nil, fmt.Errorf("query %d: %s already exists; import into an empty folder", q, filepath.Join(out, t.rep.ID))
		}
		tasks = append(tasks, t)
	}
	for _, t := range tasks {
		if err := writeTask(out, t, directive, lim); err != nil {
			return nil, fmt.Errorf("query %d: %w", t.rep.Query, err)
		}
		if _, err := taskspec.Load(t.rep.Spec); err != nil {
			return nil, fmt.Errorf("query %d: the imported spec does not validate: %w", t.rep.Query, err)
		}
		rep.Tasks = append(rep.Tasks, t.rep)
	}
	return rep, nil
}

// resolveSource accepts the tasks/ folder itself or a checkout above it.
func resolveSource(src string) string {
	if _, err := os.Stat(filepath.Join(src, splitsName)); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(src, "tasks", splitsName)); err == nil {
			return filepath.Join(src, "tasks")
		}
	}
	return src
}

func readDirective(src string) (string, error) {
	b, err := readRegular(filepath.Join(src, directiveName), prompts.MaxDirectiveBytes+1)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if err := prompts.CheckDirective(string(b)); err != nil {
		return "", fmt.Errorf("%s: %w", directiveName, err)
	}
	return string(b), nil
}

func readTask(src string, s *Splits, q int) (task, error) {
	t := task{rep: TaskReport{Query: q, ID: "query" + strconv.Itoa(q), Domain: Domain(q), JudgedOnly: true}}
	bare, err := readRegular(filepath.Join(src, filepath.FromSlash(File(s.PromptPattern, q))), MaxQueryBytes)
	if err != nil {
		return t, err
	}
	if t.prompt, err = ParseBare(bare); err != nil {
		return t, fmt.Errorf("%s: %w", File(s.PromptPattern, q), err)
	}
	ib, err := readRegular(filepath.Join(src, filepath.FromSlash(File(s.InitialPattern, q))), MaxQueryBytes)
	if err != nil {
		return t, err
	}
	if t.initial, err = ParseInitial(ib); err != nil {
		return t, fmt.Errorf("%s: %w", File(s.InitialPattern, q), err)
	}
	t.rep.PromptBytes = len(t.prompt)
	t.rep.DesignAgents = t.initial.Agents
	t.rep.AfterDesign = t.initial.After
	t.rep.Split, t.rep.Notes = split(s, q)
	t.rep.Notes = append(t.rep.Notes, taskNotes(t)...)
	return t, nil
}

// readRegular reads a regular file (no symbolic link) of at most max bytes.
func readRegular(p string, max int) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, fmt.Errorf("reference task set: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reference task set: %s is not a regular file", p)
	}
	if st.Size() > int64(max) {
		return nil, fmt.Errorf("reference task set: %s is %d bytes; the limit is %d", p, st.Size(), max)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reference task set: %w", err)
	}
	return b, nil
}
