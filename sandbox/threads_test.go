package sandbox

import "testing"

func TestThreadEnv(t *testing.T) {
	for nano, want := range map[int64]string{0: "1", 250_000_000: "1", 1_000_000_000: "1", 1_500_000_000: "2", 2_000_000_000: "2", 16_000_000_001: "17"} {
		env := ThreadEnv(nano)
		if len(env) != len(ThreadEnvNames) {
			t.Fatalf("%d: %d variables, want %d", nano, len(env), len(ThreadEnvNames))
		}
		for _, k := range ThreadEnvNames {
			if env[k] != want {
				t.Errorf("nano_cpus %d: %s=%q, want %q", nano, k, env[k], want)
			}
		}
	}
}
