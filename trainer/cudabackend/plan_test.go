package cudabackend

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"

	"github.com/mass-dev/mass/errclass"
)

// TestPlan27B checks the device plan of the paper's Qwen3.6-27B (config only) at the
// paper's 49,152-token window against sizes computed here from the config's dimensions:
// bf16 weights, the fp32 adapter with AdamW, one bf16 checkpoint per layer, the 512-token
// LM-head chunks; and that it needs 2 devices of 80 GB and 1 of 141 GB.
func TestPlan27B(t *testing.T) {
	c, err := model.LoadConfig(filepath.Join("..", "model", "testdata", "qwen3.6-27b"))
	if err != nil {
		t.Fatal(err)
	}
	const win, r = 49152, 64
	d, v, f := int64(5120), int64(248320), int64(17408)
	qkv, z := int64(2*16*128+48*128), int64(48*128)
	mlp := 3*d*f + 2*d
	full := d*(2*24*256) + 2*d*(4*256) + (24*256)*d + 2*256
	lin := d*qkv + d*z + 2*d*48 + qkv*4 + 2*48 + 128 + z*d
	weights := 2 * (2*v*d + d + 64*mlp + 16*full + 48*lin)
	mlpLoRA := r * (2*(d+f) + (f + d))
	loraParams := 48*(mlpLoRA+r*((d+qkv)+(d+z)+(z+d))) + 16*(mlpLoRA+r*((d+2*24*256)+2*(d+4*256)+(24*256+d)))
	spec := PlanSpec{Window: win, Rank: r, Targets: lora.HybridTargets()}
	for _, tc := range []struct {
		gb     float64
		stages int
	}{{80, 2}, {141, 1}} {
		dev := int64(tc.gb * 1e9)
		p, err := PlanMemory(c, spec, dev, 8)
		if err != nil {
			t.Fatalf("%g GB: %v", tc.gb, err)
		}
		t.Logf("%g GB:\n%s", tc.gb, p)
		if got := len(p.Stages); got != tc.stages {
			t.Fatalf("%g GB: %d stages, want %d", tc.gb, got, tc.stages)
		}
		if p.LoRAParams != loraParams {
			t.Errorf("LoRA params %d, want %d", p.LoRAParams, loraParams)
		}
		var w, lo, ck, layers int64
		for i, s := range p.Stages {
			w, lo, ck, layers = w+s.Weights, lo+s.LoRA, ck+s.Checkpoints, layers+int64(s.Last-s.First)
			if s.Total() > dev {
				t.Errorf("stage %d needs %d bytes on a %d-byte device", i, s.Total(), dev)
			}
			if wantHead := i == len(p.Stages)-1; s.Head != wantHead || (s.LMHead == 0) == wantHead {
				t.Errorf("stage %d head %v with %d bytes of LM-head scratch", i, s.Head, s.LMHead)
			}
			if s.Head && s.LMHead != 2*512*v*4+win*d*6 {
				t.Errorf("LM-head scratch %d, want two fp32 512×V chunks and the final hidden state", s.LMHead)
			}
			if tc.stages > 1 && s.Transfer != 4*win*d {
				t.Errorf("stage %d transfer %d, want a bf16 activation and gradient", i, s.Transfer)
			}
		}
		if w != weights || lo != 18*loraParams || ck != 64*2*win*d || layers != 64 {
			t.Errorf("weights %d (want %d), LoRA %d (want %d), checkpoints %d (want %d), layers %d",
				w, weights, lo, 18*loraParams, ck, 64*2*win*d, layers)
		}
		if tc.stages > 1 {
			if fewer := splitStages(c, p.Spec, tc.stages-1); fitsAll(fewer, dev) {
				t.Errorf("%g GB: %d stages would fit too; the plan is not the fewest", tc.gb, tc.stages-1)
			}
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	c, err := model.LoadConfig(filepath.Join("..", "model", "testdata", "qwen3.6-27b"))
	if err != nil {
		t.Fatal(err)
	}
	spec := PlanSpec{Window: 49152, Rank: 64, Targets: lora.HybridTargets()}
	if _, err := PlanMemory(c, spec, 24e9, 2); !errors.Is(err, model.ErrDoesNotFit) || !errors.Is(err, errclass.ErrTooLarge) {
		t.Errorf("27B on two 24 GB devices: %v, want ErrDoesNotFit (class errclass.ErrTooLarge)", err)
	}
	if _, err := PlanMemory(c, PlanSpec{Window: 0, Rank: 64}, 80e9, 2); err == nil {
		t.Error("a zero window was accepted")
	}
	// More 40 GB devices hold it: more stages lower every stage's share.
	p, err := PlanMemory(c, spec, 40e9, 16)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Stages); n < 3 || p.Stages[n-1].Last != 64 {
		t.Errorf("40 GB plan %d stages ending at layer %d", n, p.Stages[n-1].Last)
	}
}
