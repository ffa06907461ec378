package listwatch

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// EmbeddedOptions configures an in-process etcd. The zero value is a
// silent, fsync-less etcd in a new temporary directory, listening on
// loopback ports chosen by the kernel.
type EmbeddedOptions struct {
	// Dir is the data directory. Empty means a new temporary directory,
	// removed by Close.
	Dir string
	// TempDir is where that temporary directory is made: os.TempDir() if
	// empty. A caller that runs many etcds at once (cachelab explore)
	// gives them one directory of its own, so that it can remove them
	// all at once should it have to exit without waiting for them.
	TempDir string
	// Fsync turns etcd's fsync back on. Off by default: a teaching and
	// test etcd trades durability across power loss for speed.
	Fsync bool
	// Logger receives etcd's logs; nil means none.
	Logger *zap.Logger
	// ProgressNotifyInterval is how often etcd sends progress
	// notifications on idle watches (etcd's default, 10 minutes, if 0;
	// at least 100ms).
	ProgressNotifyInterval time.Duration
	// TLS, if set, makes the client port use these files, as an etcd of
	// the user's own is set up: this certificate, and client certificates
	// signed by this CA. The embedded client uses the same certificate,
	// which must therefore allow both server and client authentication.
	// Without it, every port uses certificates of a CA the run makes in
	// memory, and lets in only the clients that hold one (etcdtls.go,
	// ClientOptions).
	TLS TLSFiles
	// Members is how many etcd members to run: 0 or 1 for one (the
	// default), more for a cluster on loopback, each member with its
	// own ports and its own directory under Dir (cluster.go).
	Members int
}

// Embedded is an etcd server running in this process, with a client
// connected to it: one member, or a cluster of several (cluster.go).
type Embedded struct {
	opts    EmbeddedOptions
	dir     string
	ownDir  bool
	tls     *etcdTLS  // the certificates every port speaks TLS with (etcdtls.go)
	members []*member // one, unless opts.Members asks for a cluster
	client  *clientv3.Client
	local   localKV // LocalKV's, for one member (local.go)
	// reusePort: a cluster's ports were reserved with SO_REUSEPORT, and
	// its members bind them with it too (cluster.go).
	reusePort bool
	// stopped is set by Stop, and closing counts what it left closing in
	// the background (stop.go).
	stopped bool
	closing sync.WaitGroup
}

// member is one etcd server of an Embedded.
type member struct {
	name      string  // etcd's member name: "default" alone, m1, m2, ... in a cluster
	dir       string  // its data directory
	clientURL url.URL // the bound address, reused by Restart
	peerURL   url.URL
	server    *embed.Etcd // nil while stopped
	// crash drops every stream the server is serving (watches above all)
	// before it stops. etcd's graceful stop would wait for them, and a
	// watch never ends on its own: up to etcd's request timeout, about
	// 5 s, on every restart and every Close.
	crash context.CancelFunc
}

// StartEmbedded starts an etcd server in this process and waits until it
// serves requests (or ctx ends). With opts.Members above 1 it starts a
// cluster (StartEmbedded waits until every member serves).
func StartEmbedded(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	if opts.Members < 0 || opts.Members > maxMembers {
		return nil, fmt.Errorf("listwatch: embedded etcd of %d members: want 1 to %d", opts.Members, maxMembers)
	}
	e := &Embedded{opts: opts, dir: opts.Dir}
	if e.dir == "" {
		dir, err := os.MkdirTemp(opts.TempDir, "cachelab-etcd-")
		if err != nil {
			return nil, fmt.Errorf("listwatch: embedded etcd data dir: %w", err)
		}
		e.dir, e.ownDir = dir, true
	}
	var err error
	if e.tls, err = newEtcdTLS(e.dir, opts.TLS); err != nil {
		e.removeDir()
		return nil, err
	}
	if e.cluster() {
		if err := e.startCluster(ctx); err != nil {
			e.stop()
			e.removeDir()
			return nil, err
		}
		return e, nil
	}
	m := &member{name: embed.DefaultName, dir: e.dir}
	m.clientURL = url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	m.peerURL = url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	e.members = []*member{m}
	if err := e.start(ctx); err != nil {
		e.removeDir()
		return nil, err
	}
	return e, nil
}

func (e *Embedded) config(m *member, crashed context.Context) *embed.Config {
	cfg := embed.NewConfig()
	cfg.GRPCAdditionalServerOptions = []grpc.ServerOption{grpc.ChainStreamInterceptor(endStreamsOn(crashed))}
	cfg.Dir = m.dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.clientURL}, []url.URL{m.clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peerURL}, []url.URL{m.peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = !e.opts.Fsync
	// One member on loopback: a 10ms raft tick (etcd's default is 100ms)
	// lets it elect itself and start serving in a fraction of the time.
	cfg.TickMs, cfg.ElectionMs = 10, 50
	cfg.EnableGRPCGateway = false // it would dial the configured ":0"
	cfg.WatchProgressNotifyInterval = e.opts.ProgressNotifyInterval
	logger := e.opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	cfg.ClientTLSInfo, cfg.PeerTLSInfo = e.tls.server, e.tls.peer
	if e.cluster() {
		e.clusterConfig(cfg, m)
	}
	return cfg
}

