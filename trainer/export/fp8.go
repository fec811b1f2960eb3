package export

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

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

func saveFP8(dir string, m *model.Model, o MergedOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create model dir: %w", err)
	}
	var ts []safetensors.Tensor
	for n, t := range m.Tensors {
		if isProjection(n) && len(t.Shape) == 2 {
			codes, inv := QuantizeFP8(t.Data, t.Shape[0], t.Shape[1])
			ts = append(ts, safetensors.Tensor{Name: n, DType: safetensors.F8E4M3, Shape: t.Shape, Data: codes})
			st, err := safetensors.F32Tensor(n+"_scale_inv", safetensors.F32,
				[]int{(t.Shape[0] + FP8Block - 1) / FP8Block, (t.Shape[1] + FP8Block - 1) / FP8Block}, inv)
			if err != nil {
				return err
			}
			ts = append(ts, st)
			continue
		}
		st, err := safetensors.F32Tensor(n, o.DType, t.Shape, t.Data)
		if err != nil {
			return err
		}
		ts = append(ts, st)
	}
	cfg := *m.Config
	cfg.TorchDType = "bfloat16"
	js, err := cfg.JSON()
	if err != nil {
		return err
	}
	var cm map[string]any
	json.Unmarshal(js, &cm)
	cm["quantization_config"] = map[string]any{"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
		"weight_block_size": []int{FP8Block, FP8Block}}
	js, _ = json.MarshalIndent(cm, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return safetensors.WriteSharded(dir, ts, o.MaxShardBytes)
}
