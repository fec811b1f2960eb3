package docker

import (
	"io"

	"github.com/mass-dev/mass/sandbox"
)

// The tar forms below are shared with the other backends (sandbox/kubernetes
// streams the same tars over exec instead of the engine's archive calls).

// RewriteExport copies a tar of a workspace (names relative to it, as
// `tar -C /workspace -c .` writes them) to w as ExportWorkspace does:
// normalised headers, setuid/setgid/sticky stripped, content capped at
// maxBytes, and returns the manifest.
func RewriteExport(src io.Reader, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	return rewriteExport(src, w, maxBytes)
}

// WriteInputsTar streams host inputs as the tar CreateWorkspace copies in.
func WriteInputsTar(w io.Writer, inputs []sandbox.Input, capBytes int64) error {
	return writeInputsTar(w, inputs, capBytes)
}

// FilterExport copies an export's regular files and directories to w,
// leaving out entries under replace (a grader's workspace).
func FilterExport(w io.Writer, src io.Reader, replace []string) error {
	return filterExport(w, src, replace)
}

// MassSeccompJSON is the project's seccomp profile (SeccompMass) in the
// engine's JSON format, which containerd's CRI also reads as a kubelet
// Localhost profile.
func MassSeccompJSON() (string, error) { return massProfileJSON() }
