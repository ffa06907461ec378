// Package testparallel sets a test binary's -parallel when its command
// line does not: for packages whose parallel tests mostly wait (on etcd,
// on a scenario's settling, on a child process), so that more of them
// overlap than the machine has cores. Gated is for a package that counts
// its running tests at a gate of its own: the command line's -parallel,
// or the package's default, becomes the gate's limit.
package testparallel

import (
	"flag"
	"strconv"
)

// Default sets -test.parallel to n unless the command line set it. It
// parses the command line first; call it from TestMain, before m.Run.
func Default(n string) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", n)
	}
}

// Gated is Default for a package whose parallel tests wait at a gate of
// their own before they do their work (sim's runs wait until no run of
// the other client-go stack is in progress). go test counts a test that
// waits there as running, so with -parallel n a few runs of one stack
// could hold every place while they wait for one run of the other. So
// the package's gate counts instead: Gated returns how many tests may
// pass it at once (the command line's -parallel, or n), and sets
// -test.parallel high enough that go test's places are never the limit.
func Gated(n int) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		if given, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err == nil && given > 0 {
			n = given
		}
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		// Under -fuzz, -parallel is how many fuzzing workers go test
		// starts, each a process of its own (with its etcds and files):
		// it stays as given, or go test's default.
		return n
	}
	_ = flag.Set("test.parallel", strconv.Itoa(max(n, ungated)))
	return n
}

// ungated is go test's -parallel under Gated: more than the tests a
// package has waiting at once.
const ungated = 1 << 16
