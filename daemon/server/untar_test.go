package server

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
)

// sparseTar is a tar of a few KiB holding spec.yaml and a GNU PAX 1.0
// sparse entry that Go's reader expands to realSize bytes. tar.Writer
// does not write sparse records, so the PAX header block is patched in.
func sparseTar(t testing.TB, realSize int64) []byte {
	t.Helper()
	rec := func(k, v string) string {
		n := len(k) + len(v) + 3
		for len(fmt.Sprintf("%d %s=%s\n", n, k, v)) != n {
			n++
		}
		return fmt.Sprintf("%d %s=%s\n", n, k, v)
	}
	pax := rec("GNU.sparse.major", "1") + rec("GNU.sparse.minor", "0") + rec("GNU.sparse.name", "data/big") + rec("GNU.sparse.realsize", fmt.Sprint(realSize))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "spec.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(specDoc))})
	tw.Write([]byte(specDoc))
	tw.Flush()
	at := buf.Len()
	tw.WriteHeader(&tar.Header{Name: "PaxHeaders/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(pax)), Format: tar.FormatUSTAR})
	tw.Write([]byte(pax))
	sparseMap := make([]byte, 512)
	copy(sparseMap, "1\n0\n1\n") // one fragment: offset 0, 1 byte
	tw.WriteHeader(&tar.Header{Name: "GNUSparseFile.0/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: 513, Format: tar.FormatUSTAR})
	tw.Write(append(sparseMap, 'x'))
	tw.Close()
	b := buf.Bytes()
	blk := b[at : at+512]
	blk[156] = tar.TypeXHeader
	copy(blk[148:156], "        ")
	sum := 0
	for _, c := range blk {
		sum += int(c)
	}
	copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func dirBytes(t testing.TB, dir string) (total int64, entries int) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		entries++
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return nil
	})
	return total, entries
}

// Defect 1: a 4 KiB upload declaring a huge sparse file filled the disk.
func TestUntarRefusesSparse(t *testing.T) {
	data := sparseTar(t, 64<<20)
	dst := t.TempDir()
	err := untar(bytes.NewReader(data), dst, untarLimits{Entries: 10, Bytes: 1 << 20})
	if !errors.Is(err, api.ErrInvalid) || !strings.Contains(err.Error(), "sparse") {
		t.Fatalf("untar = %v, want a sparse-entry refusal", err)
	}
	if n, _ := dirBytes(t, dst); n > 1<<20 {
		t.Errorf("wrote %d bytes past the 1 MiB cap", n)
	}
}

func TestUntarCapsBytesWritten(t *testing.T) {
	big := strings.Repeat("x", 3000)
	data := tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data/a", typ: tar.TypeReg, body: big}, entry{name: "data/b", typ: tar.TypeReg, body: big})
	dst := t.TempDir()
	err := untar(data, dst, untarLimits{Entries: 10, Bytes: 4000})
	if !errors.Is(err, api.ErrTooLarge) || !strings.Contains(err.Error(), "unpacked-size limit of 4000 bytes") {
		t.Fatalf("untar = %v, want the unpacked-size limit named", err)
	}
	if n, _ := dirBytes(t, dst); n > 4000 {
		t.Errorf("wrote %d bytes, cap 4000", n)
	}
}

func TestUntarCapsEntries(t *testing.T) {
	var es []entry
	for i := range 5 {
		es = append(es, entry{name: fmt.Sprintf("d%d/", i), typ: tar.TypeDir})
	}
	err := untar(tarOf(t, es...), t.TempDir(), untarLimits{Entries: 4, Bytes: 1 << 20})
	if !errors.Is(err, api.ErrTooLarge) || !strings.Contains(err.Error(), "entry limit") {
		t.Fatalf("untar = %v, want the entry limit named", err)
	}
}

// Also-list: a file and then a directory (or a file below it) of the same
// name answered 500; the upload is the client's error.
func TestUntarNameCollisionIsInvalid(t *testing.T) {
	for name, es := range map[string][]entry{
		"file then dir":  {{name: "data", typ: tar.TypeReg, body: "x"}, {name: "data/", typ: tar.TypeDir}},
		"file then file": {{name: "data", typ: tar.TypeReg, body: "x"}, {name: "data/a", typ: tar.TypeReg, body: "y"}},
		"duplicate":      {{name: "a", typ: tar.TypeReg, body: "x"}, {name: "a", typ: tar.TypeReg, body: "y"}},
		"dir then file":  {{name: "a/", typ: tar.TypeDir}, {name: "a", typ: tar.TypeReg, body: "y"}},
	} {
		err := untar(tarOf(t, es...), t.TempDir(), uploadLimits)
		if status, _ := api.StatusOf(err); status != 400 {
			t.Errorf("%s: untar = %v (status %d), want 400", name, err, status)
		}
	}
}

func TestUploadLimitsAgree(t *testing.T) {
	if MaxTaskUnpackedBytes > MaxTaskUploadBytes {
		t.Errorf("unpacked cap %d above the upload cap %d", MaxTaskUnpackedBytes, MaxTaskUploadBytes)
	}
}

// An upload that streams past its byte cap is ErrTooLarge (413), not a
// malformed tar.
func TestUntarStreamPastCapIsTooLarge(t *testing.T) {
	big := strings.Repeat("x", 8000)
	data := tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data/a", typ: tar.TypeReg, body: big})
	capped := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(data), 4096)
	err := untar(capped, t.TempDir(), untarLimits{Entries: 10, Bytes: 1 << 20})
	if !errors.Is(err, api.ErrTooLarge) {
		t.Fatalf("untar past a 4 KiB body cap = %v, want ErrTooLarge", err)
	}
}
