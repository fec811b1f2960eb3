package cuda

import (
	"embed"
	"fmt"
	"sort"
	"strings"

	"github.com/mass-dev/mass/errclass"
)

// ErrUnsupportedDevice marks a GPU the kernels cannot run on (class
// errclass.ErrInvalid: choose another device).
var ErrUnsupportedDevice = errclass.New("unsupported cuda device", errclass.ErrInvalid)

//go:embed ptx/*.ptx
var ptxFS embed.FS

// Modules lists the kernel modules (one per cuda/*.cu file) whose PTX is embedded.
func Modules() []string {
	ents, err := ptxFS.ReadDir("ptx")
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, e := range ents {
		name, _, ok := strings.Cut(e.Name(), "_compute_")
		if ok {
			seen[name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// PTX returns the embedded PTX of module for a device of compute capability major.minor:
// the compute_90 build on Hopper and newer, the compute_80 build on Ampere. It returns an
// error for older devices or an unknown module.
func PTX(module string, major, minor int) ([]byte, error) {
	arch := ""
	switch {
	case major >= 9:
		arch = "compute_90"
	case major == 8:
		arch = "compute_80"
	default:
		return nil, errclass.Mark(fmt.Errorf("compute capability %d.%d is below 8.0 (bf16 kernels need Ampere or newer)", major, minor), ErrUnsupportedDevice)
	}
	b, err := ptxFS.ReadFile("ptx/" + module + "_" + arch + ".ptx")
	if err != nil {
		return nil, fmt.Errorf("kernel module %q: %w", module, err)
	}
	return b, nil
}
