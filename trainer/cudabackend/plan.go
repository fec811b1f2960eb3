package cudabackend

import (
	"fmt"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// Defaults of the device memory plan.
const (
	DefaultPlanCEChunk  = 512     // tokens per LM-head cross-entropy chunk (the reference's)
	DefaultPlanGDNChunk = 64      // tokens per Gated DeltaNet chunk (gdn_chunk_fwd/bwd's C)
	DefaultPlanReserve  = 2 << 30 // per device: context, cuBLASLt workspace, allocator slack
)

// PlanSpec is what a device memory plan is computed for: one window of Window tokens
// per optimizer micro-step and a LoRA adapter of Rank on Targets.
type PlanSpec struct {
	Window   int
	Rank     int
	Targets  []string
	CEChunk  int   // 0: DefaultPlanCEChunk
	GDNChunk int   // 0: DefaultPlanGDNChunk
	Reserve  int64 // 0: DefaultPlanReserve
}

// Stage is one pipeline stage's share: layers [First, Last) and its bytes.
type Stage struct {
	First, Last     int
	Embedding, Head bool  // the stage holds the embedding table / final norm and LM head
	Weights         int64 // frozen weights, bf16
	LoRA            int64 // adapter: fp32 master, fp32 gradient, AdamW m and v, bf16 copy
	Checkpoints     int64 // each layer's input (bf16), kept from forward to backward
	Recompute       int64 // the largest layer's activations while it is recomputed and backpropagated
	LMHead          int64 // chunked cross-entropy scratch (last stage only)
	Transfer        int64 // boundary activation and its gradient from/to the neighbour stages
	Reserve         int64
}

// Total is the stage's peak bytes.
func (s Stage) Total() int64 {
	return s.Weights + s.LoRA + s.Checkpoints + s.Recompute + s.LMHead + s.Transfer + s.Reserve
}

// MemPlan is a layer-wise pipeline split of one replica over devices of DeviceBytes.
type MemPlan struct {
	Spec        PlanSpec
	DeviceBytes int64
	LoRAParams  int64
	Stages      []Stage
}

// loraBytesPerParam: fp32 master 4, fp32 gradient 4, AdamW first and second moments 8,
// the bf16 copy the products read 2.
const loraBytesPerParam = 18

func (s *PlanSpec) defaults() {
	if s.CEChunk <= 0 {
		s.CEChunk = DefaultPlanCEChunk
	}
	if s.GDNChunk <= 0 {
		s.GDNChunk = DefaultPlanGDNChunk
	}
	if s.Reserve <= 0 {
		s.Reserve = DefaultPlanReserve
	}
}

// PlanMemory finds the fewest pipeline stages (devices per replica, at most maxDevices) on
// which one window of spec.Window tokens trains c with frozen bf16 weights, per-layer
// activation checkpointing and chunked LM-head cross-entropy. The layers are split
// evenly, the first stage holding the embedding and the last the LM head. It returns
// an error wrapping model.ErrUnsupported when no split fits.
func PlanMemory(c *model.Config, spec PlanSpec, deviceBytes int64, maxDevices int) (MemPlan, error) {
	spec.defaults()
	if spec.Window <= 0 || spec.Rank <= 0 || deviceBytes <= 0 {
		return MemPlan{}, fmt.Errorf("memory plan: window %d, rank %d and device size %d must be positive", spec.Window, spec.Rank, deviceBytes)
	}
	p := MemPlan{Spec: spec, DeviceBytes: deviceBytes, LoRAParams: LoRAParams(c, spec.Rank, spec.Targets)}
	if maxDevices > c.NumLayers {
		maxDevices = c.NumLayers
	}
	var last []Stage
	for n := 1; n <= maxDevices; n++ {
		st := splitStages(c, spec, n)
		last = st
		if fitsAll(st, deviceBytes) {
			p.Stages = st
			return p, nil
		}
	}
	biggest := int64(0)
	for _, s := range last {
		biggest = max(biggest, s.Total())
	}
	return p, fmt.Errorf("%w: a %d-token window does not fit %d devices of %s (the largest of %d stages needs %s); use more devices or a shorter window",
		model.ErrDoesNotFit, spec.Window, maxDevices, GiB(deviceBytes), len(last), GiB(biggest))
}

func fitsAll(st []Stage, dev int64) bool {
	for _, s := range st {
		if s.Total() > dev {
			return false
		}
	}
	return true
}

// splitStages cuts the layers into n contiguous runs whose lengths differ by at most one.
// StageLayers splits layers 0..layers−1 into n contiguous ranges [first, last) whose
// sizes differ by at most one, the larger ones first: the plan's split and the backend's.
func StageLayers(layers, n int) [][2]int {
	out := make([][2]int, n)
	first := 0
	for i := range out {
		cnt := layers / n
		if i < layers%n {
			cnt++
		}
		out[i] = [2]int{first, first + cnt}
		first += cnt
	}
	return out
}

func splitStages(c *model.Config, spec PlanSpec, n int) []Stage {
	t, d := int64(spec.Window), int64(c.HiddenSize)
	vd := int64(c.VocabSize) * d
	out := make([]Stage, n)
	for i, r := range StageLayers(c.NumLayers, n) {
		s := Stage{First: r[0], Last: r[1], Embedding: i == 0, Head: i == n-1, Reserve: spec.Reserve}
		for l := s.First; l < s.Last; l++ {
			s.Weights += 2 * layerParams(c, l)
			s.LoRA += loraBytesPerParam * layerLoRAParams(c, l, spec.Rank, spec.Targets)
			s.Checkpoints += 2 * t * d
			s.Recompute = max(s.Recompute, layerActivationBytes(c, l, spec))
		}
		if s.Embedding {
			s.Weights += 2 * vd
		}
		if s.Head {
			s.Weights += 2 * d // final norm
			if !c.TieWordEmbeddings || !s.Embedding {
				s.Weights += 2 * vd // lm_head (or, tied on another stage, a copy of the table)
			}
			// fp32 logits of one chunk and their gradient, the normed final hidden state
			// (bf16) and its fp32 gradient.
			s.LMHead = 2*int64(spec.CEChunk)*int64(c.VocabSize)*4 + t*d*(2+4)
		}
		if n > 1 {
			s.Transfer = 2 * 2 * t * d // received activation and sent gradient, bf16
		}
		out[i] = s
	}
	return out
}

// layerParams counts layer l's frozen parameters from the model's expected tensors.
func layerParams(c *model.Config, l int) int64 {
	prefix := model.LayerName(l, "")
	var n int64
	for name, shape := range c.Expected() {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		p := int64(1)
		for _, x := range shape {
			p *= int64(x)
		}
		n += p
	}
	return n
}

// LoRAParams counts the adapter's parameters: rank·(in+out) per adapted module and layer.
func LoRAParams(c *model.Config, rank int, targets []string) int64 {
	var n int64
	for l := 0; l < c.NumLayers; l++ {
		n += layerLoRAParams(c, l, rank, targets)
	}
	return n
}

func layerLoRAParams(c *model.Config, l, rank int, targets []string) int64 {
	var n int64
	for _, m := range targets {
		if lora.Exists(c, l, m) {
			in, out := lora.Dims(c, m)
			n += int64(rank) * int64(in+out)
		}
	}
	return n
}

// GiB renders bytes as GiB with one decimal.
func GiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// String reports the plan: the totals, then one line per stage.
func (p MemPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s device, window %d tokens, LoRA r%d on %d targets (%.1fM params): %d pipeline stage(s)",
		GiB(p.DeviceBytes), p.Spec.Window, p.Spec.Rank, len(p.Spec.Targets), float64(p.LoRAParams)/1e6, len(p.Stages))
	for i, s := range p.Stages {
		where := ""
		if s.Embedding {
			where += " +embedding"
		}
		if s.Head {
			where += " +lm_head"
		}
		fmt.Fprintf(&b, "\n  stage %d: layers %d-%d%s: weights bf16 %s, LoRA+grad+AdamW fp32 %s, layer checkpoints %s, recompute peak %s, LM-head CE (%d-token chunks) %s, transfer %s, reserve %s = %s",
			i, s.First, s.Last-1, where, GiB(s.Weights), GiB(s.LoRA), GiB(s.Checkpoints), GiB(s.Recompute),
			p.Spec.CEChunk, GiB(s.LMHead), GiB(s.Transfer), GiB(s.Reserve), GiB(s.Total()))
	}
	return b.String()
}

// DeviceList renders the --devices value for n stages on devices 0..n-1.
func DeviceList(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	return strings.Join(ids, ",")
}
