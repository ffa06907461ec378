package controllertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/crd"
	"github.com/cachelab/cachelab/internal/memnet"
	"github.com/cachelab/cachelab/internal/scenarioclock"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
)

// The users the world's server knows, each a member of system:masters,
// each told apart in its request log.
const (
	// ControllerUser is the user Config authenticates as: every request
	// of the controller under test.
	ControllerUser = "controller"
	// StoryUser makes the story's writes and the world's own reads.
	StoryUser = "story"
	// GCUser is the world's garbage collector (gc.go).
	GCUser = "garbage-collector"
)

// WorldHost is the host of Config: under the .invalid top-level domain,
// which no resolver answers (RFC 2606).
const WorldHost = "controllertest.invalid"

// Epoch is where the world's clock starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BuiltIn are the resources a world serves when Options.Resources is
// empty: what a controller's children usually are.
var BuiltIn = []string{"pods", "configmaps", "secrets", "deployments"}

// Options says what a world serves.
type Options struct {
	// Resources are the built-in resources served, by plural name:
	// any of BuiltIn (all of them if empty). Namespaces are always
	// served.
	Resources []string
	// CRDs are CustomResourceDefinition manifests (YAML or JSON): each
	// one's resource is served too, its writes pruned, defaulted and
	// validated against its schema as kube-apiserver's apiextensions
	// does (package crd).
	CRDs []string
	// NoWatchCache serves every LIST and WATCH from etcd, as
	// kube-apiserver with --watch-cache=false; the watch cache is on by
	// default, as in every cluster.
	NoWatchCache bool
	// SettleTimeout bounds a settle by time without progress (10 s if
	// 0): the world gives up on a controller that neither parks nor
	// does anything new for that long.
	SettleTimeout time.Duration
	// RealWait bounds how long a settle waits for a known wait of the
	// real clock to end (3 s if 0): client-go's relist backoff (0.8 to
	// 1.6 s, not injectable), cache.WaitForCacheSync's polls, a client's
	// rate limiter, a time.Sleep (settle.go).
	RealWait time.Duration
	// Outside, if set, also serves controllers in other processes, over
	// loopback TCP (outside.go, Command, WriteKubeconfig).
	Outside *Outside
	// EtcdTempDir is where the world's embedded etcd makes its data
	// directory, removed when the world closes (os.TempDir() if empty):
	// a command that must remove it however it ends (a second signal
	// does not wait for the world to close) makes one of its own.
	EtcdTempDir string
	// EtcdLogger receives the embedded etcd's logs (none if nil).
	EtcdLogger *zap.Logger
}

func (o Options) settleTimeout() time.Duration {
	return cmp.Or(max(o.SettleTimeout, 0), 10*time.Second)
}
func (o Options) realWait() time.Duration { return cmp.Or(max(o.RealWait, 0), 3*time.Second) }

// worlds numbers the worlds of the process, for their goroutines' labels.
var worlds atomic.Int64

// World is kube-apiserver over a real etcd, in the test's process, on a
// clock of the world's own, with a network in memory between it and its
// clients. See the package documentation.
type World struct {
	opts      Options
	id        string
	clock     *scenarioclock.Clock
	etcd      *listwatch.Embedded
	resources []listwatch.Resource // served, namespaces aside
	storages  []*apistorage.Server // one per resource, then namespaces'
	server    *kubeapiserver.Server
	net       *memnet.Network
	gate      *kubeapiserver.Gate // the controller's watch events, one at a time
	queues    *queueMetrics
	own       *dynamic.DynamicClient // the story's client
	gc        *dynamic.DynamicClient // the garbage collector's
	custom    []scenario.CustomResource
	outside   *outside // controllers in other processes, if Options.Outside

	mu      sync.Mutex
	running []*running         // the controllers Run started
	made    map[types.UID]bool // the objects the story created
	events  []delivered        // the controller's watch events, as the gate let them go
	closed  bool
}

// Start starts a world: an embedded etcd on loopback, kube-apiserver's
// storage over it for every resource (with its watch cache unless
// Options.NoWatchCache), and kube-apiserver serving them over HTTPS on
// the world's network. Close stops it all.
func Start(ctx context.Context, opts Options) (*World, error) {
	w := &World{opts: opts, id: strconv.FormatInt(worlds.Add(1), 10), clock: scenarioclock.New(Epoch), queues: newQueueMetrics()}
	if err := w.resolve(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			w.Close()
		}
	}()
	var err error
	if w.etcd, err = listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{TempDir: w.opts.EtcdTempDir, Logger: w.opts.EtcdLogger}); err != nil {
		return nil, fmt.Errorf("controllertest: starting etcd: %w", err)
	}
	if err := w.startStorages(ctx); err != nil {
		return nil, err
	}
	if err := w.startServer(ctx); err != nil {
		return nil, err
	}
	ok = true
	return w, nil
}

