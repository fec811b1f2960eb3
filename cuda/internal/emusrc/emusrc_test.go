package emusrc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedCopyCurrent fails when cuda/emu/kernels_gen.h is not what the kernel
// sources generate now (run `go generate -tags masscudaemu ./cuda/emu`). It reads the sources, so Go's test
// cache reruns it after any kernel edit.
func TestGeneratedCopyCurrent(t *testing.T) {
	want, err := Build("../..")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join("../../emu", File))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("cuda/emu/%s is stale (kernel sources changed); run `go generate -tags masscudaemu ./cuda/emu` and commit it", File)
	}
}

func TestBuildKeepsEveryKernel(t *testing.T) {
	got, err := Build("../..")
	if err != nil {
		t.Fatal(err)
	}
	srcs, _ := filepath.Glob("../../*.cu")
	for _, p := range srcs {
		if !bytes.Contains(got, []byte(`#line 1 "cuda/`+filepath.Base(p)+`"`)) {
			t.Errorf("%s missing from the generated copy", p)
		}
	}
	for _, h := range []string{"common.cuh", "mma.cuh"} {
		if bytes.Contains(got, []byte(`#include "`+h+`"`)) {
			t.Errorf("generated copy still includes %s from outside the package", h)
		}
		if !bytes.Contains(got, []byte(`#line 1 "cuda/`+h+`"`)) {
			t.Errorf("%s missing from the generated copy", h)
		}
	}
}

func TestBuildMissingFolder(t *testing.T) {
	if _, err := Build(t.TempDir()); err == nil {
		t.Fatal("no error for a folder without kernel sources")
	}
}
