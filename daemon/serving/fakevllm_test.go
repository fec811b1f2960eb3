package serving

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const fakeVLLMEnv = "MASS_FAKE_VLLM"

// vllmFlags are the `vllm serve` options the fake knows, with whether
// each takes a value, as vLLM's argument parser has them.
var vllmFlags = map[string]bool{
	"--served-model-name": true, "--host": true, "--port": true, "--max-model-len": true,
	"--tool-call-parser": true, "--reasoning-parser": true, "--max-lora-rank": true,
	"--tensor-parallel-size": true, "--gpu-memory-utilization": true, "--dtype": true,
	"--enable-auto-tool-choice": false, "--enable-lora": false, "--enforce-eager": false,
}

// TestFakeVLLM is the fake `vllm` executable (run through a shell script
// named vllm on PATH): it parses `vllm serve MODEL [options]` as vLLM does
// (an unknown option or an auto tool choice without a parser is a usage
// error, exit 2; a folder without config.json is refused), prints its
// command line and CUDA_VISIBLE_DEVICES, then serves /health, /v1/models
// and /v1/chat/completions under the served name.
func TestFakeVLLM(t *testing.T) {
	if os.Getenv(fakeVLLMEnv) == "" {
		t.Skip("only run as the fake vllm")
	}
	args := flagArgs()
	fmt.Printf("fake vllm argv: %s\nCUDA_VISIBLE_DEVICES=%s\n", strings.Join(args, " "), os.Getenv("CUDA_VISIBLE_DEVICES"))
	if len(args) < 2 || args[0] != "serve" || strings.HasPrefix(args[1], "-") {
		usage("the following arguments are required: model_tag")
	}
	modelDir, opts := args[1], map[string]string{}
	for i := 2; i < len(args); i++ {
		takes, ok := vllmFlags[args[i]]
		switch {
		case !ok:
			usage("unrecognized arguments: " + args[i])
		case takes && i+1 >= len(args):
			usage("argument " + args[i] + ": expected one argument")
		case takes:
			opts[args[i]] = args[i+1]
			i++
		default:
			opts[args[i]] = "true"
		}
	}
	if _, ok := opts["--enable-auto-tool-choice"]; ok && opts["--tool-call-parser"] == "" {
		usage("--enable-auto-tool-choice requires --tool-call-parser to be set")
	}
	if _, err := strconv.Atoi(opts["--port"]); err != nil {
		usage("argument --port: invalid int value")
	}
	if _, err := os.Stat(filepath.Join(modelDir, "config.json")); err != nil {
		fmt.Fprintf(os.Stderr, "ValueError: Invalid repository ID or local directory specified: '%s'\n", modelDir)
		os.Exit(1)
	}
	name := opts["--served-model-name"]
	if name == "" {
		name = modelDir
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		mml, _ := strconv.Atoi(opts["--max-model-len"])
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{
			{"id": name, "object": "model", "owned_by": "vllm", "root": modelDir, "max_model_len": mml}}})
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != name {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"object":"error","message":"The model %s does not exist.","type":"NotFoundError","param":null,"code":404}`, req.Model)
			return
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"served by %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`, name, modelDir)
	})
	err := http.ListenAndServe(opts["--host"]+":"+opts["--port"], mux)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func usage(msg string) {
	fmt.Fprintln(os.Stderr, "usage: vllm serve [model_tag] [options]\nvllm serve: error: "+msg)
	os.Exit(2)
}

// fakeVLLMOnPath puts a `vllm` shell script first on PATH that runs
// TestFakeVLLM in this test binary with the script's arguments.
func fakeVLLMOnPath(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nexec %q -test.run='^TestFakeVLLM$' -- \"$@\"\n", os.Args[0])
	if err := os.WriteFile(filepath.Join(dir, "vllm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakeVLLMEnv, "1")
}
