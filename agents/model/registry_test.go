package model

import (
	"log/slog"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	r := NewRegistry([]Config{
		{Name: "qwen", BaseURL: "http://127.0.0.1:8000/v1", Model: "Qwen/Qwen3-8B"},
		{Name: "broken", BaseURL: "ftp://nowhere", Model: "m"},
	}, log)
	dry, err := New(Config{Name: "scripted", BaseURL: "http://127.0.0.1:9/v1", Model: "s", DryRun: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	r.Add("scripted", dry, true)
	if got := strings.Join(r.Names(), ","); got != "broken,qwen,scripted" {
		t.Errorf("Names = %s", got)
	}
	if c, err := r.Client("qwen"); err != nil || c.Model() != "Qwen/Qwen3-8B" {
		t.Errorf("Client(qwen) = %v, %v", c, err)
	}
	if _, err := r.Client("broken"); err == nil || !strings.Contains(err.Error(), "base_url") {
		t.Errorf("Client(broken) = %v, want the configuration error", err)
	}
	if _, err := r.Client("nope"); err == nil || !strings.Contains(err.Error(), "configured: broken, qwen, scripted") {
		t.Errorf("Client(nope) = %v, want the list of models", err)
	}
	if _, err := r.Client(""); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("Client(\"\") = %v, want a hint to choose", err)
	}
	if !r.DryRun("scripted") || r.DryRun("qwen") || !r.Has("broken") || r.Has("nope") {
		t.Error("DryRun/Has disagree with what was registered")
	}
}
