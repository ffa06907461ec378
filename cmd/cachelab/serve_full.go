//go:build full

package main

import (
	"context"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/internal/outsidecli"
)

func init() { outside = runOutsideJob }

// runOutsideJob runs the one job of the process: no world runs yet, so
// klog's logger can still be set, to silence kube-apiserver's log (a
// line or more per placement's world).
func runOutsideJob(ctx context.Context, j outsideJob, stdout, stderr io.Writer) (bool, error) {
	klog.SetLogger(logr.Discard())
	return outsidecli.Run(ctx, outsidecli.Job(j), stdout, stderr)
}
