package export

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"

	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// FP8Block is the quantization block edge.
const FP8Block = 128

// QuantizeFP8 quantizes a [rows, cols] matrix block-wise to float8 e4m3:
// each 128×128 block b gets scale_inv[b] = max|w|/448 and codes
// e4m3(w/scale_inv[b]), so that w ≈ code · scale_inv. scaleInv has shape
// [ceil(rows/128), ceil(cols/128)].
func QuantizeFP8(w []float32, rows, cols int) (codes []byte, scaleInv []float32) {
	br, bc := (rows+FP8Block-1)/FP8Block, (cols+FP8Block-1)/FP8Block
	codes = make([]byte, len(w))
	scaleInv = make([]float32, br*bc)
	for bi := 0; bi < br; bi++ {
		for bj := 0; bj < bc; bj++ {
			r0, r1 := bi*FP8Block, min((bi+1)*FP8Block, rows)
			c0, c1 := bj*FP8Block, min((bj+1)*FP8Block, cols)
			var mx float64
			for i := r0; i < r1; i++ {
				for j := c0; j < c1; j++ {
					mx = math.Max(mx, math.Abs(float64(w[i*cols+j])))
				}
			}
			s := mx / safetensors.E4M3Max
			if s == 0 {
				s = 1
			}
			scaleInv[bi*bc+bj] = float32(s)
			for i := r0; i < r1; i++ {
				for j := c0; j < c1; j++ {
					codes[i*cols+j] = safetensors.F32ToE4M3(float32(float64(w[i*cols+j]) / s))
				}
			}
		}
	}
	return codes, scaleInv
}

// DequantizeFP8 is the inverse of QuantizeFP8 (up to rounding).
func DequantizeFP8(codes []byte, scaleInv []float32, rows, cols int) []float32 {
	bc := (cols + FP8Block - 1) / FP8Block
	out := make([]float32, len(codes))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			out[i*cols+j] = safetensors.E4M3ToF32(codes[i*cols+j]) * scaleInv[(i/FP8Block)*bc+j/FP8Block]
		}
	}
	return out
}

// fp8Groups are the projections vLLM loads fused into one layer: a group is
// quantized together or not at all (vLLM refuses a fused layer whose shards
// disagree).
var fp8Groups = [][]string{{"q_proj", "k_proj", "v_proj"}, {"gate_proj", "up_proj"}, {"o_proj"}, {"down_proj"}}

// FP8Skipped returns the projections (module names such as
// model.layers.0.self_attn.q_proj) that stay unquantized because one of
// their group's weights has a dimension not divisible by FP8Block: vLLM's
// block-FP8 loader requires both the output and the input size of every
// shard to be multiples of the block.
func FP8Skipped(c *model.Config) []string {
	if c.Hybrid != nil {
		return hybridFP8Skipped(c)
	}
	var out []string
	for l := 0; l < c.NumLayers; l++ {
		for _, g := range fp8Groups {
			ok := true
			for _, mod := range g {
				in, outDim := lora.Dims(c, mod)
				ok = ok && in%FP8Block == 0 && outDim%FP8Block == 0
			}
			if !ok {
				for _, mod := range g {
					out = append(out, lora.ModuleName(l, mod))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func saveFP8(dir string, m *model.Model, o MergedOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create model dir: %w", err)
	}
	skipped := FP8Skipped(m.Config)
	var ts []safetensors.Tensor
	for n, t := range m.Tensors {
		if isProjection(n) && len(t.Shape) == 2 && !slices.Contains(skipped, strings.TrimSuffix(n, ".weight")) {
			codes, inv := QuantizeFP8(t.Data, t.Shape[0], t.Shape[1])
			on := m.Config.OfficialName(n)
			ts = append(ts, safetensors.Tensor{Name: on, DType: safetensors.F8E4M3, Shape: t.Shape, Data: codes})
			st, err := safetensors.F32Tensor(on+"_scale_inv", safetensors.F32,
				[]int{(t.Shape[0] + FP8Block - 1) / FP8Block, (t.Shape[1] + FP8Block - 1) / FP8Block}, inv)
			if err != nil {
				return err
			}
			ts = append(ts, st)
			continue
		}
		st, err := safetensors.F32Tensor(m.Config.OfficialName(n), o.DType, t.Shape, t.Data)
		if err != nil {
			return err
		}
		ts = append(ts, st)
	}
	official := make([]string, len(skipped))
	for i, n := range skipped {
		official[i] = m.Config.OfficialName(n)
	}
	if err := writeFP8Config(dir, m.Config, o.DType, official); err != nil {
		return err
	}
	return m.WriteWithCarried(dir, ts, o.MaxShardBytes)
}

// writeFP8Config writes config.json with the quantization_config vLLM and
// transformers read; torch_dtype is the dtype of the unquantized tensors.
func writeFP8Config(dir string, c *model.Config, dt safetensors.DType, skipped []string) error {
	cfg := *c
	cfg.TorchDType = TorchDType(dt)
	js, err := cfg.JSON()
	if err != nil {
		return err
	}
	var cm map[string]any
	if err := json.Unmarshal(js, &cm); err != nil {
		return err
	}
	if skipped == nil {
		skipped = []string{}
	}
	cm["quantization_config"] = map[string]any{"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
		"weight_block_size": []int{FP8Block, FP8Block}, "modules_to_not_convert": skipped, "ignored_layers": skipped}
	js, _ = json.MarshalIndent(cm, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// TorchDType is the config.json name of a safetensors dtype.
func TorchDType(dt safetensors.DType) string {
	switch dt {
	case safetensors.F16:
		return "float16"
	case safetensors.F32:
		return "float32"
	}
	return "bfloat16"
}
