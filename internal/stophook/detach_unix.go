//go:build unix

package stophook

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// startDetached starts bin in its own session and process group, with
// stdin from /dev/null, stdout and stderr to out (nil: /dev/null), no
// other file descriptor and a nice value of 10, and does not wait for it:
// once the hook exits, the child belongs to init, which reaps it when the
// run ends.
func startDetached(bin string, args []string, out *os.File) (int, error) {
	closeInheritedOnExec()
	cmd := exec.Command(bin, args...)
	if out != nil {
		cmd.Stdout, cmd.Stderr = out, out
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	// The whole process group: on Linux every thread the child has by
	// now, and the threads it makes later inherit the value.
	_ = syscall.Setpriority(syscall.PRIO_PGRP, pid, 10)
	_ = cmd.Process.Release()
	return pid, nil
}

// closeInheritedOnExec marks every descriptor above 2 close-on-exec: Go
// opens its own so, but the hook may have inherited some from its parent
// without the flag, and the child must not hold them (a pipe held open
// would keep the parent waiting for its end).
func closeInheritedOnExec() {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
				syscall.CloseOnExec(fd)
			}
		}
		return
	}
}
