//go:build unix

package controllertest

import (
	"os/exec"
	"syscall"
)

// ownGroup makes the command lead a process group of its own, so that
// signalGroup reaches everything it starts; on Linux it is also killed
// if the test's process dies first.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	deathSignal(cmd.SysProcAttr)
}

// signalGroup sends the process group led by pid SIGTERM, or SIGKILL.
func signalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-pid, sig)
}
