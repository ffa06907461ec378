package controllertest

import (
	"context"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/kubeapiserver"
)

// A request's line in the trace names nothing that changes from run to
// run: not a watch's timeout, not the time in the name client-go's event
// recorder gives an event.
func TestShortURI(t *testing.T) {
	for uri, want := range map[string]string{
		"/api/v1/pods?watch=true&timeoutSeconds=412&resourceVersion=5":      "/api/v1/pods?resourceVersion=5&watch=true",
		"/api/v1/namespaces/ns0/events/example-foo.18ece3ee891936b6":        "/api/v1/namespaces/ns0/events/example-foo.<time>",
		"/apis/events.k8s.io/v1/namespaces/ns0/events/a.b.18ece3ee891936b6": "/apis/events.k8s.io/v1/namespaces/ns0/events/a.b.<time>",
		"/api/v1/namespaces/ns0/configmaps/example-foo.18ece3ee891936b6":    "/api/v1/namespaces/ns0/configmaps/example-foo.18ece3ee891936b6",
		"/api/v1/namespaces/ns0/events":                                     "/api/v1/namespaces/ns0/events",
	} {
		if got := shortURI(uri); got != want {
			t.Errorf("shortURI(%q) = %q, want %q", uri, got, want)
		}
	}
}

// A world cannot stop a controller it did not start: stop, with an
// attached controller, is refused, and says why.
func TestStopRefusedWhenAttached(t *testing.T) {
	w := start(t, Options{Resources: []string{"configmaps"}, Outside: &Outside{}})
	w.outside.mu.Lock()
	w.outside.attached = true
	w.outside.mu.Unlock()
	err := w.Fault(context.Background(), "stop")
	if err == nil || !strings.Contains(err.Error(), "Attach") {
		t.Errorf("stop with an attached controller: %v, want a refusal that names Attach", err)
	}
}

// no-stale-writes counts a 409 only after the controller's own write of
// the object (its status included): a conflict after the story's write
// is the world moving on, which a retry mends.
func TestNoStaleWritesAfterOwnWrite(t *testing.T) {
	const foo = "/apis/example.com/v1/namespaces/ns0/foos/f"
	put := func(user, uri string, status int) kubeapiserver.Request {
		return kubeapiserver.Request{User: user, Method: "PUT", URI: uri, Status: status}
	}
	for _, c := range []struct {
		name   string
		log    []kubeapiserver.Request
		broken bool
	}{
		{"after the story's update", []kubeapiserver.Request{put(StoryUser, foo, 200), put(ControllerUser, foo, 409)}, false},
		{"after its own update", []kubeapiserver.Request{put(ControllerUser, foo, 200), put(ControllerUser, foo+"?fieldManager=x", 409)}, true},
		{"after its own status write", []kubeapiserver.Request{put(ControllerUser, foo+"/status", 200), put(ControllerUser, foo+"/status", 409)}, true},
		{"its own, then the story's", []kubeapiserver.Request{put(ControllerUser, foo, 200), put(StoryUser, foo, 200), put(ControllerUser, foo, 409)}, false},
		{"another object's", []kubeapiserver.Request{put(ControllerUser, foo+"x", 200), put(ControllerUser, foo, 409)}, false},
	} {
		err := noStaleWrites(&End{AllRequests: c.log})
		if (err != nil) != c.broken {
			t.Errorf("%s: %v, want broken %v", c.name, err, c.broken)
		}
	}
}
