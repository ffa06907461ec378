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
// process exits (signals.go).
func runProcess(m *Main, args []string) int {
	m.handlePanics()
	ctx, stop := notifyContext(context.Background())
	defer stop()
	return m.Run(ctx, args)
}
