package listwatch

import (
	"context"
	"errors"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
)

// KV is what a Writer needs of etcd: a connection (a *clientv3.Client),
// or an embedded server's LocalKV.
type KV interface {
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
	Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error)
	Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error)
	Txn(ctx context.Context) clientv3.Txn
}

// ErrLocalStopped is what LocalKV's calls return while the server is
// stopped (between the stop and the start of a Restart, say).
var ErrLocalStopped = errors.New("listwatch: the embedded etcd server is stopped")

// LocalKV is a KV that calls the embedded server's own KV service in this
// process: the same service a gRPC client reaches, with its quota and its
// request checks, and the same answers and errors, but without a loopback
// connection, HTTP/2 framing and protobuf encoding on both sides. A write
// costs less than half the CPU it costs over the connection, which is
// what a simulator creating 100,000 objects spends most of its time on.
//
// It follows the server across Restart, Snapshot, Restore and Wipe. It is
// nil for a cluster: a write there goes to a leader through the members'
// connections, and a member lever decides which are up. Watches and the
// informers' requests stay on real connections, whose failures the
// scenarios are about.
func (e *Embedded) LocalKV() KV {
	if e.cluster() {
		return nil
	}
	return &e.local
}

// localKV is LocalKV's KV: the running server's, or none while it is
// stopped.
type localKV struct {
	mu sync.Mutex
	kv clientv3.KV
}

// serve points l at s, or at nothing if s is nil.
func (l *localKV) serve(s *etcdserver.EtcdServer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kv = nil
	if s != nil {
		l.kv = clientv3.NewKVFromKVClient(adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(s)), nil)
	}
}

func (l *localKV) current() (clientv3.KV, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kv == nil {
		return nil, ErrLocalStopped
	}
	return l.kv, nil
}

func (l *localKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	kv, err := l.current()
	if err != nil {
		return nil, err
	}
	return kv.Get(ctx, key, opts...)
}

func (l *localKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	kv, err := l.current()
	if err != nil {
		return nil, err
	}
	return kv.Put(ctx, key, val, opts...)
}

func (l *localKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	kv, err := l.current()
	if err != nil {
		return nil, err
	}
	return kv.Delete(ctx, key, opts...)
}

// Txn starts a transaction on the server running now; it fails at
// Commit if none is.
func (l *localKV) Txn(ctx context.Context) clientv3.Txn {
	kv, err := l.current()
	if err != nil {
		return stoppedTxn{err}
	}
	return kv.Txn(ctx)
}

// stoppedTxn is a transaction begun while the server was stopped.
type stoppedTxn struct{ err error }

func (t stoppedTxn) If(...clientv3.Cmp) clientv3.Txn        { return t }
func (t stoppedTxn) Then(...clientv3.Op) clientv3.Txn       { return t }
func (t stoppedTxn) Else(...clientv3.Op) clientv3.Txn       { return t }
func (t stoppedTxn) Commit() (*clientv3.TxnResponse, error) { return nil, t.err }
