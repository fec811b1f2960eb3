package generation

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// OwnerFile names the job that made a generation directory.
const OwnerFile = "owner.json"

// TrashPrefix starts the name a removed generation directory is renamed
// to before it is deleted; listings skip such names (not numbers).
const TrashPrefix = ".removed-"

// claim makes jobID the owner of dir, or returns nil if it already is; a
// directory claimed by another job is an error naming both fixes.
func claim(dir, jobID string) error {
	o, ok, err := Owner(dir)
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

// Owner returns the job that claimed generation directory dir; ok is
// false when none did.
func Owner(dir string) (job string, ok bool, err error) {
	var o struct {
		Job string `json:"job"`
	}
	ok, err = readJSON(filepath.Join(dir, OwnerFile), &o)
	if ok && o.Job == "" {
		return "", false, fmt.Errorf("%s: no job named", filepath.Join(dir, OwnerFile))
	}
	return o.Job, ok, err
}

// RemoveDir removes generation directory dir so that nothing is left
// half-deleted under its number: it is first renamed, in one step, to a
// trash name beside it, then deleted; trash that an earlier removal left
// (a crash mid-delete) is deleted too.
func RemoveDir(dir string) error {
	parent := filepath.Dir(dir)
	trash := filepath.Join(parent, TrashPrefix+filepath.Base(dir)+"-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.Rename(dir, trash); err != nil {
		return fmt.Errorf("remove generation %s: %w", filepath.Base(dir), err)
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("remove generation %s: %w", filepath.Base(dir), err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), TrashPrefix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(parent, e.Name())); err != nil {
			return fmt.Errorf("remove generation %s: delete %s: %w", filepath.Base(dir), e.Name(), err)
		}
	}
	return nil
}
