package guard

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/mass-dev/mass/sandbox"
)

// Caps on the content the shadow-copy check holds.
const (
	MaxCodeBytes  = 1 << 20  // a code file larger than this is hashed, not compared
	MaxTotalBytes = 64 << 20 // code content held from one workspace
)

// File is one regular file: absolute workspace path, hash, and for code
// (see IsCode) its content.
type File struct {
	Path   string
	SHA256 string
	Size   int64
	Code   bool
	Data   []byte
}

var codeExt = map[string]bool{".py": true, ".sh": true, ".js": true, ".ts": true, ".rb": true, ".pl": true, ".r": true,
	".jl": true, ".lua": true, ".go": true, ".c": true, ".cc": true, ".cpp": true, ".java": true, ".m": true}

// IsCode reports a file the shadow-copy check compares: a source-code
// extension, an executable bit or a #! line.
func IsCode(name string, mode int64, head []byte) bool {
	return codeExt[path.Ext(name)] || mode&0o111 != 0 || bytes.HasPrefix(head, []byte("#!"))
}

// Shipped lists the regular files the task ships under protected paths,
// read from the trusted host inputs (never a workspace). Symbolic links are
// refused, as the task spec's validation already does.
func Shipped(inputs []sandbox.Input, protected []string) ([]File, error) {
	var out []File
	var held int64
	for _, in := range inputs {
		err := filepath.WalkDir(in.HostPath, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%s is not a regular file", p)
			}
			rel, err := filepath.Rel(in.HostPath, p)
			if err != nil {
				return err
			}
			wp := Clean(path.Join(in.Dest, filepath.ToSlash(rel)))
			if Under(wp, protected) == "" {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			f, err := hashFile(p, wp, fi, &held)
			if err != nil {
				return err
			}
			out = append(out, f)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("hash shipped protected files: %w", err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// hashFile hashes a host file by streaming it, holding its content only
// when it is code of at most MaxCodeBytes.
func hashFile(p, wp string, fi fs.FileInfo, held *int64) (File, error) {
	if fi.Size() <= MaxCodeBytes {
		b, err := os.ReadFile(p)
		if err != nil {
			return File{}, err
		}
		return fileOf(wp, b, int64(fi.Mode().Perm()), held), nil
	}
	r, err := os.Open(p)
	if err != nil {
		return File{}, err
	}
	defer r.Close()
	h := sha256.New()
	head := make([]byte, 2)
	n, _ := io.ReadFull(r, head)
	h.Write(head[:n])
	size, err := io.Copy(h, r)
	if err != nil {
		return File{}, err
	}
	return File{Path: wp, SHA256: hex.EncodeToString(h.Sum(nil)), Size: size + int64(n),
		Code: IsCode(wp, int64(fi.Mode().Perm()), head[:n])}, nil
}

func fileOf(wp string, b []byte, mode int64, held *int64) File {
	sum := sha256.Sum256(b)
	f := File{Path: wp, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b)), Code: IsCode(wp, mode, b)}
	if f.Code && len(b) <= MaxCodeBytes && *held+int64(len(b)) <= MaxTotalBytes {
		f.Data = b
		*held += int64(len(b))
	}
	return f
}

// ReadExport reads the code files of a workspace export tar (as
// sandbox.Runtime.ExportWorkspace writes it) outside skip roots; other
// files are left out.
func ReadExport(r io.Reader, skip []string) ([]File, error) {
	tr := tar.NewReader(r)
	var out []File
	var held int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("read workspace export: %w", err)
		}
		wp := Clean(h.Name)
		if h.Typeflag != tar.TypeReg || Under(wp, skip) != "" || h.Size > MaxCodeBytes {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return out, fmt.Errorf("read %s from the export: %w", h.Name, err)
		}
		if !IsCode(wp, h.Mode, b) {
			continue
		}
		out = append(out, fileOf(wp, b, h.Mode, &held))
	}
}
