package app

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the trainer's GOGC: its heap is large float slices without
// pointers, so collecting more often costs little CPU and keeps the peak
// resident set near the live activations instead of twice them.
const gcPercent = 25

// setMemoryLimit gives the Go runtime a soft memory limit of 90% of what this
// process may use (the cgroup's memory.max, else the machine's memory), so
// that the collector works harder before the kernel kills the trainer, and
// sets GOGC to gcPercent. An explicit GOMEMLIMIT or GOGC wins. It returns the
// limit set, or 0.
func setMemoryLimit() int64 {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	avail := memTotal()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && (avail == 0 || v < avail) {
			avail = v
		}
	}
	if avail <= 0 {
		return 0
	}
	limit := avail / 10 * 9
	debug.SetMemoryLimit(limit)
	return limit
}

// memTotal reads MemTotal from /proc/meminfo in bytes (0 when unknown).
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
