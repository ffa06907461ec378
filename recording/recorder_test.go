package recording

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// stoppingLW answers as an HTTP client does while its informer stops: a
// LIST whose context is done fails with the context's error, and a
// watch's stream (apimachinery's StreamWatcher, as client-go's and
// wire's) hands on one event, then, once its context is done, the
// decoding error its client makes of that, as an ERROR event.
type stoppingLW struct{}

func (stoppingLW) ListWithContext(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &unstructured.UnstructuredList{}, nil
}

func (stoppingLW) WatchWithContext(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
	pod := &unstructured.Unstructured{}
	pod.SetAPIVersion("v1")
	pod.SetKind("Pod")
	pod.SetName("a")
	pod.SetResourceVersion("5")
	return watch.NewStreamWatcher(&ctxDecoder{ctx: ctx, first: pod, closed: make(chan struct{})},
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding")), nil
}

type ctxDecoder struct {
	ctx    context.Context
	first  runtime.Object
	closed chan struct{}
}

func (d *ctxDecoder) Decode() (watch.EventType, runtime.Object, error) {
	if o := d.first; o != nil {
		d.first = nil
		return watch.Added, o, nil
	}
	select {
	case <-d.ctx.Done():
		return "", nil, d.ctx.Err()
	case <-d.closed:
		return "", nil, errors.New("http: read on closed response body")
	}
}

func (d *ctxDecoder) Close() { close(d.closed) }

// What an informer's client makes of the informer's own stop (a LIST's
// "context canceled", a watch's ERROR event "unable to decode an event
// from the watch stream: context canceled") is not the server's answer:
// a session that kept it would have its replay's server send a 500 that
// the recorded informer never acted on, and the replayed informers
// relist. The Recorder writes none of it; the watch's end it writes.
func TestRecorderLeavesOutTheInformersStop(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		kinds := recordStop(t, ctx, func(w watch.Interface) {
			cancel()
			for ev := range w.ResultChan() {
				t.Errorf("handed on after the stop: %s %v", ev.Type, ev.Object)
			}
			w.Stop()
		}, true)
		if d := cmp.Diff([]string{"watch ", "event ADDED", "watch-end "}, kinds); d != "" {
			t.Errorf("lines written (-want +got):\n%s", d)
		}
	})
}

// recordStop opens a watch through a Recorder, takes its first event,
// stops it with stop, and returns the kinds (and event types) of the
// lines written, after a LIST if list.
func recordStop(t *testing.T, ctx context.Context, stop func(watch.Interface), list bool) []string {
	t.Helper()
	var buf bytes.Buffer
	r := NewRecorder(stoppingLW{}, NewWriter(&buf, time.Now), Options{})
	w, err := r.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "4"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("first event %s, want ADDED", ev.Type)
	}
	stop(w)
	if list {
		if _, err := r.ListWithContext(ctx, metav1.ListOptions{}); err == nil {
			t.Error("a LIST after the stop did not fail")
		}
	}
	r.Wait()

	var kinds []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, l.Kind+" "+l.Type)
	}
	return kinds
}
