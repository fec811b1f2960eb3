package check

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"
)

// checkHelperRequests tries to read the host's request frames from the
// live file helper's stdin (/proc/PID/fd/0) while the runner keeps asking
// it for file operations: the seal stops forged answers, but what massd
// asks must not be readable either. Under runc the fd links of a
// non-dumpable process are refused outright; under gVisor the open must be
// refused too.
func checkHelperRequests(cfg Config) Result {
	const want = "the live file helper's stdin (/proc/PID/fd/0) cannot be opened: the host's request frames are not readable"
	pid := findHelper(cfg.Helper, "serve")
	if pid == 0 {
		return fail(want, "no running `"+cfg.Helper+" serve` process found")
	}
	p := "/proc/" + strconv.Itoa(pid) + "/fd/0"
	// A raw non-blocking fd: os.File.Fd would make it blocking again.
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return pass(want, fmt.Sprintf("helper pid %d: open fd/0 %s", pid, errName(err)))
	}
	defer syscall.Close(fd)
	n := readFor(fd, 3*time.Second)
	return fail(want, fmt.Sprintf("helper pid %d: fd/0 opened; read %d bytes of the host's requests in 3 s", pid, n))
}

// readFor reads fd (non-blocking) until d has passed and returns how
// many bytes came.
func readFor(fd int, d time.Duration) int {
	buf := make([]byte, 4096)
	total := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		n, err := syscall.Read(fd, buf)
		if n > 0 {
			total += n
		}
		if err != nil && !errors.Is(err, syscall.EAGAIN) {
			return total
		}
		if n <= 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return total
}