// start runs etcd on e's directory and URLs, then records the ports the
// kernel chose, so that a restart comes back on the same ones. A cluster
// starts every member (startMembers).
func (e *Embedded) start(ctx context.Context) error {
	if e.cluster() {
		return e.startMembers(ctx)
	}
	m := e.members[0]
	if err := e.startMember(ctx, m); err != nil {
		return err
	}
	m.clientURL.Host = m.server.Clients[0].Addr().String()
	m.peerURL.Host = m.server.Peers[0].Addr().String()
	client, err := Connect(ctx, e.ownClientOptions())
	if err != nil {
		m.stop()
		return fmt.Errorf("listwatch: connect to embedded etcd: %w", err)
	}
	e.client = client
	e.local.serve(m.server.Server)
	return nil
}

// startMember starts m's server and waits until it is ready (for a
// member of a cluster: until it has joined and applied what the leader
// had committed when it joined).
func (e *Embedded) startMember(ctx context.Context, m *member) error {
	if err := e.launch(m); err != nil {
		return err
	}
	return e.ready(ctx, m)
}

// launch starts m's server without waiting for it.
func (e *Embedded) launch(m *member) error {
	crashed, crash := context.WithCancel(context.Background())
	server, err := embed.StartEtcd(e.config(m, crashed))
	if err != nil {
		crash()
		return fmt.Errorf("listwatch: start embedded etcd%s: %w", e.memberLabel(m), err)
	}
	m.server, m.crash = server, crash
	return nil
}

// ready waits until the launched m serves requests; if ctx ends first, m
// is stopped.
func (e *Embedded) ready(ctx context.Context, m *member) error {
	select {
	case <-m.server.Server.ReadyNotify():
		return nil
	case <-ctx.Done():
		m.stop()
		return fmt.Errorf("listwatch: embedded etcd%s not ready: %w", e.memberLabel(m), ctx.Err())
	}
}

func (e *Embedded) memberLabel(m *member) string {
	if !e.cluster() {
		return ""
	}
	return " member " + m.name
}

// Endpoints are the client URLs of the server: of every member, in
// order, for a cluster (those stopped included).
func (e *Embedded) Endpoints() []string {
	out := make([]string, len(e.members))
	for i, m := range e.members {
		out[i] = m.clientURL.String()
	}
	return out
}

// Dir is the data directory.
func (e *Embedded) Dir() string { return e.dir }

// Client is a client connected to the server (to every member of a
// cluster). It is replaced by Restart.
func (e *Embedded) Client() *clientv3.Client { return e.client }

// Revision is etcd's current revision: the resourceVersion of the newest
// write.
func (e *Embedded) Revision(ctx context.Context) (int64, error) {
	rev, err := currentRevision(ctx, e.client)
	if err != nil {
		return 0, fmt.Errorf("listwatch: read revision: %w", err)
	}
	return rev, nil
}

// Compact discards history before rev: reads and watches at older
// revisions then fail with 410 Expired. It waits until the compaction is
// physically done, so a test that compacts sees its effect at once.
func (e *Embedded) Compact(ctx context.Context, rev int64) error {
	if _, err := e.client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("listwatch: compact to %d: %w", rev, err)
	}
	return nil
}

// Restart stops the server and starts it again on the same directory and
// ports, as a crashed and restarted etcd would come back. Clients of the
// old server see their connections drop; etcd's client reconnects and
// resumes its watches. The old Client is closed: use Client again. A
// cluster restarts whole: every member stops, then every member starts
// (those stopped by StopMember too).
func (e *Embedded) Restart(ctx context.Context) error {
	e.stop()
	return e.start(ctx)
}

// endStreamsOn is a stream interceptor that ends each stream when crashed
// is done. The handler learns it as it learns that a client went away,
// from the stream's context; the client is told Unavailable, as when a
// connection drops, so etcd's client resumes its watches on the
// restarted server from the last revision they saw (the handler's own
// "watch canceled" would end them with an error instead).
//
// A stream opened once crashed is done never reaches the handler: etcd's
// client reopens its watch stream at once when one ends, and a handler
// started on a crashed server closed its watch stream while the client's
// resume was on its way about as often as not; a create that meets a
// closed stream is answered "mvcc: watcher range is empty", which ends
// that watch with an error instead of resuming it: one side saw a 500 and
// relisted, the other not (FuzzRunner, seed 138).
func endStreamsOn(crashed context.Context) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if crashed.Err() != nil {
			return status.Error(codes.Unavailable, "etcd crashed")
		}
		ctx, cancel := context.WithCancel(ss.Context())
		defer cancel()
		defer context.AfterFunc(crashed, cancel)()
		err := handler(srv, streamWithContext{ss, ctx})
		if crashed.Err() != nil {
			return status.Error(codes.Unavailable, "etcd crashed")
		}
		return err
	}
}

type streamWithContext struct {
	grpc.ServerStream
	ctx context.Context
}

func (s streamWithContext) Context() context.Context { return s.ctx }
