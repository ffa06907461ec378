package world

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/sim/trace"
)

// Each try of a call is numbered within its call, and says what the
// client waited before it, by the rule it followed (H4): the Retry-After
// of the try before, or a second after a broken connection. A second
// call starts again at try 1.
func TestWireTriesAreNumberedPerCall(t *testing.T) {
	rec := &trace.Recorder{}
	list, _ := withWireCall(context.Background(), "LIST")
	recordTry(rec, list, "GET", "/api/v1/pods", 0, "", errors.New("read: connection reset by peer"))
	recordTry(rec, list, "GET", "/api/v1/pods", 503, "2", nil)
	recordTry(rec, list, "GET", "/api/v1/pods", 200, "", nil)
	watch, call := withWireCall(context.Background(), "w4")
	recordTry(rec, watch, "GET", "/api/v1/pods?watch=true", 200, "", nil)
	recordTry(rec, context.Background(), "GET", "/api/v1/pods", 200, "", nil) // no call: a try the Conn did not make
	var got []string
	for _, e := range rec.Take() {
		got = append(got, e.Detail)
	}
	want := []string{
		"LIST GET /api/v1/pods failed: read: connection reset by peer",
		"LIST try 2 (after 1s, as after a broken connection) GET /api/v1/pods 503 Service Unavailable (Retry-After: 2)",
		"LIST try 3 (after Retry-After: 2s) GET /api/v1/pods 200 OK",
		"w4 GET /api/v1/pods?watch=true 200 OK",
		"GET /api/v1/pods 200 OK",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the wire lines (-want +got):\n%s", d)
	}

	// An ERROR inside w4's stream, and one its client made of a stream
	// it could not decode (H6).
	recordStreamError(rec, call, &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired})
	decoding := apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding").AsObject(errors.New("bad"))
	recordStreamError(rec, call, decoding.(*metav1.Status))
	events := rec.Take()
	if d := cmp.Diff(trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: "ERROR", Watch: "w4", Try: 1, Status: 200,
		Detail: "w4 ERROR 410 Expired came inside its 200 OK stream, as an event: the status line had said the watch began"}, events[0]); d != "" {
		t.Errorf("the stream's ERROR line (-want +got):\n%s", d)
	}
	if want := "w4 ERROR 500 InternalError made by its client, which could not decode the 200 OK stream"; events[1].Detail != want {
		t.Errorf("the client's ERROR line is %q, want %q", events[1].Detail, want)
	}
}
