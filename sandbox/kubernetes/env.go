package kubernetes

import (
	"fmt"
	"os"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

var getenv = os.Getenv

// boxEnv is a pod's environment: the spec's variables and, for an agent
// box, the thread caps of its CPU limit where the spec does not set them.
func boxEnv(specEnv map[string]string, p sandbox.Policy, agent bool) (map[string]string, error) {
	all := map[string]string{}
	if agent {
		for k, v := range sandbox.ThreadEnv(p.NanoCPUs) {
			all[k] = v
		}
	}
	for k, v := range specEnv {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("create sandbox: env %q: %w", k, sandbox.ErrInvalid)
		}
		all[k] = v
	}
	return all, nil
}
