package boxhost

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mass-dev/mass/sandbox/workspace"
)

// dirSource is an ExportSource over a real directory that writes each
// directory's entries in reverse name order (as `tar -c` writes a
// directory's order, not the engine's sorted one) and reads a file's body
// only as the export reads the stream.
type dirSource struct {
	root     string
	tars     int
	readBody int64 // bytes of file bodies the tars read
}

func (s *dirSource) Tar(ctx context.Context, rel string, read func(io.Reader) error) error {
	s.tars++
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		tw := tar.NewWriter(pw)
		name := "."
		if rel != "" {
			name = path.Base(rel)
		}
		err := s.write(tw, filepath.Join(s.root, filepath.FromSlash(rel)), name)
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
		done <- err
	}()
	rerr := read(pr)
	pr.CloseWithError(errors.Join(rerr, io.ErrClosedPipe))
	werr := <-done
	if rerr != nil {
		return rerr
	}
	return werr
}

func (s *dirSource) write(tw *tar.Writer, p, name string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	link := ""
	if fi.Mode()&os.ModeSymlink != 0 {
		link, _ = os.Readlink(p)
	}
	h, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	h.Name = name
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	switch {
	case fi.Mode().IsRegular():
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		n, err := io.Copy(tw, f)
		s.readBody += n
		f.Close()
		return err
	case fi.IsDir():
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		slices.Reverse(ents)
		for _, e := range ents {
			if err := s.write(tw, filepath.Join(p, e.Name()), path.Join(name, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *dirSource) List(ctx context.Context, dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(dir)))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, err
}

// TestExportAroundLeftOutFile: a file past the sparse limit ends the tar
// at its header, is noted, and every other entry (before and after it in
// the tar's order, in directories the tar had not reached) is exported;
// the old resume rule (skip names sorting before it) lost a/x here.
func TestExportAroundLeftOutFile(t *testing.T) {
	root := t.TempDir()
	for p, c := range map[string]string{"a/x": "a\n", "m/n": "n\n", "m/q/r": "q\n", "m/zz0": "0\n", "z": "z\n"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(root, "m/ln")); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(root, "m", "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil {
		t.Fatal(err)
	}
	src := &dirSource{root: root}
	var out bytes.Buffer
	x := NewExporter(&out, 1<<20, 1<<20)
	if err := x.Export(context.Background(), src); err != nil {
		t.Fatalf("export: %v", err)
	}
	got := map[string]string{}
	for _, f := range x.Out {
		got[f.Path] = f.Type
		if f.Path == "m/big" && (f.Omitted == "" || f.Size != 1<<30) {
			t.Errorf("m/big: %+v, want its size and a note", f)
		}
	}
	for _, p := range []string{"a", "a/x", "m", "m/n", "m/q", "m/q/r", "m/zz0", "m/ln", "m/big", "z"} {
		if got[p] == "" {
			t.Errorf("manifest lacks %s (has %v)", p, got)
		}
	}
	if len(x.Out) != 10 {
		t.Errorf("manifest has %d entries, want 10: %v", len(x.Out), got)
	}
	if src.readBody > 1<<20 {
		t.Errorf("the tars read %d bytes of bodies: the left-out file was read", src.readBody)
	}
	if err := workspace.Verify(bytes.NewReader(out.Bytes()), x.Out, workspace.DefaultLimits); err != nil {
		t.Errorf("verify export: %v", err)
	}
	t.Logf("%d tars, %d body bytes read", src.tars, src.readBody)
}
