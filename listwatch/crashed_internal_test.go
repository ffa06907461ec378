package listwatch

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// A member whose gRPC server has stopped while net/http still reads its
// requests answers each with an empty 200 (crashed.go). Its clients read
// that as Unavailable, as they read a crashed member, so that etcd's client
// retries; any other client sees what gRPC makes of it, an Unknown error
// that ends an etcd watch. The server here answers exactly so: net/http
// over TLS and HTTP/2, a handler that writes nothing.
func TestStoppedMemberIsUnavailable(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	dial := func(opts ...grpc.DialOption) *grpc.ClientConn {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(roots, "")))
		cc, err := grpc.NewClient(strings.TrimPrefix(srv.URL, "https://"), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
	ctx := testdeadline.Context(t)
	calls := func(cc *grpc.ClientConn) (unary, stream error) {
		_, unary = pb.NewKVClient(cc).Range(ctx, &pb.RangeRequest{Key: []byte("/registry/pods/")})
		w, err := pb.NewWatchClient(cc).Watch(ctx)
		if err != nil {
			return unary, err
		}
		_, stream = w.Recv()
		return unary, stream
	}
	for _, tc := range []struct {
		name string
		opts []grpc.DialOption
		want codes.Code
	}{
		{"an Embedded's client", crashedDialOptions(), codes.Unavailable},
		{"any other client", nil, codes.Unknown},
	} {
		unary, stream := calls(dial(tc.opts...))
		for call, err := range map[string]error{"Range": unary, "Watch's Recv": stream} {
			if got := status.Code(err); got != tc.want || !strings.Contains(err.Error(), stoppedServerMark) {
				t.Errorf("%s, %s: %v (code %v); want %v, saying %q", tc.name, call, err, got, tc.want, stoppedServerMark)
			}
		}
	}
}
