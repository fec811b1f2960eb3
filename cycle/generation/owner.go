package generation

import (
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/generationfmt"
)

// OwnerFile names the job that made a generation directory.
const OwnerFile = generationfmt.OwnerFile

// TrashPrefix starts the name a removed generation directory is renamed to.
const TrashPrefix = generationfmt.TrashPrefix

// claim makes jobID the owner of dir, or returns nil if it already is; a
// directory claimed by another job is an error naming both fixes.
func claim(dir, jobID string) error {
	o, ok, err := generationfmt.ReadOwner(dir)
	switch {
	case err != nil:
		return err
	case ok && o != jobID:
		g := filepath.Base(dir)
		return fmt.Errorf("generation directory %s belongs to job %s; remove it (massctl generation rm %s) or continue it (massctl generation retry %s)",
			dir, o, g, g)
	case ok:
		return nil
	}
	return writeJSON(filepath.Join(dir, OwnerFile), struct {
		Job string `json:"job"`
	}{jobID})
}
