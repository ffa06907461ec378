package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(runProcess(NewMain(), os.Args[1:]))
}

// runProcess runs m as the process: SIGINT (Ctrl-C), SIGTERM and SIGHUP
// cancel the run, and a closed stdout fails its next write, so that the
// run stops its informers, stops etcd and removes what it wrote before the
// process exits; a second signal exits at once (signals.go). The process
// ends with the run, so the run does not wait for the embedded etcd's
// last goroutines to end (sim.Options.QuickClose).
func runProcess(m *Main, args []string) int {
	m.handlePanics()
	m.exiting = true
	ctx, stop := notifyContext(context.Background(), m.atOnce)
	defer stop()
	return m.Run(ctx, args)
}
