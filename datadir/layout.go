// Package datadir is the one description of massd's data directory: where
// the database, tasks, jobs, episodes, training runs, datasets, search
// results and generations live, and the one rule for the ids that name
// them. Job kinds receive a Layout, never a raw directory, so no package
// spells a path under the data dir itself. docs/formats.md describes the
// files inside each directory.
package datadir

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"strings"
)

// Layout locates everything under one data directory. The zero value is
// not usable; make one with New.
type Layout struct {
	Root string // the data directory itself
}

// New returns the layout of the data directory root.
func New(root string) Layout { return Layout{Root: root} }

// Names of the entries directly under the data directory.
const (
	DBFile         = "massd.db"
	LockFile       = "massd.lock"
	TasksDir       = "tasks"
	JobsDir        = "jobs"
	EpisodesDir    = "episodes"
	RunsDir        = "runs"
	DatasetsDir    = "datasets"
	SearchDir      = "search"
	GenerationsDir = "generations"
	EvalsDir       = "evals"
	ServingDir     = "serving"
)

// DB is the SQLite database.
func (l Layout) DB() string { return filepath.Join(l.Root, DBFile) }

// Lock is the file massd locks so that two daemons never share the directory.
func (l Layout) Lock() string { return filepath.Join(l.Root, LockFile) }

// Tasks is the directory of stored tasks.
func (l Layout) Tasks() string { return filepath.Join(l.Root, TasksDir) }

// Task is the directory of one stored task: its spec (taskspec.FileName)
// and inputs.
func (l Layout) Task(id string) string { return filepath.Join(l.Root, TasksDir, id) }

// Jobs is the directory of job work directories.
func (l Layout) Jobs() string { return filepath.Join(l.Root, JobsDir) }

// Job is the work directory of one job.
func (l Layout) Job(id string) string { return filepath.Join(l.Root, JobsDir, id) }

// Episodes is the directory of episode records.
func (l Layout) Episodes() string { return filepath.Join(l.Root, EpisodesDir) }

// Episode is the record directory of one episode.
func (l Layout) Episode(id string) string { return filepath.Join(l.Root, EpisodesDir, id) }

// Runs is the directory of training runs.
func (l Layout) Runs() string { return filepath.Join(l.Root, RunsDir) }

// Run is the output directory of one training run.
func (l Layout) Run(name string) string { return filepath.Join(l.Root, RunsDir, name) }

// Datasets is the directory of built SFT datasets.
func (l Layout) Datasets() string { return filepath.Join(l.Root, DatasetsDir) }

// Dataset is the directory of one dataset.
func (l Layout) Dataset(name string) string { return filepath.Join(l.Root, DatasetsDir, name) }

// Search is the directory of workflow searches.
func (l Layout) Search(id string) string { return filepath.Join(l.Root, SearchDir, id) }

// Generation is the directory of one generation of the cycle.
func (l Layout) Generation(id string) string { return filepath.Join(l.Root, GenerationsDir, id) }

// Eval is the directory of one evaluation: a rollout's episodes book and
// the judge-pairs verdicts on it.
func (l Layout) Eval(name string) string { return filepath.Join(l.Root, EvalsDir, name) }

// ServingLog is the log of the model server massd runs for a models entry.
func (l Layout) ServingLog(entry string) string {
	return filepath.Join(l.Root, ServingDir, entry+".log")
}

// Evals is the directory of evaluations.
func (l Layout) Evals() string { return filepath.Join(l.Root, EvalsDir) }

// Resolve makes p absolute against the data directory; an absolute or
// empty p is returned as is.
func (l Layout) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.Root, p)
}

// MaxIDLen is the longest id ValidID accepts.
const MaxIDLen = 64

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidID is the one rule for the ids that name tasks, jobs, episodes,
// agents, runs and sandboxes: 1 to 64 characters of letters, digits, '.',
// '_' and '-', starting with a letter or digit, and no "..". Such an id is
// safe as a directory name, a container or volume name and a label value.
func ValidID(id string) bool { return idRE.MatchString(id) && !strings.Contains(id, "..") }

// SandboxDaemonID is the stable mass.daemon label of the sandboxes a massd
// with this data directory creates, so that a restarted massd finds (and
// reaps) what its predecessor left.
func (l Layout) SandboxDaemonID() string {
	abs, err := filepath.Abs(l.Root)
	if err != nil {
		abs = l.Root
	}
	sum := sha256.Sum256([]byte(abs))
	return "massd-" + hex.EncodeToString(sum[:6])
}
