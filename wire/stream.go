package wire

import (
	"fmt"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
)

// A watch's response is a stream of JSON objects, one per event, each a
// WatchEvent: {"type": "ADDED", "object": {...}}. Nothing separates them
// but JSON's own syntax (kube-apiserver puts a newline after each; a
// client must not need one). The stream ends when the server's timeout
// or the client ends it; an ERROR event (a Status: 410 Expired when the
// watch's resourceVersion is too old) comes before the server ends it.
//
// apimachinery's StreamWatcher turns the decoded events into a
// watch.Interface, as client-go's REST client does: the end of the
// stream, a broken connection or a timeout close its channel; anything
// else that cannot be decoded (and a context canceled under it) is
// handed on as one ERROR event saying so, and then it closes.

// stream starts reading a 200's body as a watch.
func stream(resp *http.Response) (watch.Interface, error) {
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if media != "" && media != jsonType {
		resp.Body.Close() // client-go leaves it open until the request's context ends
		return nil, runtime.NegotiateError{ContentType: media, Stream: true}
	}
	frames := json.Framer.NewFrameReader(resp.Body)
	events := &eventDecoder{events: streaming.NewDecoder(frames, decoder)}
	return watch.NewStreamWatcher(events, apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding")), nil
}

// eventDecoder reads a stream's WatchEvents, and decodes each one's
// object.
type eventDecoder struct{ events streaming.Decoder }

func (d *eventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	var e metav1.WatchEvent
	got, _, err := d.events.Decode(nil, &e)
	if err != nil {
		return "", nil, err
	}
	if got != &e {
		return "", nil, fmt.Errorf("unable to decode to metav1.WatchEvent")
	}
	switch t := watch.EventType(e.Type); t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Error, watch.Bookmark:
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", e.Type)
	}
	obj, err := runtime.Decode(decoder, e.Object.Raw)
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %v", err)
	}
	return watch.EventType(e.Type), obj, nil
}

func (d *eventDecoder) Close() { d.events.Close() }
