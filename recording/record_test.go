package recording

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/wire"
)

// failingWriter fails every write, as a stdout whose reader has gone.
type failingWriter struct{}

var errGone = errors.New("write |1: broken pipe")

func (failingWriter) Write([]byte) (int, error) { return 0, errGone }

// A session that cannot be written is not recorded on: the first failed
// write ends the recording at once (with a server that never answers,
// so that only that can end it), and Record returns the error. Record's
// context is the test binary's deadline, not seconds of its own: a
// recording that went on fails there, however loaded the machine.
func TestRecordEndsWhenTheSessionCannotBeWritten(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx := testdeadline.Context(t)
	err := Record(ctx, wire.Config{Host: srv.URL, Transport: srv.Client().Transport}, Options{}, failingWriter{})
	if ctx.Err() != nil {
		t.Fatal("Record went on until its context ended")
	}
	if !errors.Is(err, errGone) {
		t.Errorf("Record returned %v, want the write's error", err)
	}
}
