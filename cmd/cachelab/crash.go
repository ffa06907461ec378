package main

import (
	"context"
	"fmt"
	"runtime/debug"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// A panic on one of the run's goroutines (in an informer, a handler, a
// reflector) is a bug in cachelab too, and ends the run as an internal
// error: exit 3, with nothing left behind. client-go's and cachelab's
// informers recover such panics with utilruntime.HandleCrash*, which runs
// utilruntime.PanicHandlers and then panics again, ending the process
// before any deferred clean-up could run. So the process adds a panic
// handler that abandons the run (sim.Session.Abandon: the embedded etcd's
// data directory, or the run's keys in an external etcd) and exits 3.
// A panic on the main goroutine is Run's to handle (root.go).

func (m *Main) setRunning(s session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running = s
}

// exitOnPanic is the panic handler runProcess installs.
func (m *Main) exitOnPanic(_ context.Context, p any) {
	fmt.Fprintf(m.Stderr, "cachelab: internal error (a bug in cachelab), on another goroutine: %v\n%s", p, debug.Stack())
	m.quitting.Store(true)
	m.mu.Lock()
	s, dir := m.running, m.dataDir
	m.mu.Unlock()
	if s != nil {
		s.Abandon()
	}
	if dir != "" {
		_ = removeDataDir(dir)
	}
	m.exit(exitRunError)
}

// handlePanics makes exitOnPanic the process's last panic handler, after
// the one that logs the panic.
func (m *Main) handlePanics() {
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, m.exitOnPanic)
}
