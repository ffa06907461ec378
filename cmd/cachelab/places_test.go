package main

import (
	"sync"
	"testing"
)

// The scripts (TestCLI) each run cachelab in processes of their own, and
// mostly wait on them: four run at once. The tests that run the CLI in
// this process (inprocess_test.go) run one at a time, since client-go's
// feature gates are the process's; the longest of them run beside the
// scripts, each in one of the four places, instead of before them
// (inProcess). The places are counted here, not by go test's -parallel
// (testparallel.Gated): go test would count a test that waits for the
// process among its places, and hold back a script that could run.
var places struct {
	sync.Mutex
	cond    *sync.Cond
	free    int // leakChecked.Run sets it
	process sync.Mutex
}

func init() { places.cond = sync.NewCond(&places.Mutex) }

// takePlace waits for one of the places, and returns its release.
func takePlace() (release func()) {
	places.Lock()
	for places.free == 0 {
		places.cond.Wait()
	}
	places.free--
	places.Unlock()
	return sync.OnceFunc(func() {
		places.Lock()
		places.free++
		places.Unlock()
		places.cond.Signal()
	})
}

// inProcess marks t parallel and waits until it has the process (no other
// in-process run) and a place.
func inProcess(t *testing.T) {
	t.Helper()
	t.Parallel()
	places.process.Lock()
	release := takePlace()
	t.Cleanup(func() {
		release()
		places.process.Unlock()
	})
}
