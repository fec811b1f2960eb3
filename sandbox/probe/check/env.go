package check

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

func envChecks() []named {
	return []named{
		one("env_no_secrets", func(Config) Result { return CheckEnv(os.Environ()) }),
		one("other_agent_invisible", checkOtherInvisible),
		one("other_agent_unsignalable", checkOtherUnsignalable),
	}
}

var (
	secretName  = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|OPENAI|ANTHROPIC|HUGGING|^HF_|^AWS_|^AZURE|^GOOGLE_|^GCP_|BEARER|COOKIE|^MASS_|ENDPOINT|BASE_URL|PROXY|DOCKER)`)
	secretValue = regexp.MustCompile(`(?i)(^sk-[a-z0-9_-]{8,}|^hf_[a-z0-9]{8,}|^ghp_|^xox[bp]-|^AKIA[0-9A-Z]{12}|https?://|-----BEGIN)`)
)

// CheckEnv flags environment entries whose name or value looks like a
// credential or an endpoint address.
func CheckEnv(env []string) Result {
	const want = "no credential or endpoint in the environment"
	var bad, names []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		names = append(names, k)
		if secretName.MatchString(k) || secretValue.MatchString(v) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		return fail(want, "suspicious variables: "+joinSorted(bad))
	}
	return pass(want, short("variables: "+joinSorted(names), 300))
}

// checkOtherInvisible looks for the other agent's marker in every process
// this container can see.
func checkOtherInvisible(cfg Config) Result {
	const want = "other agent's processes invisible"
	if cfg.Marker == "" {
		return fail(want, "runner gave no marker")
	}
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		if hasMarker(p, cfg.Marker) {
			return fail(want, "saw the other agent as pid "+filepath.Base(p))
		}
	}
	return pass(want, fmt.Sprintf("%d processes visible, none of the other agent", len(pids)))
}

// hasMarker reports whether an argv element of process dir hashes to
// marker. The runner passes the hash so our own argv never matches.
func hasMarker(dir, marker string) bool {
	cmd, err := readSmall(filepath.Join(dir, "cmdline"), 1<<16)
	if err != nil {
		return false
	}
	for _, a := range strings.Split(cmd, "\x00") {
		sum := sha256.Sum256([]byte(a))
		if hex.EncodeToString(sum[:]) == marker {
			return true
		}
	}
	return false
}

// checkOtherUnsignalable sends signal 0 to the other agent's host pid. In a
// private pid namespace that number is either absent or one of our own.
func checkOtherUnsignalable(cfg Config) Result {
	const want = "other agent's pid not signalable"
	if cfg.OtherHostPID <= 0 {
		return fail(want, "runner gave no host pid")
	}
	err := syscall.Kill(cfg.OtherHostPID, 0)
	if err != nil {
		return pass(want, fmt.Sprintf("kill(%d, 0): %s", cfg.OtherHostPID, errName(err)))
	}
	if cfg.Marker != "" && !hasMarker("/proc/"+strconv.Itoa(cfg.OtherHostPID), cfg.Marker) {
		return pass(want, fmt.Sprintf("pid %d here is one of our own processes", cfg.OtherHostPID))
	}
	return fail(want, fmt.Sprintf("kill(%d, 0) succeeded on the other agent", cfg.OtherHostPID))
}
