package boxhost

import (
	"reflect"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

// TestEnvThreadCaps: an agent box with 1.5 CPUs gets every thread cap
// of the reference's episode runner at 2; the spec's own value wins; the
// grader's box gets none.
func TestEnvThreadCaps(t *testing.T) {
	p := sandbox.DefaultPolicy()
	p.NanoCPUs = 1_500_000_000
	m, err := Env(map[string]string{"HOME": "/workspace", "OMP_NUM_THREADS": "1"}, p, true)
	env := EnvList(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HOME=/workspace", "LOKY_MAX_CPU_COUNT=2", "MKL_NUM_THREADS=2", "NUMEXPR_NUM_THREADS=2",
		"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=2", "OPENMM_CPU_THREADS=2"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("env %q\nwant %q", env, want)
	}
	m, err = Env(map[string]string{"A": "b"}, p, false)
	env = EnvList(m)
	if err != nil || !reflect.DeepEqual(env, []string{"A=b"}) {
		t.Errorf("grader env %q %v", env, err)
	}
	if _, err := Env(map[string]string{"A=B": "c"}, p, true); err == nil {
		t.Error("a bad name was accepted")
	}
}