// resolve names the resources the world serves.
func (w *World) resolve() error {
	names := w.opts.Resources
	if len(names) == 0 {
		names = BuiltIn
	}
	for _, name := range names {
		i := slices.IndexFunc(listwatch.BuiltIn, func(r listwatch.Resource) bool { return r.Resource == name })
		if i < 0 {
			return fmt.Errorf("controllertest: Options.Resources: %q is not a resource a world serves; want one of %v, or a CRD in Options.CRDs", name, BuiltIn)
		}
		w.resources = append(w.resources, listwatch.BuiltIn[i])
	}
	for i, m := range w.opts.CRDs {
		c, err := scenario.ParseCRD(m)
		if err != nil {
			return fmt.Errorf("controllertest: Options.CRDs[%d]: %w", i, err)
		}
		w.custom = append(w.custom, c)
		w.resources = append(w.resources, listwatch.Resource{Group: c.Group, Version: c.Version, Resource: c.Plural,
			Kind: c.Kind, Namespaced: c.Namespaced, Store: c.Group + "/" + c.Plural})
	}
	return nil
}

// startStorages starts kube-apiserver's storage of each resource, and of
// namespaces, its goroutines labelled as the world's.
func (w *World) startStorages(ctx context.Context) error {
	var err error
	pprof.Do(ctx, w.labels(""), func(ctx context.Context) {
		for _, res := range append(slices.Clone(w.resources), namespaces) {
			cache := !w.opts.NoWatchCache && res.Resource != "namespaces"
			var st *apistorage.Server
			st, err = apistorage.New(ctx, w.etcd.Client(), res, apistorage.Options{Cache: cache, Clock: w.clock})
			if err != nil {
				err = fmt.Errorf("controllertest: the storage of %s: %w", res.Resource, err)
				return
			}
			w.storages = append(w.storages, st)
		}
	})
	return err
}

// listAll lists everything, from etcd (not the watch cache's snapshot).
var listAll = metav1.ListOptions{}

var namespaces = listwatch.Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}

// startServer starts kube-apiserver on the world's network, and the
// world's own clients.
func (w *World) startServer(ctx context.Context) error {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6443}
	w.net = memnet.New(addr, pprof.WithLabels(context.Background(), w.labels("")))
	w.gate = kubeapiserver.NewGate(ControllerUser)
	n := len(w.resources)
	admit, status, err := w.admission()
	if err != nil {
		return err
	}
	w.server, err = kubeapiserver.New(ctx, w.storages[0], kubeapiserver.Options{
		Clock:        w.clock,
		Writes:       true,
		Namespaces:   w.storages[n],
		Also:         w.storages[1:n],
		Admit:        admit,
		Status:       status,
		Labels:       w.labels,
		Gate:         w.gate,
		GenerateName: seededNames(),
		Listener:     w.net.Listener(),
		Dial:         w.net.Dialer("kube-apiserver"),
	})
	if err != nil {
		return fmt.Errorf("controllertest: starting kube-apiserver: %w", err)
	}
	if w.opts.Outside != nil {
		if err := w.serveOutside(); err != nil {
			return err
		}
	}
	if w.own, err = w.client(StoryUser); err != nil {
		return err
	}
	w.gc, err = w.client(GCUser)
	return err
}

// admission is what kube-apiserver's apiextensions does to each custom
// resource's writes (package crd), and to the writes of the status
// subresource of those whose definition has one.
func (w *World) admission() (admit, status map[schema.GroupResource]kubeapiserver.Admit, err error) {
	admit = map[schema.GroupResource]kubeapiserver.Admit{}
	status = map[schema.GroupResource]kubeapiserver.Admit{}
	for _, c := range w.custom {
		def, err := crd.Compile(c.Manifest)
		if err != nil {
			return nil, nil, fmt.Errorf("controllertest: CRD %s: %w", c.Name(), err)
		}
		gr := schema.GroupResource{Group: c.Group, Resource: c.Plural}
		admit[gr] = def.Admitted
		if def.HasStatus() {
			status[gr] = def.AdmittedStatus
		}
	}
	return admit, status, nil
}

