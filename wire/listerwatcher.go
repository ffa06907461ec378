package wire

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/listwatch"
)

// Options configures a ListerWatcher.
type Options struct {
	// Namespace limits the ListerWatcher to one namespace; "" means all.
	Namespace string
	// Clock times the waits before a retry and the rate limit; the real
	// clock if nil, as client-go's REST client uses.
	Clock clock.Clock
	// Observe, if set, is told of every try of every request as its
	// response (or the error in its place) comes.
	Observe func(Exchange)
}

// ListerWatcher lists and watches one resource of a kube-apiserver over
// HTTP. It has the method sets of client-go's cache.ListerWatcher and
// cache.ListerWatcherWithContext, so either reflector can use it.
type ListerWatcher struct {
	c         *client
	res       listwatch.Resource
	namespace string
}

// NewListerWatcher returns a ListerWatcher for res on the server cfg
// names. It checks the address and the namespace; it sends nothing.
func NewListerWatcher(cfg Config, res listwatch.Resource, opts Options) (*ListerWatcher, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Namespace != "" {
		if msgs := content.IsPathSegmentName(opts.Namespace); len(msgs) > 0 {
			return nil, fmt.Errorf("wire: invalid namespace %q: %v", opts.Namespace, msgs)
		}
	}
	c, err := newClient(cfg, opts.Clock, opts.Observe)
	if err != nil {
		return nil, err
	}
	return &ListerWatcher{c: c, res: res, namespace: opts.Namespace}, nil
}

// WithNamespace returns a ListerWatcher for another namespace ("" for
// all) of the same resource, through the same client (one connection,
// one rate limit).
func (lw *ListerWatcher) WithNamespace(ns string) (*ListerWatcher, error) {
	if ns != "" {
		if msgs := content.IsPathSegmentName(ns); len(msgs) > 0 {
			return nil, fmt.Errorf("wire: invalid namespace %q: %v", ns, msgs)
		}
	}
	c := *lw
	c.namespace = ns
	return &c, nil
}

// Close closes the client's idle connections.
func (lw *ListerWatcher) Close() { lw.c.http.CloseIdleConnections() }

// IsWatchListSemanticsUnSupported is false: kube-apiserver answers a
// watch that asks for its initial events, or refuses it (422) and the
// reflector falls back to LIST and WATCH.
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return false }

// List is ListWithContext without a context.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// URI is the path and query of a LIST (or, with opts.Watch, a WATCH)
// with opts: /api/v1/namespaces/<ns>/pods?<options>, the options under
// their JSON names in alphabetical order, the empty ones left out.
func (lw *ListerWatcher) URI(opts metav1.ListOptions) (string, error) {
	segs := []string{"api", lw.res.Version}
	if lw.res.Group != "" {
		segs = []string{"apis", lw.res.Group, lw.res.Version}
	}
	if lw.namespace != "" {
		segs = append(segs, "namespaces", lw.namespace)
	}
	segs = append(segs, lw.res.Resource)
	q, err := parameterCodec.EncodeParameters(&opts, schema.GroupVersion{Version: "v1"})
	if err != nil {
		return "", err
	}
	uri := "/" + strings.Join(segs, "/")
	if enc := q.Encode(); enc != "" {
		uri += "?" + enc
	}
	return uri, nil
}

// ListWithContext sends a LIST and decodes the list it gets. It waits
// for the rate limit first; a 429 or 5xx with Retry-After, or a
// connection broken under it, is tried again (up to 10 times).
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	uri, err := lw.URI(opts)
	if err != nil {
		return nil, err
	}
	if err := lw.c.limit.wait(ctx); err != nil {
		return nil, err
	}
	var t tries
	for {
		if err := lw.c.before(ctx, &t); err != nil {
			return nil, t.wrap(err)
		}
		resp, err := lw.c.do(ctx, uri, t.n+1)
		if t.next(resp, err, listRetryable) {
			drain(resp)
			continue
		}
		if resp == nil {
			return nil, t.wrap(err)
		}
		list := &unstructured.UnstructuredList{}
		if err := read(resp, http.MethodGet).into(list); err != nil {
			return nil, err
		}
		return list, nil
	}
}

// WatchWithContext opens a WATCH and returns its stream of events. Its
// first try does not wait for the rate limit (client-go's does not
// either); retries do. A 200 starts the stream; any other status is an
// error, read as a LIST's would be.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	uri, err := lw.URI(opts)
	if err != nil {
		return nil, err
	}
	var t tries
	for {
		if err := lw.c.before(ctx, &t); err != nil {
			return nil, t.wrap(err)
		}
		resp, err := lw.c.do(ctx, uri, t.n+1)
		if err == nil && resp.StatusCode == http.StatusOK {
			return stream(resp)
		}
		if t.next(resp, err, watchRetryable) {
			drain(resp)
			continue
		}
		return lw.refused(resp, err, uri, &t)
	}
}

// refused is what a WATCH that will not be tried again returns. A
// connection that broke on every try is an empty watch, already over:
// the reflector will simply watch again.
func (lw *ListerWatcher) refused(resp *http.Response, err error, uri string, t *tries) (watch.Interface, error) {
	if resp == nil {
		if watchRetryable(err) {
			return watch.NewEmptyWatch(), nil
		}
		return nil, t.wrap(err)
	}
	r := read(resp, http.MethodGet)
	if r.err != nil {
		return nil, t.wrap(r.err)
	}
	return nil, t.wrap(fmt.Errorf("for request %s, got status: %v", lw.c.url(uri), resp.StatusCode))
}
