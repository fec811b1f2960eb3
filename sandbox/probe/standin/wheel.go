package standin

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	wheelNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_]*$`)
	wheelVersionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
)

// WriteWheel writes a pure-Python wheel (PEP 427) of project name at
// version into dir and returns its path: files (archive path -> content)
// plus the .dist-info METADATA, WHEEL and a RECORD with every file's
// sha256 and size, as pip checks them.
func WriteWheel(dir, name, version string, files map[string]string) (string, error) {
	if !wheelNameRE.MatchString(name) || !wheelVersionRE.MatchString(version) {
		return "", fmt.Errorf("wheel %s %s: want a name of letters, digits and _ and a dotted numeric version", name, version)
	}
	info := name + "-" + version + ".dist-info/"
	all := map[string]string{
		info + "METADATA": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: stand-in package of the mass egress tests\n", name, version),
		info + "WHEEL":    "Wheel-Version: 1.0\nGenerator: mass-standin\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	for p, c := range files {
		if strings.HasPrefix(p, "/") || strings.Contains(p, "..") || strings.HasPrefix(p, info) {
			return "", fmt.Errorf("wheel file %q: want a relative path outside %s", p, info)
		}
		all[p] = c
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, p := range paths {
		if err := addZip(zw, p, all[p]); err != nil {
			return "", err
		}
		sum := sha256.Sum256([]byte(all[p]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[p]))
	}
	fmt.Fprintf(&record, "%sRECORD,,\n", info)
	if err := addZip(zw, info+"RECORD", record.String()); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("wheel: %w", err)
	}
	out := filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", name, version))
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write wheel: %w", err)
	}
	return out, nil
}

func addZip(zw *zip.Writer, name, content string) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	if err != nil {
		return fmt.Errorf("wheel %s: %w", name, err)
	}
	_, err = w.Write([]byte(content))
	return err
}
