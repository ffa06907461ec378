package world

import (
	"context"
	"crypto/tls"
	"reflect"
	"runtime/pprof"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/apistorage/source"
	"github.com/cachelab/cachelab/listwatch"
)

// Two parts of a run make cachelab's build heavy: the watch-cache world
// (kube-apiserver's storage and watch cache, package apistorage, and
// kube-apiserver over HTTPS, package kubeapiserver), which pull in most
// of k8s.io/apiserver and, through its cacher, every typed client and
// informer of client-go; and client-go's SharedInformerFactory, the
// reference package factory is compared with, which is generated for
// every API group. Together they are about half of what a cold build
// compiles, and the main job (a scenario on embedded etcd) needs
// neither. So the runner knows them only by the interfaces below, and
// package sim/full provides them (Link) in a build that imports it:
// cachelab's binary built with -tags full, and every test that runs them.
// A build without them says so, and which scenario needed them, before
// the scenario's first step (Need).

// Full is what package sim/full links in.
type Full struct {
	// NewAPIServer starts kube-apiserver's storage with its watch cache
	// over client (apistorage.New), named name if not "".
	NewAPIServer func(ctx context.Context, client *clientv3.Client, res listwatch.Resource, clk clock.WithTicker, name string) (APIServer, error)
	// Waiting is how many requests to the servers, among the
	// goroutines of dump, wait where only the clock or the cache
	// catching up would end them (apistorage.Waiting).
	Waiting func(dump []string, servers ...APIServer) int
	// ServeHTTPS starts kube-apiserver over HTTPS in front of apis, the
	// storages of the resources it serves, pods first
	// (kubeapiserver.New), labelling each user's requests.
	ServeHTTPS func(ctx context.Context, apis []APIServer, clk clock.Clock, labels func(user string) pprof.LabelSet) (HTTPSServer, error)
	// NewClientGoFactory is client-go's informers.SharedInformerFactory,
	// without a client, with resync as its default resync period.
	NewClientGoFactory func(resync time.Duration) ClientGoFactory
	// TypedObject is client-go's Go type for a built-in kind (*v1.Pod
	// for Pod): what its typed factory keys that kind's informer by.
	TypedObject func(gvk schema.GroupVersionKind) runtime.Object
	// CustomResource compiles a CustomResourceDefinition's manifest
	// (JSON) into what kube-apiserver does to its objects before it
	// stores them: prune, default, prepare and validate, in place (obj
	// a create's, old nil; or an update's and the stored one), and its
	// refusal (package crd).
	CustomResource func(manifest []byte) (func(obj, old map[string]any) error, error)
}

var full *Full

// Link makes f's parts available to runs (package sim/full calls it).
func Link(f Full) { full = &f }

// Linked is what Link linked in, or nil in a build without sim/full.
func Linked() *Full { return full }

// APIServer is kube-apiserver's storage with its watch cache, in
// process (apistorage.Server).
type APIServer interface {
	// ListerWatcher serves a namespace ("" for all) to an informer.
	ListerWatcher(namespace string) Server
	Resource() listwatch.Resource
	SetName(name string)
	HoldCache()
	ReleaseCache()
	Held() bool
	RestartCache() error
	Ready() bool
	WaitReady(ctx context.Context) error
	CacheCaughtUp(rev uint64) bool
	CacheState() string
	QuiescentIn(stacks []string) bool
	NextWork() (at time.Time, ok bool)
	RequestProgress(ctx context.Context) error
	Close()
}

// HTTPSServer is kube-apiserver over HTTPS in front of an APIServer
// (kubeapiserver.Server).
type HTTPSServer interface {
	URL() string
	// Watches is user's watches being served, and the events their
	// handlers have taken to send.
	Watches(user string) (open int, taken int64)
	// Pending is how many of user's requests are not yet answered.
	Pending(user string) int
	// LastListFrom is where the storage answered user's last LIST.
	LastListFrom(user string) (source.Source, bool)
	// CloseWatches ends user's watch responses, as the server would.
	CloseWatches(user string) int
	// Endpoint is what user's client needs to reach the server at host.
	Endpoint(user, host string) (Endpoint, error)
	Close()
}

// Endpoint is what a side's HTTP client needs of a kube-apiserver.
type Endpoint struct {
	Host string
	TLS  *tls.Config  // the user's client certificate, trusting the server
	REST *rest.Config // the same, for client-go
}

// ClientGoFactory is client-go's informers.SharedInformerFactory, as
// the runner uses it.
type ClientGoFactory interface {
	// InformerFor is the factory's InformerFor, newFunc given no client.
	InformerFor(obj runtime.Object, newFunc func(resync time.Duration) cache.SharedIndexInformer) cache.SharedIndexInformer
	StartWithContext(ctx context.Context)
	WaitForCacheSync(stop <-chan struct{}) map[reflect.Type]bool
	Shutdown()
}

// notesSource is a Server that says in a context's source.Source where
// each LIST was answered: kube-apiserver's storage, in process or over
// the wire.
type notesSource interface{ NotesSource() bool }

// cacheServed reports whether a server answers from kube-apiserver's
// storage, in process or over the wire.
func cacheServed(s Server) bool {
	n, ok := s.(notesSource)
	return ok && n.NotesSource()
}
