package apistorage_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/internal/testdeadline"
)

// A read that waits for the watch cache to catch up (a LIST at a
// resourceVersion the cache has not seen) starts a goroutine that sleeps
// 3 s on the cache's clock and then wakes the waiters
// (watch_cache.go waitUntilFreshLocked). On a kube-apiserver it ends 3 s
// later; here the clock is a scenario's, which may never move again, so
// the goroutine outlived the server: goleak found one after a test whose
// LIST had raced a write. Closing the server ends it.
func TestCloseEndsAFreshnessWait(t *testing.T) {
	_, s := heldBehind(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.ListerWatcher("").ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: strconv.Itoa(3)})
		done <- err
	}()
	waitFor(t, func() bool { return waiting() > 0 })
	s.ReleaseCache()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("LIST at the cache's next revision: %v", err)
		}
	case <-testdeadline.Context(t).Done():
		t.Fatal("a LIST waiting for a released cache did not end")
	}
	if waiting() == 0 {
		t.Fatal("the freshness wait's timer goroutine ended before the server closed: this test no longer shows anything")
	}
	s.Close()
	waitFor(t, func() bool { return waiting() == 0 })
}

// waiting counts the goroutines that wait out a freshness wait's 3 s.
func waiting() int {
	n := 0
	for _, g := range goroutines.All() {
		if strings.Contains(g, "waitUntilFreshLocked.func") {
			n++
		}
	}
	return n
}
