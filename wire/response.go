package wire

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a client makes of a response, as client-go's REST client makes
// it (rest/request.go transformResponse, Result.Into and Result.Error):
//
//   - a status outside 200–206 is an error. If the body is a Status that
//     says Failure, the error is that Status, as the server wrote it
//     (410 Expired, 422 Invalid, 500 InternalError...). Otherwise it is
//     a generic error for the code, whose message is the body if the
//     body is text, and "unknown" if not (a 429 from a max-in-flight
//     filter is plain text: "Too many requests, please try again
//     later.").
//   - a 2xx body is decoded into the list it should be.
//
// The content type, when the response has none, is taken to be JSON,
// the only one this client decodes.

// maxErrorText is how much of a body a generic error keeps.
const maxErrorText = 2048

// result is a response read whole.
type result struct {
	code        int
	contentType string // as sent, or application/json if none
	json        bool   // the content type is JSON: the body can be decoded
	body        []byte
	err         error // for a status outside 200–206
}

// read reads resp's body and works out what it says.
func read(resp *http.Response, method string) result {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return result{err: fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", err)}
	}
	r := result{code: resp.StatusCode, body: body, contentType: resp.Header.Get("Content-Type")}
	if r.contentType == "" {
		r.contentType = jsonType
	}
	media, _, err := mime.ParseMediaType(r.contentType)
	if err != nil {
		r.err = apierrors.NewInternalError(err)
		return r
	}
	r.json = media == jsonType
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		r.err = r.statusError(resp, method)
	}
	return r
}

// statusError is the error for a status outside 200–206.
func (r result) statusError(resp *http.Response, method string) error {
	text := r.body
	if len(text) > maxErrorText {
		text = text[:maxErrorText]
	}
	message := "unknown"
	if isText(resp) {
		message = strings.TrimSpace(string(text))
	}
	retry, _ := retryAfter(resp)
	generic := apierrors.NewGenericServerResponse(r.code, method, schema.GroupResource{}, "", message, retry, true)
	if !r.json || len(r.body) == 0 {
		return generic
	}
	// An old server may leave out the Status's apiVersion: v1 is assumed.
	out, _, err := decoder.Decode(r.body, &schema.GroupVersionKind{Version: "v1"}, nil)
	if err != nil {
		return generic
	}
	if st, ok := out.(*metav1.Status); ok && st.Status == metav1.StatusFailure {
		return apierrors.FromObject(st)
	}
	return generic
}

// into decodes a 2xx body into obj.
func (r result) into(obj runtime.Object) error {
	switch {
	case r.err != nil:
		return r.err
	case !r.json:
		return fmt.Errorf("serializer for %s doesn't exist", r.contentType)
	case len(r.body) == 0:
		return fmt.Errorf("0-length response with status code: %d and content type: %s", r.code, r.contentType)
	}
	out, _, err := decoder.Decode(r.body, nil, obj)
	if err != nil || out == obj {
		return err
	}
	if st, ok := out.(*metav1.Status); ok && st.Status != metav1.StatusSuccess {
		return apierrors.FromObject(st)
	}
	return nil
}

// isText reports whether a response's body is text (or of no stated
// type), which a generic error may quote.
func isText(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.HasPrefix(media, "text/")
}

// retryAfter is the Retry-After header's whole number of seconds, if it
// has one (an HTTP date is not read).
func retryAfter(resp *http.Response) (int, bool) {
	if h := resp.Header.Get("Retry-After"); h != "" {
		if n, err := strconv.Atoi(h); err == nil {
			return n, true
		}
	}
	return 0, false
}

const jsonType = "application/json"
