package controllertest

import (
	"os"
	"os/exec"
	"time"
)

// On Windows a controller's process is killed alone: there are no
// process groups to signal. (A settle cannot look at it either: package
// procstate reads Linux's /proc.)
func ownGroup(*exec.Cmd) {}

func signalGroup(pid int, _ bool) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

func waitGroupGone(int, time.Duration) {}
