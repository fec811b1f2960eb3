package check

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func helperChecks() []named {
	return []named{one("helper_not_traceable", checkHelperTrace), one("helper_requests_unreadable", checkHelperRequests),
		one("main_process_foreign", checkMainProcess), one("helper_startup_race", checkHelperStartupRace)}
}

// checkHelperTrace attacks a live file helper session (the runner starts
// one before the static checks): the agent runs under the helper's uid, so
// only the helper being non-dumpable keeps it from attaching with ptrace or
// reading its memory and fds, and so from forging what massd is told.
func checkHelperTrace(cfg Config) Result {
	const want = "the running file helper (serve) refuses ptrace attach, /proc/PID/mem and /proc/PID/fd"
	pid := findHelper(cfg.Helper, "serve")
	if pid == 0 {
		return fail(want, "no running `"+cfg.Helper+" serve` process found")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// PTRACE_SEIZE does not stop the tracee; the probe's exit detaches it.
	seize := unix.PtraceSeize(pid)
	p := "/proc/" + strconv.Itoa(pid)
	mem, memErr := os.Open(p + "/mem")
	if memErr == nil {
		mem.Close()
	}
	_, fdErr := os.Readlink(p + "/fd/1")
	if cfg.GVisor() {
		// gVisor may show a non-dumpable process's fd links; opening
		// them is what answering in the helper's place needs (gVisor
		// 2022 allowed it, current gVisor refuses it).
		f, openErr := os.OpenFile(p+"/fd/1", os.O_WRONLY, 0)
		if openErr == nil {
			// Answer the host in the helper's place, as F1 did; the
			// runner checks that no such answer is believed
			// (helper_forgery_refused).
			forgeAnswers(f)
			f.Close()
		}
		ok := seize != nil && memErr != nil && openErr != nil
		return verdict(ok, "runsc: the running file helper refuses ptrace attach, /proc/PID/mem and opening /proc/PID/fd/1 (anything written there would still fail the session seal, see helper_forgery_refused)",
			fmt.Sprintf("helper pid %d: ptrace seize %s, open mem %s, open fd/1 %s (readlink %s)",
				pid, errName(seize), errName(pathErr(memErr)), errName(pathErr(openErr)), errName(pathErr(fdErr))))
	}
	ok := seize != nil && memErr != nil && fdErr != nil
	return verdict(ok, want, fmt.Sprintf("helper pid %d: ptrace seize %s, open mem %s, readlink fd/1 %s",
		pid, errName(seize), errName(pathErr(memErr)), errName(pathErr(fdErr))))
}

// ForgedPath marks the answers a probe forges in the helper's place.
const ForgedPath = "FORGED-BY-AGENT"

// forgeAnswers writes stat answers naming ForgedPath into a helper's
// response stream, unsealed as an agent must write them.
func forgeAnswers(w io.Writer) {
	body := []byte(`{"ok":true,"info":{"path":"` + ForgedPath + `","type":"file","size":1,"mode":420}}`)
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], uint32(len(body)))
	for i := 0; i < 20; i++ {
		_, _ = w.Write(append(h[:], body...))
		time.Sleep(10 * time.Millisecond)
	}
}

// findHelper finds a process whose command line is exactly helper cmd. Its
// /proc/PID/exe cannot identify it: a non-dumpable process hides that link.
func findHelper(helper, cmd string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != os.Getpid() && isCmd(pid, helper, cmd) {
			return pid
		}
	}
	return 0
}

// pathErr unwraps an *os.PathError to its errno.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	if le, ok := err.(*os.LinkError); ok {
		return le.Err
	}
	return err
}
