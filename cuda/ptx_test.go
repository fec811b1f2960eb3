package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

var launchBounds = regexp.MustCompile(`^__launch_bounds__\(\d+\)\s*`)

// TestPTXEmbedded checks that every kernel source has PTX for both targets and that each
// PTX declares the extern "C" entry points its source defines.
func TestPTXEmbedded(t *testing.T) {
	srcs, err := filepath.Glob("*.cu")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no kernel sources: %v", err)
	}
	mods := strings.Join(Modules(), ",")
	for _, src := range srcs {
		name := strings.TrimSuffix(src, ".cu")
		if !strings.Contains(","+mods+",", ","+name+",") {
			t.Errorf("module %s has no embedded PTX (run make kernels)", name)
			continue
		}
		text, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, cc := range [][2]int{{8, 0}, {9, 0}} {
			ptx, err := PTX(name, cc[0], cc[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(text), "\n") {
				_, rest, ok := strings.Cut(line, "__global__ void ")
				if !ok {
					continue
				}
				rest = launchBounds.ReplaceAllString(rest, "")
				fn, _, _ := strings.Cut(rest, "(")
				if !bytes.Contains(ptx, []byte(".entry "+fn+"(")) {
					t.Errorf("%s for %d.%d lacks entry %s", name, cc[0], cc[1], fn)
				}
			}
		}
	}
	if _, err := PTX("adamw", 7, 5); err == nil {
		t.Error("compute 7.5 accepted")
	}
	if _, err := PTX("nosuch", 9, 0); err == nil {
		t.Error("unknown module accepted")
	}
}

var sharedDecl = regexp.MustCompile(`\.shared \.align (\d+) \.b8 (\S+)\[`)

// TestTCSharedAligned checks that the tensor-core kernels' shared arrays are 16-byte
// aligned in the PTX: the kernels copy tiles into them 128 bits at a time, and a bf16 array
// is otherwise only 2-byte aligned (a misaligned vector store faults on the device; the
// emulator's memcpy would not notice).
func TestTCSharedAligned(t *testing.T) {
	for _, m := range []string{"tc_attn", "tc_attn_bwd"} {
		for _, cc := range [][2]int{{8, 0}, {9, 0}} {
			ptx, err := PTX(m, cc[0], cc[1])
			if err != nil {
				t.Fatal(err)
			}
			decls := sharedDecl.FindAllSubmatch(ptx, -1)
			if len(decls) == 0 {
				t.Errorf("%s %d.%d: no shared arrays found", m, cc[0], cc[1])
			}
			for _, d := range decls {
				if string(d[1]) != "16" {
					t.Errorf("%s %d.%d: shared %s aligned to %s bytes, want 16", m, cc[0], cc[1], d[2], d[1])
				}
			}
		}
	}
}

// A GPU older than Ampere is refused as ErrUnsupportedDevice, class
// errclass.ErrInvalid, naming its compute capability.
func TestPTXRefusesOldDevice(t *testing.T) {
	_, err := PTX(Modules()[0], 7, 5)
	if !errors.Is(err, ErrUnsupportedDevice) || !errors.Is(err, errclass.ErrInvalid) || !strings.Contains(err.Error(), "7.5") {
		t.Errorf("PTX on compute capability 7.5 = %v, want ErrUnsupportedDevice naming 7.5", err)
	}
}
