package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/informer"
)

// runOne parses src and runs it once in the given stack and world,
// failing the test on a divergence; it returns the result and the run's
// error.
func runOne(t *testing.T, name, src string, opts Options) (*Result, error) {
	t.Helper()
	sc, err := Parse(name+".txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	res, err := Run(context.Background(), sc, opts)
	if err == nil && res.Divergence != nil {
		t.Fatalf("%s: %v", name, res.Divergence)
	}
	return res, err
}

// Issue 27, case 1: a step finishes whatever the number of keys. A
// controller with one worker over 1,000 new objects reconciles each once
// in the step that created them (the round budget of 200 failed at 201).
func TestControllerStepScalesWithKeys(t *testing.T) {
	for _, tc := range []struct {
		server  string
		stack   informer.Stack
		workers string
		n       string
	}{
		{ServerWatchCache, informer.Default, "1", "1000"},
		{ServerEtcd, informer.Classic, "3", "1000"},
	} {
		t.Run(tc.server+"/"+string(tc.stack), func(t *testing.T) {
			src := script("start-controller workers="+tc.workers, "start", "bulk-create n="+tc.n)
			res, err := runOne(t, "many-keys", src, Options{Server: tc.server, Stack: tc.stack})
			if err != nil {
				t.Fatal(err)
			}
			last := res.Steps[len(res.Steps)-1]
			got := 0
			for _, e := range last.Sides["cachelab"] {
				if e.Layer == "reconcile" {
					got++
				}
			}
			if want := 1000; got != want {
				t.Errorf("reconcile lines in the bulk-create step: %d, want %d", got, want)
			}
		})
	}
}

// Issue 27, case 1, the other half: the "never rests" diagnosis fires only
// for a key that really keeps coming back, and names it.
func TestRestlessKeyIsNamed(t *testing.T) {
	src := script("create ns0/a", "start-controller writes", "start")
	_, err := runOne(t, "restless", src, Options{Server: ServerEtcd, ctlRestless: true})
	if err == nil || !strings.Contains(err.Error(), "reconciled ns0/a 100 times at 0s") {
		t.Fatalf("err = %v, want ns0/a named as never at rest", err)
	}
}
