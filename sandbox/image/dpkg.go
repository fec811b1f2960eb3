package image

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Package is one installed Debian package.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Arch    string `json:"arch"`
}

// maxStatusBytes bounds the dpkg status file we accept.
const maxStatusBytes = 64 << 20

// ParseDpkgStatus returns the installed packages listed in a dpkg status
// file (/var/lib/dpkg/status), sorted by name. Stanzas whose Status is not
// "install ok installed" are skipped.
func ParseDpkgStatus(data []byte) ([]Package, error) {
	if len(data) > maxStatusBytes {
		return nil, fmt.Errorf("dpkg status is %d bytes, over the %d byte cap", len(data), maxStatusBytes)
	}
	var (
		pkgs  []Package
		cur   Package
		state string
	)
	flush := func() {
		if cur.Name != "" && state == "install ok installed" {
			pkgs = append(pkgs, cur)
		}
		cur, state = Package{}, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // continuation of a multi-line field
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("dpkg status line %q: want \"Field: value\"", truncate(line, 80))
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			cur.Name = v
		case "Version":
			cur.Version = v
		case "Architecture":
			cur.Arch = v
		case "Status":
			state = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read dpkg status: %w", err)
	}
	flush()
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	return pkgs, nil
}

// FormatManifest renders packages one per line: name, version, arch, tab-separated.
func FormatManifest(pkgs []Package) []byte {
	var b bytes.Buffer
	for _, p := range pkgs {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", p.Name, p.Version, p.Arch)
	}
	return b.Bytes()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
