package boxhost

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

// Env is a box's environment: the spec's variables and, for an agent box,
// the thread caps of its CPU limit (sandbox.ThreadEnv) where the spec does
// not set them.
func Env(specEnv map[string]string, p sandbox.Policy, agent bool) (map[string]string, error) {
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

// EnvList is env as sorted NAME=value strings.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// CheckSpec refuses a box whose episode or agent is no valid id (validID:
// the backend's rule) or whose agent name is reserved ("_" first).
func CheckSpec(spec sandbox.Spec, validID func(string) bool) error {
	if !validID(spec.Episode) || !validID(spec.Agent) || strings.HasPrefix(spec.Agent, "_") {
		return fmt.Errorf("create sandbox: episode %q / agent %q: %w", spec.Episode, spec.Agent, sandbox.ErrInvalid)
	}
	return nil
}

// Started returns a box just created as a sandbox.Sandbox: a nil
// interface, never a typed nil, with err.
func Started[B sandbox.Sandbox](b B, err error) (sandbox.Sandbox, error) {
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Weakened refuses a weakened policy in strict mode (ErrDenied) and logs
// it otherwise.
func Weakened(pol sandbox.Policy, spec sandbox.Spec, strict bool, log *slog.Logger) error {
	w := pol.Weaknesses()
	if len(w) == 0 {
		return nil
	}
	if strict {
		return fmt.Errorf("create sandbox: strict mode refuses a weakened policy (%s): %w", strings.Join(w, "; "), sandbox.ErrDenied)
	}
	log.Warn("weakened sandbox policy", "episode", spec.Episode, "agent", spec.Agent, "weaknesses", w)
	return nil
}
