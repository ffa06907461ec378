//go:build full

package main

import (
	"context"
	"io"

	"github.com/cachelab/cachelab/internal/outsidecli"
)

func init() { outside = runOutsideJob }

func runOutsideJob(ctx context.Context, j outsideJob, stdout, stderr io.Writer) (bool, error) {
	return outsidecli.Run(ctx, outsidecli.Job(j), stdout, stderr)
}
