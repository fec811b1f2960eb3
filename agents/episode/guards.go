package episode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/taskspec"
)

// GuardsFile is the guard record (integrity, attempts, shadow copies).
const GuardsFile = guard.FileName

// hostInputs maps task inputs onto host paths.
func (e *run) hostInputs(list []taskspec.Input) []sandbox.Input { return hostInputs(e.opts.Task, list) }

// hashShipped records the protected files as shipped, before any agent runs.
func (e *run) hashShipped() {
	f, err := guard.Shipped(e.hostInputs(e.opts.Task.Inputs), e.opts.Task.ProtectedPaths)
	if err != nil {
		e.log.Warn("hash protected files", "err", err)
		return
	}
	if f == nil {
		f = []guard.File{} // none protected: checked, nothing to change (nil means hashing failed)
	}
	e.shipped = f
}

// gradeWorkspace runs the task's grader on the exported workspace in a
// container of its own; the grade never reaches a model.
func (e *run) gradeWorkspace(ctx context.Context) *grade.Grade {
	g := e.opts.Task.Grader
	if g == nil {
		return nil
	}
	e.prog.stage("grading")
	start := time.Now()
	f, err := os.Open(filepath.Join(e.opts.Dir, ExportFile))
	if err != nil {
		return &grade.Grade{Reason: fmt.Sprintf("no workspace export to grade: %v", err)}
	}
	defer f.Close()
	gr := gradeIn(ctx, e.deps, e.opts.Task, GradeWorkspace(e.opts.ID), f, start)
	return &gr
}

// coveredInput reports an input that holds a protected path (input "data"
// with protected "data/labels.csv"): it is copied whole, the export's
// other files under it are kept.
func coveredInput(dest string, protected []string) bool {
	d := guard.Clean(dest)
	for _, p := range protected {
		if strings.HasPrefix(guard.Clean(p), d+"/") {
			return true
		}
	}
	return false
}

// checkGuards computes guards.json from the closed ledger, the agents'
// manifests, the export and the shipped protected files.
func (e *run) checkGuards(exported bool) (*guard.Summary, error) {
	start := time.Now()
	lf, err := os.Open(filepath.Join(e.opts.Dir, LedgerFile))
	if err != nil {
		return nil, fmt.Errorf("guards: %w", err)
	}
	recs, err := ledger.Read(lf)
	lf.Close()
	if err != nil {
		return nil, fmt.Errorf("guards: read ledger: %w", err)
	}
	in := guard.Inputs{Records: recs, Protected: e.opts.Task.ProtectedPaths, Hidden: e.opts.Task.HiddenDests(),
		Shipped: e.shipped, Exported: e.exported, Manifests: e.agentManifests(), NoExport: !exported || e.shipped == nil}
	if !in.NoExport {
		tf, err := os.Open(filepath.Join(e.opts.Dir, ExportFile))
		if err != nil {
			return nil, fmt.Errorf("guards: %w", err)
		}
		skip := append(append([]string{}, in.Protected...), in.Hidden...)
		in.Final, err = guard.ReadExport(tf, skip)
		tf.Close()
		if err != nil {
			return nil, fmt.Errorf("guards: %w", err)
		}
	}
	rep := guard.Check(in)
	if err := writeJSON(filepath.Join(e.opts.Dir, GuardsFile), rep); err != nil {
		return nil, err
	}
	s := rep.Summary()
	s.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return &s, nil
}

// agentManifests reads manifests/<agent>.json as absolute path -> sha256.
func (e *run) agentManifests() map[string]map[string]string {
	out := map[string]map[string]string{}
	files, _ := filepath.Glob(filepath.Join(e.opts.Dir, ManifestsDir, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		m, err := audit.ParseManifest(b)
		if err != nil {
			continue
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = m
	}
	return out
}
