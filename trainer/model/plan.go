package model

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Plan is what training a configuration needs in memory on the CPU backends.
type Plan struct {
	Params      int64 // text-decoder parameters (Expected)
	DiskBF16    int64 // bytes of those parameters in BF16
	HostFP32    int64 // bytes Load holds after widening to float32
	Available   int64 // MemAvailable (or the cgroup limit, when lower); 0 if unknown
	LinearLayer int   // Gated DeltaNet layers (hybrid only)
	FullLayers  int
}

// NumParams counts the parameters of Expected.
func (c *Config) NumParams() int64 {
	var n int64
	for _, s := range c.Expected() {
		p := int64(1)
		for _, d := range s {
			p *= int64(d)
		}
		n += p
	}
	return n
}

// MemoryPlan sizes c against this machine.
func (c *Config) MemoryPlan() Plan {
	p := Plan{Params: c.NumParams(), Available: availableMemory()}
	p.DiskBF16, p.HostFP32 = 2*p.Params, 4*p.Params
	for l := 0; l < c.NumLayers; l++ {
		if c.IsLinear(l) {
			p.LinearLayer++
		} else {
			p.FullLayers++
		}
	}
	return p
}

// Fits refuses a plan whose float32 weights alone exceed available memory.
func (p Plan) Fits() error { return p.fits(false) }

// fits is Fits, or with bf16 the check of a load that keeps bf16 matrices.
func (p Plan) fits(bf16 bool) error {
	if bf16 {
		if p.Available > 0 && p.DiskBF16 > p.Available {
			return fmt.Errorf("%w: %s parameters need %s as bf16 on the host, this machine has %s available",
				ErrDoesNotFit, humanCount(p.Params), humanBytes(p.DiskBF16), humanBytes(p.Available))
		}
		return nil
	}
	if p.Available > 0 && p.HostFP32 > p.Available {
		return fmt.Errorf("%w: %s parameters need %s as float32 on the host, this machine has %s available (mass-train holds the weights as float32 on the host for every backend)",
			ErrDoesNotFit, humanCount(p.Params), humanBytes(p.HostFP32), humanBytes(p.Available))
	}
	return nil
}

// String is a one-line report.
func (p Plan) String() string {
	s := fmt.Sprintf("%s parameters (%d); bf16 on disk %s, float32 in memory %s, available %s",
		humanCount(p.Params), p.Params, humanBytes(p.DiskBF16), humanBytes(p.HostFP32), humanBytes(p.Available))
	if p.LinearLayer > 0 {
		s += fmt.Sprintf("; %d Gated DeltaNet + %d full-attention layers", p.LinearLayer, p.FullLayers)
	}
	return s
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%d", n)
}

func humanBytes(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// availableMemory is /proc/meminfo's MemAvailable, lowered to the cgroup's
// memory.max when that is smaller; 0 when neither is readable.
func availableMemory() int64 {
	var avail int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 2 && fs[0] == "MemAvailable:" {
				if v, err := strconv.ParseInt(fs[1], 10, 64); err == nil {
					avail = v << 10
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && (avail == 0 || v < avail) {
			avail = v
		}
	}
	return avail
}
