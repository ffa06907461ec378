package apistorage_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// The watch cache runs no loop on the wall clock that can change what a
// client is answered (walltime.go): kube-apiserver's cache consistency
// checker, on by default since 1.34, compares the cache with etcd every
// 5 to 7.5 minutes of wall time and, failing, sends LISTs to etcd. In a
// simulation a person's pause at a --step prompt would decide that, and
// its wait loop, once it has run, kept the cache from ever counting as
// quiescent (issue 27, case 3). C8.
func TestNoWallClockConsistencyChecker(t *testing.T) {
	wd := newWorld(t)
	s := wd.server(t, true)
	for _, g := range goroutines.All() {
		if strings.Contains(g, "cacher/consistency.(*Checker).Run") || strings.Contains(g, "cacher/consistency.Checker.Run") {
			t.Fatalf("kube-apiserver's cache consistency checker runs, on the wall clock:\n%s", g)
		}
	}
	if !s.Cached() {
		t.Fatal("the server has no watch cache")
	}
}
