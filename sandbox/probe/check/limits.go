package check

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ForkBomb forks paused children until the kernel refuses or a cap well
// above the pids limit is reached, holds them for hold, then kills them.
func ForkBomb(cfg Config, hold time.Duration) Result {
	limit := cfg.PidsLimit
	capN := 2*limit + 64
	if limit <= 0 {
		capN = 512
	}
	want := fmt.Sprintf("fork fails with EAGAIN below the pids limit of %d", limit)
	var kids []int
	var stopErr syscall.Errno
	for int64(len(kids)) < capN {
		pid, _, e := syscall.RawSyscall(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0)
		if e != 0 {
			stopErr = e
			break
		}
		if pid == 0 {
			// Child: only raw system calls from here on.
			for {
				syscall.RawSyscall(syscall.SYS_PAUSE, 0, 0, 0)
			}
		}
		kids = append(kids, int(pid))
	}
	time.Sleep(hold)
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGKILL)
	}
	for _, k := range kids {
		var ws syscall.WaitStatus
		syscall.Wait4(k, &ws, 0, nil)
	}
	n := int64(len(kids))
	if stopErr == 0 {
		return Result{Name: "forkbomb_pids_limit", OK: false, Expected: want,
			Observed: fmt.Sprintf("forked %d processes without refusal (stopped at the probe's own cap)", n)}
	}
	ok := limit > 0 && n < limit && stopErr == syscall.EAGAIN
	return Result{Name: "forkbomb_pids_limit", OK: ok, Expected: want,
		Observed: fmt.Sprintf("forked %d, then %s", n, errName(stopErr))}
}

// MemBomb maps and touches memory in 16 MiB steps up to max bytes. Under a
// memory limit the kernel kills it first; reaching max means no limit held.
func MemBomb(max int64) Result {
	const step = 16 << 20
	var total int64
	var maps [][]byte
	for total < max {
		b, err := unix.Mmap(-1, 0, step, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return Result{Name: "memory_bomb_oom", OK: false, Expected: "killed by the OOM killer",
				Observed: fmt.Sprintf("mmap failed after %d MiB: %s", total>>20, errName(err))}
		}
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		maps = append(maps, b)
		total += step
	}
	runtime.KeepAlive(maps)
	return Result{Name: "memory_bomb_oom", OK: false, Expected: "killed by the OOM killer",
		Observed: fmt.Sprintf("allocated and touched %d MiB without being killed", total>>20)}
}

// Fill writes dir/.mass-probe-fill until the filesystem refuses or max bytes
// are written, then removes the file. The cap holds when the write fails with
// ENOSPC or EDQUOT at no more than capBytes.
func Fill(name, dir string, capBytes, max int64) Result {
	want := fmt.Sprintf("ENOSPC at no more than %d MiB", capBytes>>20)
	p := filepath.Join(dir, ".mass-probe-fill")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return Result{Name: name, Expected: want, Observed: "create " + p + ": " + errName(err)}
	}
	defer os.Remove(p)
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	var total int64
	var werr error
	for total < max {
		n, err := f.Write(buf)
		total += int64(n)
		if err != nil {
			werr = err
			break
		}
	}
	if werr == nil {
		werr = f.Sync()
	}
	obs := fmt.Sprintf("wrote %d MiB, then %s", total>>20, errName(werr))
	full := errors.Is(werr, syscall.ENOSPC) || errors.Is(werr, syscall.EDQUOT)
	ok := full && capBytes > 0 && total <= capBytes
	return Result{Name: name, OK: ok, Expected: want, Observed: obs}
}

