package config

import (
	"flag"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pinned is every scalar setting massd has had: its yaml key, its MASS_*
// variable and its flag, and a value to set it to. Renaming any of them
// breaks users' files, units and scripts; this list changes only with a
// deliberate, announced rename.
var pinned = []struct {
	key, env, flag, value string
}{
	{"socket", "MASS_SOCKET", "socket", "/tmp/pin.sock"},
	{"data_dir", "MASS_DATA_DIR", "data-dir", "/tmp/pin-data"},
	{"tcp.listen", "MASS_TCP_LISTEN", "tcp", "127.0.0.1:7777"},
	{"tcp.token_file", "MASS_TCP_TOKEN_FILE", "token-file", "/tmp/pin.token"},
	{"log.format", "MASS_LOG_FORMAT", "log-format", "json"},
	{"log.level", "MASS_LOG_LEVEL", "log-level", "debug"},
	{"jobs.concurrency", "MASS_JOBS_CONCURRENCY", "jobs", "7"},
	{"sandbox.image", "MASS_SANDBOX_IMAGE", "", "pin-agent:1"},
	{"sandbox.test_image", "MASS_SANDBOX_TEST_IMAGE", "", "pin-test:1"},
	{"sandbox.runtime", "MASS_SANDBOX_RUNTIME", "", "runsc"},
	{"sandbox.helper", "MASS_SANDBOX_HELPER", "", "/tmp/pin-helper"},
	{"sandbox.strict", "MASS_SANDBOX_STRICT", "", "true"},
	{"sandbox.kubernetes.max_boxes", "MASS_SANDBOX_KUBERNETES_MAX_BOXES", "", "12"},
	{"trainer.binary", "MASS_TRAINER_BINARY", "", "/tmp/pin-train"},
	{"trainer.cuda_binary", "MASS_TRAINER_CUDA_BINARY", "", "/tmp/pin-train-cuda"},
}

// pinnedKeys are every yaml key of massd.yaml, sections included.
var pinnedKeys = []string{
	"data_dir", "jobs", "jobs.concurrency", "judges", "log", "log.format", "log.level", "models", "prices",
	"retention", "retention.keep_last", "retention.keep_workspaces",
	"sandbox", "sandbox.backend", "sandbox.gpu_lib_dirs", "sandbox.helper", "sandbox.image",
	"sandbox.kubernetes", "sandbox.kubernetes.cpu_request", "sandbox.kubernetes.episode_boxes", "sandbox.kubernetes.image",
	"sandbox.kubernetes.kubeconfig", "sandbox.kubernetes.max_boxes", "sandbox.kubernetes.memory_request",
	"sandbox.kubernetes.namespace", "sandbox.kubernetes.node_selector",
	"sandbox.kubernetes.pull_policy", "sandbox.kubernetes.runc_class", "sandbox.kubernetes.runtime_class",
	"sandbox.kubernetes.seccomp_localhost", "sandbox.kubernetes.start_timeout", "sandbox.kubernetes.workspace_dir", "sandbox.max_gpus", "sandbox.runtime",
	"sandbox.strict", "sandbox.test_image", "socket", "tcp", "tcp.listen", "tcp.token_file",
	"trainer", "trainer.binary", "trainer.cuda_binary",
}

// pinnedFlags are massd's flags, the two that are not settings included.
var pinnedFlags = []string{"config", "data-dir", "jobs", "log-format", "log-level", "socket", "tcp", "token-file", "version"}

func TestSettingsPinned(t *testing.T) {
	if got := configKeys(reflect.TypeFor[Config](), ""); !slices.Equal(got, pinnedKeys) {
		t.Errorf("yaml keys\n got %v\nwant %v", got, pinnedKeys)
	}
	var flags []string
	NewFlags("massd").fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	slices.Sort(flags)
	if !slices.Equal(flags, pinnedFlags) {
		t.Errorf("flags\n got %v\nwant %v", flags, pinnedFlags)
	}
	var asked []string
	if _, err := Load(NewFlags("massd"), func(name string) string { asked = append(asked, name); return "" }); err != nil {
		t.Fatal(err)
	}
	want := []string{"MASS_CONFIG"}
	for _, p := range pinned {
		want = append(want, p.env)
	}
	slices.Sort(asked)
	slices.Sort(want)
	if !slices.Equal(asked, want) {
		t.Errorf("environment read\n got %v\nwant %v", asked, want)
	}
	for _, p := range pinned {
		t.Run(p.key, func(t *testing.T) {
			fromYAML := Default()
			if err := fromYAML.Parse([]byte(yamlFor(p.key, p.value))); err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(fromYAML, Default()) {
				t.Fatalf("yaml %s: %s changed nothing", p.key, p.value)
			}
			fromEnv := Default()
			if err := fromEnv.ApplyEnv(func(n string) string { return map[string]string{p.env: p.value}[n] }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromEnv, fromYAML) {
				t.Errorf("%s=%s sets another setting than yaml %s", p.env, p.value, p.key)
			}
			if p.flag == "" {
				return
			}
			f := NewFlags("massd")
			if err := f.Parse([]string{"--" + p.flag, p.value}); err != nil {
				t.Fatal(err)
			}
			fromFlag := Default()
			f.apply(fromFlag)
			if !reflect.DeepEqual(fromFlag, fromYAML) {
				t.Errorf("--%s %s sets another setting than yaml %s", p.flag, p.value, p.key)
			}
		})
	}
}

// yamlFor is a YAML document setting dotted key to value.
func yamlFor(key, value string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, k := range parts[:len(parts)-1] {
		b.WriteString(strings.Repeat("  ", i) + k + ":\n")
	}
	b.WriteString(strings.Repeat("  ", len(parts)-1) + parts[len(parts)-1] + ": " + value + "\n")
	return b.String()
}

// configKeys lists the dotted yaml keys of struct type t, descending into
// nested structs (not into maps or lists), sorted.
func configKeys(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, configKeys(f.Type, prefix+name+".")...)
		}
	}
	slices.Sort(out)
	return out
}

// Every row of the settings table names a field it can set, once.
func TestSettingsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range settings {
		for _, name := range []string{"key " + s.key, "env " + s.env, "flag " + s.flag} {
			if !strings.HasSuffix(name, " ") && seen[name] {
				t.Errorf("%s declared twice", name)
			}
			seen[name] = true
		}
		if !strings.HasPrefix(s.env, "MASS_") {
			t.Errorf("setting %s: env %q is not a MASS_* name", s.key, s.env)
		}
		c := Default()
		if err := s.assign(c, map[reflect.Kind]string{reflect.String: "x", reflect.Int: "3", reflect.Bool: "true"}[s.field(c).Kind()]); err != nil {
			t.Errorf("setting %s: %v", s.key, err)
		}
		if err := s.assign(c, "not-a-number-or-bool"); s.field(c).Kind() != reflect.String && err == nil {
			t.Errorf("setting %s took a bad value", s.key)
		}
	}
}