// labels are the pprof labels of the world's goroutines, and of the
// server's goroutines serving user ("" for the world's own).
func (w *World) labels(user string) pprof.LabelSet {
	if user == "" {
		return pprof.Labels(worldLabel, w.id)
	}
	return pprof.Labels(worldLabel, w.id, userLabel, user)
}

const (
	worldLabel      = "cachelab-world"
	userLabel       = "cachelab-user"
	controllerLabel = "cachelab-controller"
)

// Config is the configuration of a client of the world's server as
// ControllerUser: give it to the controller under test. Its connections
// go over the world's network (its Dial), where a disconnect cuts them.
// Its host is a name that resolves nowhere (WorldHost): a client that
// dials on its own, ignoring Dial, reaches nothing, and never a server
// that happens to listen on this machine.
func (w *World) Config() *rest.Config { return w.configFor(ControllerUser) }

func (w *World) configFor(user string) *rest.Config {
	cc, err := w.server.Client(user)
	if err != nil {
		panic(fmt.Sprintf("controllertest: the server has no certificate for %s: %v", user, err)) // its CA made one at Start
	}
	cfg := cc.REST()
	cfg.Host, cfg.TLSClientConfig.ServerName = "https://"+WorldHost, "localhost" // the serving certificate's name
	cfg.Dial = w.net.Dialer(user)
	// The server answers in JSON only (package kubeapiserver); it takes
	// protobuf bodies of built-in kinds, but a client that asks for JSON
	// sends the same in every run, whatever its kinds.
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	return cfg
}

func (w *World) client(user string) (*dynamic.DynamicClient, error) {
	cfg := w.configFor(user)
	cfg.QPS, cfg.Burst = -1, 0 // the world's own reads and writes wait for no rate limiter of the real clock
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("controllertest: a client for %s: %w", user, err)
	}
	return c, nil
}

// Clock is the world's clock: kube-apiserver's watch deadlines and
// watch cache run on it, and it moves only when the story advances it
// (Advance). Give it to the controller's work queues
// (workqueue.TypedRateLimitingQueueConfig.Clock), so that a requeue
// after a delay waits on the world's time, which the world can see,
// and not on the wall clock's, which it cannot.
func (w *World) Clock() clock.WithTicker { return worldClock{w.clock} }

// Now is the world's time.
func (w *World) Now() time.Time { return w.clock.Now() }

// Client is a dynamic client of the world's server as StoryUser, whose
// connections no fault touches: for a test's own writes and reads.
func (w *World) Client() dynamic.Interface { return w.own }

// Requests is the server's request log of user (ControllerUser,
// StoryUser, GCUser), in the order the server took them.
func (w *World) Requests(user string) []kubeapiserver.Request { return w.server.Requests(user) }

// Objects is every object of every resource the world serves (not
// namespaces), read from etcd through the server, resources in the
// order they are served, each sorted by namespace and name.
func (w *World) Objects(ctx context.Context) (map[string][]unstructured.Unstructured, error) {
	out := map[string][]unstructured.Unstructured{}
	for _, res := range w.resources {
		l, err := w.own.Resource(res.GroupVersionResource()).List(ctx, listAll)
		if err != nil {
			return nil, fmt.Errorf("controllertest: listing %s: %w", res.Resource, err)
		}
		out[res.Resource] = l.Items
	}
	return out, nil
}

// Resources are the plural names of the resources the world serves.
func (w *World) Resources() []string {
	var out []string
	for _, r := range w.resources {
		out = append(out, r.Resource)
	}
	return out
}

// Close stops the controllers Run started (and waits for them), then the
// server, the storages and etcd. It may be called more than once.
func (w *World) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	running := w.running
	w.mu.Unlock()
	var errs []error
	for _, r := range running {
		errs = append(errs, r.stop())
	}
	if w.server != nil {
		w.server.Close()
	}
	if w.net != nil {
		w.net.Close()
	}
	for _, st := range slices.Backward(w.storages) {
		st.Close()
	}
	if w.etcd != nil {
		errs = append(errs, w.etcd.Close())
	}
	return errors.Join(errs...)
}

// seededNames generates names as kube-apiserver does (names.
// SimpleNameGenerator: the prefix and five characters of
// k8s.io/apimachinery's rand alphabet), from a source seeded the same
// in every world: a controller that creates with generateName gets the
// same names in every run.
func seededNames() func(base string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(1, 2))
	return func(base string) string {
		mu.Lock()
		defer mu.Unlock()
		b := make([]byte, 5)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return base + string(b)
	}
}
