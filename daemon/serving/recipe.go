package serving

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/model"
)

// Defaults of the vLLM recipe.
const (
	DefaultVLLM         = "vllm"
	DefaultMaxLoRARank  = 64
	DefaultVLLMReadyFor = 20 * time.Minute
)

// parserName is what vLLM's --tool-call-parser and --reasoning-parser
// take: a registered name (qwen3_coder, hermes, deepseek_r1, …).
var parserName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// gpuList is CUDA_VISIBLE_DEVICES: indexes or GPU-/MIG- UUIDs, comma separated.
var gpuList = regexp.MustCompile(`^[A-Za-z0-9-]+(,[A-Za-z0-9-]+)*$`)

// Recipe is the composed `vllm serve` of a models entry: the argument
// vector (with ModelPlaceholder and NamePlaceholder), the environment it
// adds, and the folder the base is served from.
type Recipe struct {
	Argv  []string
	Env   []string
	Base  string
	Ready time.Duration
}

// NewRecipe composes v for a server answering on baseURL: host and port
// come from baseURL, the generation's folder and served name from the
// placeholders; weights is the entry's, the base's default folder.
func NewRecipe(v model.VLLM, baseURL, weights string) (Recipe, error) {
	if err := CheckVLLM(v, baseURL); err != nil {
		return Recipe{}, err
	}
	u, _ := url.Parse(baseURL)
	exe := v.Executable
	if exe == "" {
		exe = DefaultVLLM
	}
	argv := []string{exe, "serve", ModelPlaceholder, "--served-model-name", NamePlaceholder,
		"--host", u.Hostname(), "--port", u.Port()}
	if v.MaxModelLen > 0 {
		argv = append(argv, "--max-model-len", strconv.Itoa(v.MaxModelLen))
	}
	if v.ToolCallParser != "" {
		argv = append(argv, "--enable-auto-tool-choice", "--tool-call-parser", v.ToolCallParser)
	}
	if v.ReasoningParser != "" {
		argv = append(argv, "--reasoning-parser", v.ReasoningParser)
	}
	if v.EnableLoRA {
		rank := v.MaxLoRARank
		if rank == 0 {
			rank = DefaultMaxLoRARank
		}
		argv = append(argv, "--enable-lora", "--max-lora-rank", strconv.Itoa(rank))
	}
	if v.TensorParallel > 0 {
		argv = append(argv, "--tensor-parallel-size", strconv.Itoa(v.TensorParallel))
	}
	if v.GPUMemory > 0 {
		argv = append(argv, "--gpu-memory-utilization", strconv.FormatFloat(v.GPUMemory, 'f', -1, 64))
	}
	argv = append(argv, v.ExtraArgs...)
	r := Recipe{Argv: argv, Base: v.Model, Ready: v.ReadyTimeout}
	if r.Base == "" {
		r.Base = weights
	}
	if r.Ready == 0 {
		r.Ready = DefaultVLLMReadyFor
	}
	if v.GPU != "" {
		r.Env = append(r.Env, "CUDA_VISIBLE_DEVICES="+v.GPU)
	}
	return r, nil
}

// CheckVLLM reports the first problem with a recipe, in words a person
// can act on.
func CheckVLLM(v model.VLLM, baseURL string) error {
	u, err := url.Parse(baseURL)
	switch {
	case err != nil || u.Scheme != "http" || u.Port() == "" || strings.TrimRight(u.Path, "/") != "/v1":
		return fmt.Errorf("serving.vllm needs a base_url such as http://127.0.0.1:8000/v1 (http, an explicit port, path /v1), not %q", baseURL)
	case net.ParseIP(u.Hostname()) == nil && u.Hostname() != "localhost":
		return fmt.Errorf("serving.vllm: base_url host %q must be an IP address or localhost, where massd starts the server", u.Hostname())
	case v.Model != "" && !filepath.IsAbs(v.Model):
		return fmt.Errorf("serving.vllm.model %q must be an absolute folder", v.Model)
	case v.ToolCallParser != "" && !parserName.MatchString(v.ToolCallParser):
		return fmt.Errorf("serving.vllm.tool_call_parser %q is not a parser name such as qwen3_coder", v.ToolCallParser)
	case v.ReasoningParser != "" && !parserName.MatchString(v.ReasoningParser):
		return fmt.Errorf("serving.vllm.reasoning_parser %q is not a parser name such as qwen3", v.ReasoningParser)
	case v.MaxModelLen < 0 || v.MaxLoRARank < 0 || v.TensorParallel < 0 || v.ReadyTimeout < 0:
		return errors.New("serving.vllm: max_model_len, max_lora_rank, tensor_parallel_size and ready_timeout must not be negative")
	case v.MaxLoRARank > 0 && !v.EnableLoRA:
		return errors.New("serving.vllm.max_lora_rank is set but enable_lora is not")
	case v.GPUMemory < 0 || v.GPUMemory > 1:
		return fmt.Errorf("serving.vllm.gpu_memory_utilization %v must be in (0, 1]", v.GPUMemory)
	case v.GPU != "" && !gpuList.MatchString(v.GPU):
		return fmt.Errorf("serving.vllm.gpu %q must be CUDA_VISIBLE_DEVICES, e.g. 0 or 0,1", v.GPU)
	}
	for _, a := range v.ExtraArgs {
		for _, own := range []string{"--port", "--host", "--served-model-name"} {
			if a == own || strings.HasPrefix(a, own+"=") {
				return fmt.Errorf("serving.vllm.extra_args: %s is set by the recipe (from base_url and the generation's name)", own)
			}
		}
	}
	return nil
}
