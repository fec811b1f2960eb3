package server

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzUntar(f *testing.F) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "spec.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3})
	tw.Write([]byte("id:"))
	tw.WriteHeader(&tar.Header{Name: "data/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "../x", Typeflag: tar.TypeReg, Mode: 0o644})
	tw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("not a tar"))
	f.Add(sparseTar(f, 1<<40))
	lim := untarLimits{Entries: 50, Bytes: 64 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dst := filepath.Join(root, "in")
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		untar(bytes.NewReader(data), dst, lim)
		// What was written stays under the caps, whatever the headers claim.
		if n, entries := dirBytes(t, dst); n > lim.Bytes || entries > lim.Entries {
			t.Fatalf("untar wrote %d bytes in %d entries; caps %d bytes, %d entries", n, entries, lim.Bytes, lim.Entries)
		}
		// Nothing may appear outside dst, and nothing inside may be a link.
		entries, _ := os.ReadDir(root)
		if len(entries) != 1 {
			t.Fatalf("untar wrote outside its directory: %v", entries)
		}
		filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
				t.Fatalf("untar created %s with mode %v", p, fi.Mode())
			}
			return nil
		})
	})
}

func FuzzEpisodeFilePath(f *testing.F) {
	for _, s := range []string{"episode.json", "manifests/worker-1.json", "manifests/../x.json", "../../etc/passwd", "manifests/.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		parts, ok := episodeFilePath(name)
		if !ok {
			return
		}
		for _, p := range parts {
			if p == "" || p == "." || strings.Contains(p, "..") || strings.ContainsAny(p, "/\x00") {
				t.Fatalf("episodeFilePath(%q) allowed component %q", name, p)
			}
		}
		if strings.Join(parts, "/") != name {
			t.Fatalf("episodeFilePath(%q) = %v", name, parts)
		}
	})
}