// CPUBurn spins threads for d and compares the CPU time the process got
// with the configured quota.
func CPUBurn(cfg Config, threads int, d time.Duration) Result {
	limit := float64(cfg.NanoCPUs) / 1e9
	want := fmt.Sprintf("cgroup quota %.2f CPU and measured use within it", limit)
	quota, qerr := cpuQuota()
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			x := uint64(1)
			for time.Since(start) < d {
				for j := 0; j < 100000; j++ {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		}()
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	cpu := tvSec(after.Utime) - tvSec(before.Utime) + tvSec(after.Stime) - tvSec(before.Stime)
	used := cpu / wall
	qs := "none"
	if qerr != nil {
		qs = "unreadable (" + qerr.Error() + ")"
	} else if quota > 0 {
		qs = fmt.Sprintf("%.2f", quota)
	}
	obs := fmt.Sprintf("quota %s CPU; %d threads used %.2f CPU over %.1fs", qs, threads, used, wall)
	ok := limit > 0 && qerr == nil && quota > 0 && math.Abs(quota-limit) < 0.01 && used <= limit*1.25+0.05
	return Result{Name: "cpu_burn_capped", OK: ok, Expected: want, Observed: obs}
}

func tvSec(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// cpuQuota reads the CPU quota of this cgroup (v1 or v2) in CPUs; 0 means none.
func cpuQuota() (float64, error) {
	if s, err := readSmall("/sys/fs/cgroup/cpu.max", 128); err == nil {
		f := strings.Fields(s)
		if len(f) != 2 {
			return 0, fmt.Errorf("cpu.max %q", s)
		}
		if f[0] == "max" {
			return 0, nil
		}
		q, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || p == 0 {
			return 0, fmt.Errorf("cpu.max %q", s)
		}
		return q / p, nil
	}
	qs, err := readSmall("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", 64)
	if err != nil {
		return 0, err
	}
	ps, err := readSmall("/sys/fs/cgroup/cpu/cpu.cfs_period_us", 64)
	if err != nil {
		return 0, err
	}
	q, err1 := strconv.ParseFloat(strings.TrimSpace(qs), 64)
	p, err2 := strconv.ParseFloat(strings.TrimSpace(ps), 64)
	if err1 != nil || err2 != nil || p == 0 {
		return 0, fmt.Errorf("cfs quota %q period %q", qs, ps)
	}
	if q < 0 {
		return 0, nil
	}
	return q / p, nil
}

// MemStat reports the memory cgroup's OOM-kill count and swap allowance.
type MemStat struct {
	OOMKills   int64 `json:"oom_kills"`
	LimitBytes int64 `json:"limit_bytes"` // -1: unlimited
	SwapBytes  int64 `json:"swap_bytes"`  // swap allowed beyond the limit; -1 unknown/unlimited
	HostSwap   int64 `json:"host_swap"`   // SwapTotal of the machine
}

// ReadMemStat reads cgroup v2 or v1 memory files.
func ReadMemStat() MemStat {
	st := MemStat{LimitBytes: -1, SwapBytes: -1}
	num := func(p string) (int64, bool) {
		s, err := readSmall(p, 64)
		if err != nil {
			return 0, false
		}
		s = strings.TrimSpace(s)
		if s == "max" {
			return -1, true
		}
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	if ev, err := readSmall("/sys/fs/cgroup/memory.events", 4096); err == nil {
		st.OOMKills = field(ev, "oom_kill")
		st.LimitBytes, _ = num("/sys/fs/cgroup/memory.max")
		st.SwapBytes, _ = num("/sys/fs/cgroup/memory.swap.max")
	} else {
		oc, _ := readSmall("/sys/fs/cgroup/memory/memory.oom_control", 4096)
		st.OOMKills = field(oc, "oom_kill")
		st.LimitBytes, _ = num("/sys/fs/cgroup/memory/memory.limit_in_bytes")
		if st.LimitBytes > 1<<60 {
			st.LimitBytes = -1
		}
		if sw, ok := num("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"); ok && st.LimitBytes > 0 && sw < 1<<60 {
			st.SwapBytes = sw - st.LimitBytes
		}
	}
	if mi, err := readSmall("/proc/meminfo", 1<<16); err == nil {
		st.HostSwap = field(strings.ReplaceAll(mi, ":", ""), "SwapTotal") << 10
	}
	return st
}

// field returns the number after key in "key value" lines.
func field(text, key string) int64 {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == key {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}
