package listwatch

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A stream opened on a crashed server is refused as Unavailable before
// etcd's handler sees it: a handler started there could answer a watch's
// resume "mvcc: watcher range is empty" (its watch stream already
// closed), ending the watch with an error on some runs and not others.
func TestCrashedServerRefusesNewStreams(t *testing.T) {
	crashed, crash := context.WithCancel(context.Background())
	crash()
	called := false
	err := endStreamsOn(crashed)(nil, fakeStream{}, &grpc.StreamServerInfo{}, func(any, grpc.ServerStream) error {
		called = true
		return nil
	})
	if called {
		t.Error("a stream opened after the crash reached etcd's handler")
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a stream opened after the crash got %v, want Unavailable", err)
	}
}

type fakeStream struct{ grpc.ServerStream }

func (fakeStream) Context() context.Context { return context.Background() }
