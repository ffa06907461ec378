package controllertest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// waitGroupGone waits, up to limit, until no process of group pgid is
// left that has not ended (a zombie has ended: it waits only to be
// reaped, by whoever is its parent now).
func waitGroupGone(pgid int, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		if !groupLeft(pgid) {
			return
		}
		<-time.After(time.Millisecond) // a SIGKILL takes effect when the process next runs
	}
}

func groupLeft(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // it ended meanwhile
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:])) // state, ppid, pgrp, ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
