package judge

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Extract unpacks the directories and regular files of an export tar into
// dest (an empty directory this process created), so that a judge agent
// can get the workspace as input. Links, devices and names escaping the
// root are skipped, never followed; modes are reduced to 0755/0644; at most
// maxBytes of content and MaxTarEntries entries are taken.
func Extract(r io.Reader, dest string, maxBytes int64) error {
	tr := tar.NewReader(r)
	var total int64
	for n := 0; n < MaxTarEntries; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read workspace export: %w", err)
		}
		name, ok := cleanName(h.Name)
		if !ok {
			continue
		}
		p := filepath.Join(dest, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return fmt.Errorf("extract %s: %w", name, err)
			}
		case tar.TypeReg:
			total += h.Size
			if total > maxBytes {
				return fmt.Errorf("workspace export holds more than %d bytes", maxBytes)
			}
			if err := extractFile(p, name, tr, h.Size); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("workspace export holds more than %d entries", MaxTarEntries)
}

func extractFile(p, name string, r io.Reader, size int64) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil // a duplicate name: the first copy stays
	}
	if err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	_, err = io.CopyN(f, r, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	return nil
}
