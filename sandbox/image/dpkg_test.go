package image

import (
	"strings"
	"testing"
)

const statusSample = `Package: python3
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 3.11.2-1+b1
Description: interactive high-level object-oriented language
 Python, the high-level, interactive object oriented language,
 includes an extensive class library.

Package: removed-thing
Status: deinstall ok config-files
Architecture: all
Version: 1.0

Package: base-files
Status: install ok installed
Architecture: amd64
Version: 12.4+deb12u15
`

func TestParseDpkgStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"sample", statusSample, "base-files\t12.4+deb12u15\tamd64\npython3\t3.11.2-1+b1\tamd64\n", false},
		{"empty", "", "", false},
		{"crlf-free garbage line", "Package python3\n", "", true},
		{"no trailing blank", "Package: a\nStatus: install ok installed\nVersion: 1\nArchitecture: all", "a\t1\tall\n", false},
	}
	for _, tt := range tests {
		pkgs, err := ParseDpkgStatus([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error = %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if got := string(FormatManifest(pkgs)); got != tt.want {
			t.Errorf("%s: manifest = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzParseDpkgStatus(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Add([]byte("Package: a\n\n\nPackage: b\nStatus: install ok installed\n"))
	f.Add([]byte(":\n \n\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pkgs, err := ParseDpkgStatus(data)
		if err != nil {
			return
		}
		for i, p := range pkgs {
			if p.Name == "" {
				t.Fatalf("package %d has no name", i)
			}
			if i > 0 && pkgs[i-1].Name > p.Name {
				t.Fatalf("packages not sorted: %q before %q", pkgs[i-1].Name, p.Name)
			}
		}
		if n := strings.Count(string(FormatManifest(pkgs)), "\n"); n != len(pkgs) {
			t.Fatalf("manifest has %d lines for %d packages", n, len(pkgs))
		}
	})
}
