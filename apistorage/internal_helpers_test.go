package apistorage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/listwatch"
)

// cachedWorld is an embedded etcd and a Server with its watch cache on a
// fake clock, for the tests that look inside the cacher; the etcd is
// closed when the test ends. create writes pod ns0/<name> in process.
func cachedWorld(t *testing.T, ctx context.Context) (s *Server, create func(name string)) {
	t.Helper()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	s, err = New(ctx, e.Client(), listwatch.Pods, Options{Cache: true, Clock: clocktesting.NewFakeClock(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	w := listwatch.NewWriter(e.LocalKV(), listwatch.Pods, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprint(n)) },
	})
	return s, func(name string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Pod")
		u.SetNamespace("ns0")
		u.SetName(name)
		if _, err := w.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
}
