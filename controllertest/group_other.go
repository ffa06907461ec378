//go:build unix && !linux

package controllertest

import (
	"syscall"
	"time"
)

func deathSignal(*syscall.SysProcAttr) {}

func waitGroupGone(int, time.Duration) {}
