package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C cancels the run; the run then stops its informers and etcd
	// before the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := NewMain().Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
