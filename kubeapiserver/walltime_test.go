package kubeapiserver_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/internal/apiworld"
)

// A watch's timeoutSeconds passes on the server's clock, never on the
// wall clock (walltime.go; issue 47, case 4: after a pause of five
// minutes at a --step prompt, kube-apiserver's own handler ended a watch
// at its timeoutSeconds=300 of real time while the scenario's clock stood
// still). Here a watch asks for 1 s: it is still open after 1.5 s of wall
// time with the server's clock standing still, and ends without an event
// once the clock passes its second, as at a timeout (H7). The test waits
// real time because real time is what it shows cannot end the watch.
func TestWatchTimeoutIsOnTheServersClock(t *testing.T) {
	for _, cache := range []bool{false, true} {
		wd := apiworld.Start(t, cache)
		cfg, hc := wd.HTTPClient(t, "u1")
		dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
		if err != nil {
			t.Fatal(err)
		}
		pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
		w, err := dyn.Resource(pods).Namespace("ns0").Watch(context.Background(), metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		wd.Settle(t)
		select {
		case ev, ok := <-w.ResultChan():
			t.Fatalf("cache %v: after 1.5 s of wall time, with the server's clock still, the watch ended (%v, %v)", cache, ev.Type, ok)
		case <-time.After(1500 * time.Millisecond):
		}
		if got := wd.Server.Watches("u1").Open; got != 1 {
			t.Errorf("cache %v: %d watches open on the server, want 1", cache, got)
		}
		wd.Step(t, 2*time.Second)
		for ev := range w.ResultChan() {
			if ev.Type != "BOOKMARK" {
				t.Errorf("cache %v: at the timeout, an event %v, want the stream's end (bookmarks aside)", cache, ev.Type)
			}
		}
	}
}
