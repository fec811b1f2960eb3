package jobs

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/daemon/api"
)

// DefaultMinFreeBytes is the free space below which the data dir's disk
// counts as low and new work (jobs, task uploads) is refused.
const DefaultMinFreeBytes = 256 << 20

// Disk is the data dir's file system as last measured.
type Disk struct {
	FreeBytes    int64 // available to massd (statfs f_bavail)
	MinFreeBytes int64 // the threshold; 0 when the check is off
	Low          bool  // FreeBytes < MinFreeBytes
}

// Disk measures the data dir's free space.
func (m *Manager) Disk() (Disk, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(m.layout.Root, &st); err != nil {
		return Disk{}, fmt.Errorf("statfs %s: %w", m.layout.Root, err)
	}
	d := Disk{FreeBytes: int64(st.Bavail) * st.Bsize, MinFreeBytes: m.minFree}
	d.Low = m.minFree > 0 && d.FreeBytes < m.minFree
	return d, nil
}

// CheckDisk returns api.ErrUnavailable, naming the figures, when the data
// dir's disk is low, so no new work starts that could not be recorded.
func (m *Manager) CheckDisk() error {
	if m.layout.Root == "" {
		return nil
	}
	d, err := m.Disk()
	if err != nil {
		return err
	}
	if d.Low {
		return fmt.Errorf("data dir %s has %d bytes free, below the %d-byte threshold; free some space: %w",
			m.layout.Root, d.FreeBytes, d.MinFreeBytes, api.ErrUnavailable)
	}
	return nil
}
