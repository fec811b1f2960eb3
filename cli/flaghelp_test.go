package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/train"
)

// TestFlagsSayWhatTheyDo fails for a flag of any massctl command without a
// usage text: a bare "(default: 0)" tells a user nothing.
func TestFlagsSayWhatTheyDo(t *testing.T) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			name := strings.TrimSpace(prefix + " " + cmd.Name)
			for _, f := range cmd.Flags {
				if d, ok := f.(cli.DocGenerationFlag); ok && strings.TrimSpace(d.GetUsage()) == "" {
					t.Errorf("massctl %s --%s has no usage text", name, f.Names()[0])
				}
			}
			walk(name, cmd.Subcommands)
		}
	}
	walk("", App("test").Commands)
}

// TestTrainHelpShowsRealDefaults checks that `massctl train --help` shows
// mass-train's defaults, taken from the packages that own them.
func TestTrainHelpShowsRealDefaults(t *testing.T) {
	out, err := run(t, "train", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for flag, def := range map[string]any{"steps": train.DefaultSteps, "batch": train.DefaultBatch, "accum": train.DefaultAccum,
		"lr": optim.DefaultLR, "warmup": optim.DefaultWarmup, "floor": optim.DefaultFloor, "rank": lora.DefaultRank,
		"alpha": lora.DefaultAlpha, "dropout": lora.DefaultDropout, "val-every": train.DefaultValEvery,
		"ckpt-every": train.DefaultCkptEvery, "seed": train.DefaultSeed} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "--"+flag+" ") {
				line = l
			}
		}
		if want := fmt.Sprintf("(default: %v)", def); !strings.Contains(line, want) {
			t.Errorf("--%s help %q does not say %s", flag, line, want)
		}
	}
	if strings.Contains(out, "(default: 0)") {
		t.Errorf("train help still shows a zero default:\n%s", out)
	}
}

// TestHelpShowsOneDefault fails for a flag whose help names its default
// twice, as `(default 18) (default: 0)` did: the usage text spelled a
// default the flag's value did not have.
func TestHelpShowsOneDefault(t *testing.T) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			name := strings.TrimSpace(prefix + " " + cmd.Name)
			for _, f := range cmd.Flags {
				if s := f.String(); strings.Count(s, "(default") > 1 {
					t.Errorf("massctl %s: %s", name, s)
				}
			}
			walk(name, cmd.Subcommands)
		}
	}
	walk("", App("test").Commands)
}
