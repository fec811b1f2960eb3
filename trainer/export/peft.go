// Package export writes what a training run produces for serving: a PEFT
// LoRA adapter (loadable by PEFT and vLLM), a merged model folder, and
// optional block-wise FP8 (e4m3, 128×128 blocks with inverse scales).
package export

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// AdapterConfigFile and AdapterWeightsFile are PEFT's file names.
const (
	AdapterConfigFile  = "adapter_config.json"
	AdapterWeightsFile = "adapter_model.safetensors"
)

// AdapterConfig is PEFT's adapter_config.json for a LoRA adapter, as this
// package writes it.
type AdapterConfig struct {
	PEFTType          string        `json:"peft_type"`
	TaskType          string        `json:"task_type"`
	R                 int           `json:"r"`
	LoRAAlpha         float64       `json:"lora_alpha"`
	LoRADropout       float64       `json:"lora_dropout"`
	TargetModules     []string      `json:"target_modules"`
	Bias              string        `json:"bias"`
	UseRSLoRA         bool          `json:"use_rslora"`
	UseDoRA           bool          `json:"use_dora"`
	FanInFanOut       bool          `json:"fan_in_fan_out"`
	InferenceMode     bool          `json:"inference_mode"`
	InitLoRAWeights   bool          `json:"init_lora_weights"`
	BaseModel         string        `json:"base_model_name_or_path"`
	ModulesToSave     []string      `json:"modules_to_save"`
	LayersToTransform []int         `json:"layers_to_transform"`
	RankPattern       lora.Patterns `json:"rank_pattern"`
	AlphaPattern      lora.Patterns `json:"alpha_pattern"`
	Revision          *string       `json:"revision"`
}

// WriteAdapter writes a PEFT adapter folder: adapter_config.json and
// adapter_model.safetensors with keys
// base_model.model.model.layers.{i}.<module>.lora_{A,B}.weight ([r,in] and
// [out,r], float32).
func WriteAdapter(dir string, a *lora.Adapter, baseModel string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create adapter folder: %w", err)
	}
	c := a.Config
	ac := AdapterConfig{PEFTType: "LORA", TaskType: "CAUSAL_LM", R: c.Rank, LoRAAlpha: c.Alpha, LoRADropout: c.Dropout,
		TargetModules: c.Targets, Bias: "none", UseRSLoRA: c.RSLoRA, InferenceMode: true, InitLoRAWeights: true, BaseModel: baseModel,
		RankPattern: c.RankPattern, AlphaPattern: c.AlphaPattern}
	b, err := json.MarshalIndent(ac, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, AdapterConfigFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write adapter config: %w", err)
	}
	return a.Save(filepath.Join(dir, AdapterWeightsFile), lora.PEFTPrefix, map[string]string{"format": "pt"})
}

// ReadAdapter loads a PEFT LoRA adapter folder for a model configuration.
func ReadAdapter(dir string, mc *model.Config) (*lora.Adapter, error) {
	b, err := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
	if err != nil {
		return nil, fmt.Errorf("read adapter config: %w", err)
	}
	cfg, err := ParseAdapterConfig(b, mc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	a, err := lora.New(cfg, mc, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := a.Load(filepath.Join(dir, AdapterWeightsFile)); err != nil {
		return nil, err
	}
	return a, nil
}
