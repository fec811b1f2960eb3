//go:build masscuda || masscudaemu

package kernels

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
)

var (
	dev     *device.Device
	ops     *Ops
	seed    = flag.Uint64("seed", 0, "random seed for the check inputs (0: from the clock)")
	ltDir   = flag.String("cublaslt-dir", "", "folder holding libcublasLt.so.13/.12/.11 (default $MASS_CUBLASLT_DIR)")
	results []row
)

type row struct {
	name     string
	err, tol float64
}

func TestMain(m *testing.M) {
	flag.Parse()
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	var err error
	dev, err = device.Open(0, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open device:", err)
		os.Exit(1)
	}
	if err := dev.Do(func(x *device.Exec) error { ops, err = New(x, *ltDir); return err }); err != nil {
		fmt.Fprintln(os.Stderr, "kernels:", err)
		os.Exit(1)
	}
	code := m.Run()
	sort.SliceStable(results, func(i, j int) bool { return results[i].name < results[j].name })
	fmt.Printf("\nkernel checks (seed %d, device %s)\n%-34s %12s %8s  %s\n", *seed, dev.Info().Name, "output", "rel err", "tol", "")
	for _, r := range results {
		ok := "ok"
		if !(r.err <= r.tol) {
			ok = "FAIL"
		}
		fmt.Printf("%-34s %12.3e %8.0e  %s\n", r.name, r.err, r.tol, ok)
	}
	dev.Do(func(x *device.Exec) error { return ops.Close() })
	dev.Close()
	os.Exit(code)
}

func rng(t *testing.T) *rand.Rand {
	h := uint64(0)
	for _, c := range t.Name() {
		h = h*131 + uint64(c)
	}
	return rand.New(rand.NewPCG(*seed, h))
}

// randBF16 returns n normal values scaled by s and rounded to bf16, so that the GPU and
// the reference see the same inputs.
func randBF16(r *rand.Rand, n int, s float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = cuda.RoundBF16(float32(r.NormFloat64()) * s)
	}
	return out
}

// env collects device blocks of one check and frees them at the end.
type env struct {
	t      *testing.T
	x      *device.Exec
	blocks []devmem.Block
}

// must aborts the check on a device error. It panics rather than calling t.Fatal, which
// would end the device's owner goroutine; run recovers and fails the test.
func (e *env) must(err error) {
	if err != nil {
		panic(abort{err})
	}
}

type abort struct{ err error }

func (e *env) bf16(v []float32) P {
	b, err := UploadBF16(e.x, v)
	e.must(err)
	e.blocks = append(e.blocks, b)
	return b.Ptr
}

func (e *env) f32(v []float32) P {
	b, err := Upload(e.x, v)
	e.must(err)
	e.blocks = append(e.blocks, b)
	return b.Ptr
}

func (e *env) i32(v []int32) P {
	b, err := Upload(e.x, v)
	e.must(err)
	e.blocks = append(e.blocks, b)
	return b.Ptr
}

// out allocates an output of n elements of size bytes each, poisoned with 0xFF bytes (NaN
// in both bf16 and fp32) so that an element the kernel fails to write cannot pass.
func (e *env) out(n, size int) P {
	b, err := e.x.Alloc(int64(n * size))
	e.must(err)
	e.must(e.x.Memset8(b.Ptr, 0xff, int64(n*size)))
	e.blocks = append(e.blocks, b)
	return b.Ptr
}

func (e *env) getBF16(p P, n int) []float32 {
	v, err := DownloadBF16(e.x, devmem.Block{Ptr: p}, n)
	e.must(err)
	return v
}

func (e *env) getF32(p P, n int) []float32 {
	v, err := Download[float32](e.x, devmem.Block{Ptr: p}, n)
	e.must(err)
	return v
}

func (e *env) check(name string, got, want []float32, tol float64) {
	e.t.Helper()
	re := cuda.RelErr(got, want)
	results = append(results, row{name, re, tol})
	if !(re <= tol) {
		e.t.Errorf("%s: relative error %.3g exceeds %.0e", name, re, tol)
	}
}

// run executes fn on the device thread with a fresh env.
func run(t *testing.T, fn func(e *env)) {
	t.Helper()
	err := dev.Do(func(x *device.Exec) (err error) {
		e := &env{t: t, x: x}
		defer func() {
			if r := recover(); r != nil {
				a, ok := r.(abort)
				if !ok {
					panic(r)
				}
				err = a.err
			}
			x.Sync()
			for _, b := range e.blocks {
				x.Free(b)
			}
		}()
		fn(e)
		return x.Sync()
	})
	if err != nil {
		t.Fatal(err)
	}
}
