package docker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

// boxEnv is a container's environment: the spec's variables and, for an
// agent box, the thread caps of its CPU limit (sandbox.ThreadEnv) where the
// spec does not set them.
func boxEnv(specEnv map[string]string, p sandbox.Policy, agent bool) ([]string, error) {
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
	env := make([]string, 0, len(all))
	for k, v := range all {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}
