// Package loadgen puts a test beside work that competes for the machine
// the way real work does: a second process that allocates and discards
// large maps of small objects on every core, so that its garbage
// collector, its memory traffic and its goroutines all take their share
// of the CPUs and of the memory bus.
//
// It is how a verdict that changes with load is looked for (issue 47).
// Busy loops alone did not show the failures users saw; a process
// building a 100,000-object world beside the run did, because it takes
// what a busy loop does not: memory bandwidth, page faults, the kernel's
// time, and GC work on every core. Nothing here measures anything: a test
// runs its scenarios under the load and holds their output to what it is
// without it, byte for byte.
//
//	test process ──Start──▶ the same test binary, re-run with CACHELAB_LOADGEN=1
//	     │                          └─ TestMain calls MaybeRun: allocate until stdin closes
//	     └── stop() closes its stdin and waits ──▶ the load ends
//
// The load process ends when its stdin closes, so it never outlives the
// test, even when the test is killed.
package loadgen

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
)

// envVar tells a test binary to be the load instead of running tests.
const envVar = "CACHELAB_LOADGEN"

// MaybeRun is the load, when the process was started to be it: it
// allocates until its stdin closes, then exits. A package whose tests
// use Start calls it first thing in TestMain.
func MaybeRun() {
	if os.Getenv(envVar) != "1" {
		return
	}
	var stop atomic.Bool
	for range runtime.GOMAXPROCS(0) {
		go churn(&stop)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	stop.Store(true)
	os.Exit(0)
}

// object is what churn allocates by the hundred thousand: about the size
// and shape of a small Kubernetes object's metadata in a cache.
type object struct {
	name, namespace, rv string
	labels              map[string]string
}

// churn builds maps of 100,000 objects and lets them go, keeping the last
// two live so the heap stays a few hundred MB and every cycle of the
// collector has real work.
func churn(stop *atomic.Bool) {
	var keep [2]map[string]*object
	for i := 0; !stop.Load(); i++ {
		m := make(map[string]*object, 1024)
		for j := range 100_000 {
			name := "obj-" + strconv.Itoa(j)
			m["ns0/"+name] = &object{name: name, namespace: "ns0", rv: strconv.Itoa(i*100_000 + j),
				labels: map[string]string{"app": "load", "n": strconv.Itoa(j % 7)}}
		}
		keep[i%2] = m
	}
}

// Start starts the load beside the test, and returns the function that
// ends it (also registered with t.Cleanup). The test binary must call
// MaybeRun in its TestMain.
func Start(t testing.TB) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envVar+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("loadgen: starting the load: %v", err)
	}
	done := false
	stop = func() {
		if done {
			return
		}
		done = true
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("loadgen: the load process: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// String describes the load, for a test's log.
func String() string {
	return fmt.Sprintf("a second process allocating maps of 100,000 objects on each of %d cores", runtime.GOMAXPROCS(0))
}
