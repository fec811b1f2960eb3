package jobkind

import (
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/taskspec"
)

// LoadTask loads and validates the spec of the job's task from its stored
// copy (<data-dir>/tasks/<id>/spec.yaml); relative paths in it resolve
// against TaskDir.
func (j Job) LoadTask() (*taskspec.Spec, error) {
	if j.TaskDir == "" {
		return nil, fmt.Errorf("job %s has no task", j.ID)
	}
	return taskspec.Load(filepath.Join(j.TaskDir, taskspec.FileName))
}
