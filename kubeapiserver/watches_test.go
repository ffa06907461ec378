package kubeapiserver_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/cachelab/cachelab/internal/apiworld"
)

// CloseWatches ends one user's watches as the server ends a watch at its
// timeout: client-go's watch closes without an event (H6, H7); another
// user's watch goes on.
func TestCloseWatchesEndsOneUsersResponses(t *testing.T) {
	wd := apiworld.Start(t, true)
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	open := func(user string) watch.Interface {
		cfg, hc := wd.HTTPClient(t, user)
		dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
		if err != nil {
			t.Fatal(err)
		}
		w, err := dyn.Resource(pods).Namespace("ns0").Watch(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	closed, kept := open("u1"), open("u2")
	wd.Settle(t)
	if got := wd.Server.Watches("u1").Open; got != 1 {
		t.Fatalf("u1 has %d watches open on the server, want 1", got)
	}
	if n := wd.Server.CloseWatches("u1"); n != 1 {
		t.Errorf("CloseWatches(u1) = %d, want 1", n)
	}
	if ev, ok := <-closed.ResultChan(); ok {
		t.Errorf("u1's watch after CloseWatches: %v, want closed without an event", ev.Type)
	}
	wd.Create(t, apiworld.Pod("ns0", "a", nil))
	if ev := <-kept.ResultChan(); ev.Type != watch.Added {
		t.Errorf("u2's watch: %v, want ADDED", ev.Type)
	}
	if n := wd.Server.CloseWatches("u1"); n != 0 {
		t.Errorf("CloseWatches(u1) again = %d, want 0", n)
	}
}
