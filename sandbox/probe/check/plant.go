package check

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Hostile entries Plant makes, relative to the workspace.
const (
	PlantFileLink = "host-file-link" // symlink to a host file
	PlantDirLink  = "host-dir-link"  // symlink to a host directory
	PlantFIFO     = "fifo"
	PlantSparse   = "sparse"   // 1 TiB apparent size, no blocks
	PlantZero     = "dev/zero" // symlink to /dev/zero under a device-like name
	PlantRandom   = "urandom"  // symlink to /dev/urandom
	PlantRace     = "race"     // swapped between a directory and a symlink
	PlantRaceFile = "race/f"   // file read through the swapping entry
	SparseSize    = int64(1) << 40
	RaceContent   = "inside-workspace\n"
)

// Plant creates the entries the host-side probes then read through the
// runtime: links to host paths, a FIFO, a huge sparse file, device links.
func Plant(dir, hostFile, hostDir string) error {
	steps := []struct {
		what string
		err  func() error
	}{
		{"symlink to host file", func() error { return os.Symlink(hostFile, filepath.Join(dir, PlantFileLink)) }},
		{"symlink to host dir", func() error { return os.Symlink(hostDir, filepath.Join(dir, PlantDirLink)) }},
		{"fifo", func() error { return unix.Mkfifo(filepath.Join(dir, PlantFIFO), 0o644) }},
		{"sparse file", func() error {
			f, err := os.Create(filepath.Join(dir, PlantSparse))
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(SparseSize)
		}},
		{"dev dir", func() error { return os.MkdirAll(filepath.Join(dir, "dev"), 0o755) }},
		{"device-named link", func() error { return os.Symlink("/dev/zero", filepath.Join(dir, PlantZero)) }},
		{"urandom link", func() error { return os.Symlink("/dev/urandom", filepath.Join(dir, PlantRandom)) }},
	}
	for _, s := range steps {
		if err := s.err(); err != nil {
			return fmt.Errorf("plant %s: %w", s.what, err)
		}
	}
	return nil
}

// SwapRace exchanges dir/race (a directory holding f) with a symlink to
// target, atomically and as fast as it can, for d. It prints the swap count.
func SwapRace(dir, target string, d time.Duration) error {
	race := filepath.Join(dir, PlantRace)
	alt := race + ".alt"
	os.RemoveAll(race)
	os.Remove(alt)
	if err := os.Mkdir(race, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(race, "f"), []byte(RaceContent), 0o644); err != nil {
		return err
	}
	if err := os.Symlink(target, alt); err != nil {
		return err
	}
	n := 0
	for start := time.Now(); time.Since(start) < d; n++ {
		if err := unix.Renameat2(unix.AT_FDCWD, race, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
			return fmt.Errorf("swap after %d exchanges: %w", n, err)
		}
	}
	fmt.Println(n)
	return nil
}

// Identity is what a process ended up with (for the setuid probe).
type Identity struct {
	UID, EUID, GID, EGID int
	CapEff               string
}

// Whoami reports the caller's ids and effective capabilities.
func Whoami() Identity {
	st, _ := procStatus()
	return Identity{UID: os.Getuid(), EUID: os.Geteuid(), GID: os.Getgid(), EGID: os.Getegid(), CapEff: st["CapEff"]}
}
