package trainflags

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

type knobs struct {
	Steps    int      `flag:"steps"`
	MaxVal   int      `flag:"max-val"`
	Dropout  *float64 `flag:"dropout"`
	Targets  []string `flag:"targets"`
	Devices  []int    `flag:"devices"`
	Replicas int      `flag:"replicas"`
	Seed     uint64   `flag:"seed"`
	RSLoRA   bool     `flag:"rslora"`
	Untagged int
}

// TestFillArgsRoundTrip parses a command line with the generated flags, fills a tagged
// struct from it and renders it back: the same flags come out, unset ones stay unset.
func TestFillArgsRoundTrip(t *testing.T) {
	in := []string{"--steps", "7", "--max-val", "3", "--dropout", "0", "--targets", "q_proj,v_proj", "--devices", "0,1", "--replicas", "2", "--seed", "5", "--rslora=true"}
	var got knobs
	app := &cli.App{Flags: CLI(All), Action: func(c *cli.Context) error { return Fill(c, &got) }}
	if err := app.Run(append([]string{"x"}, in...)); err != nil {
		t.Fatal(err)
	}
	if got.MaxVal != 3 || got.Dropout == nil || *got.Dropout != 0 || !slices.Equal(got.Devices, []int{0, 1}) || got.Seed != 5 || !got.RSLoRA {
		t.Fatalf("filled %+v", got)
	}
	if out := strings.Join(Args(got), " "); out != strings.Join(in, " ") {
		t.Errorf("args\n got %s\nwant %s", out, strings.Join(in, " "))
	}
	var none knobs
	app = &cli.App{Flags: CLI(All), Action: func(c *cli.Context) error { return Fill(c, &none) }}
	if err := app.Run([]string{"x"}); err != nil || len(Args(none)) != 0 {
		t.Errorf("no flags given: %v, args %v", err, Args(none))
	}
	app = &cli.App{Flags: CLI(All), Action: func(c *cli.Context) error { return Fill(c, &none) }}
	if err := app.Run([]string{"x", "--devices", "0,x"}); err == nil {
		t.Error("--devices 0,x accepted")
	}
}

func TestUndeclaredFlagPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Arg accepted an undeclared flag")
		}
	}()
	Arg("no-such-flag", 1)
}
