package recording

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
	"github.com/cachelab/cachelab/wire"
)

// Recorder stands between an informer and its ListerWatcher and writes
// what the informer gets: each LIST's page, each WATCH and its events as
// they are handed on, and (Observe) each try of each HTTP request with
// its status. Its handler (Handler) writes the informer's handler calls.
//
//	informer ──▶ Recorder ──▶ wire.ListerWatcher ══HTTPS══▶ kube-apiserver
//	                │                 │ Observe
//	                └────── Writer ◀──┘
type Recorder struct {
	lw   reflector.ListerWatcherWithContext
	w    *Writer
	full bool
	// The informer's selectors, set on every request.
	labels, fields string

	mu      sync.Mutex
	watches int
	// relays are the goroutines that hand on watches' events; Wait
	// waits for them.
	relays sync.WaitGroup
}

var _ reflector.ListerWatcherWithContext = (*Recorder)(nil)

// NewRecorder records what lw answers into w. It sets o's selectors on
// every request; o.Full keeps whole objects, where by default only
// their names, labels and resourceVersions are kept (Reduce).
func NewRecorder(lw reflector.ListerWatcherWithContext, w *Writer, o Options) *Recorder {
	return &Recorder{lw: lw, w: w, full: o.Full, labels: o.Labels, fields: o.Fields}
}

// Observe writes a request line for one try of a request (wire.Options'
// Observe).
func (r *Recorder) Observe(x wire.Exchange) {
	l := Line{Kind: KindRequest, Method: x.Method, URI: x.URI, Try: x.Try, Status: x.Status, RetryAfter: x.RetryAfter}
	if x.Err != nil {
		l.Error = x.Err.Error()
	}
	r.w.Write(l)
}

// IsWatchListSemanticsUnSupported is false: a kube-apiserver answers a
// watch-list, and the informer may ask for one.
func (r *Recorder) IsWatchListSemanticsUnSupported() bool { return false }

// List is ListWithContext without a context.
func (r *Recorder) List(opts metav1.ListOptions) (runtime.Object, error) {
	return r.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (r *Recorder) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return r.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists through lw and writes the page it got.
func (r *Recorder) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.LabelSelector, opts.FieldSelector = r.labels, r.fields
	obj, err := r.lw.ListWithContext(ctx, opts)
	l := Line{Kind: KindList, ResourceVersion: opts.ResourceVersion, Limit: opts.Limit, Continue: opts.Continue}
	if err != nil && stopping(ctx) {
		return obj, err // the informer's own stop, not the server's answer
	}
	if err != nil {
		l.Error = errorText(err)
		r.w.Write(l)
		return obj, err
	}
	if lm, lerr := meta.ListAccessor(obj); lerr == nil {
		l.ListRV, l.NextContinue = lm.GetResourceVersion(), lm.GetContinue()
	}
	_ = meta.EachListItem(obj, func(o runtime.Object) error {
		if u, ok := o.(*unstructured.Unstructured); ok {
			l.Items = append(l.Items, Reduce(u.Object, r.full))
		}
		return nil
	})
	r.w.Write(l)
	return obj, nil
}

// WatchWithContext opens a watch through lw and writes it, then each
// event it hands on and its end.
func (r *Recorder) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.LabelSelector, opts.FieldSelector = r.labels, r.fields
	r.mu.Lock()
	r.watches++
	n := r.watches
	r.mu.Unlock()
	l := Line{Kind: KindWatch, Watch: n, ResourceVersion: opts.ResourceVersion,
		SendInitialEvents: opts.SendInitialEvents != nil && *opts.SendInitialEvents}
	inner, err := r.lw.WatchWithContext(ctx, opts)
	if err != nil && stopping(ctx) {
		return nil, err
	}
	if err != nil {
		l.Error = errorText(err)
		r.w.Write(l)
		return nil, err
	}
	r.w.Write(l)
	rw := &recordedWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	r.relays.Go(func() { rw.relay(ctx, r, n) })
	return rw, nil
}

// stopping reports whether ctx, an informer's request's, is done: the
// informer is stopping, and what its client makes of that (a LIST's
// "context canceled", a watch's ERROR "unable to decode an event from the
// watch stream: context canceled") is the informer's own doing, which a
// session does not keep: a replay would serve it as the server's.
func stopping(ctx context.Context) bool { return ctx.Err() != nil }

// Wait waits until every watch the Recorder opened has written its end.
// Call it once the informer has stopped (it stops its watches), before the
// session's last lines, so that no watch writes after them.
func (r *Recorder) Wait() { r.relays.Wait() }

// errorText is how an error is kept: a status error's code comes first,
// so a replay can tell a 410 from a 429 ("410 Expired: ...").
func errorText(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return strconv.Itoa(int(s.Code)) + " " + string(s.Reason) + ": " + s.Message
	}
	return err.Error()
}

// recordedWatch hands on a watch's events, writing each as it goes.
type recordedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func (w *recordedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *recordedWatch) Stop() {
	w.once.Do(func() { close(w.stop); w.inner.Stop() })
}

func (w *recordedWatch) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// relay hands on the inner watch's events and writes each, until the
// watch ends or is stopped. Once ctx is done (the informer is stopping),
// or the informer has stopped the watch, what comes is its client's
// making (a decoding error from the closed stream): it writes no more
// events and ends.
func (w *recordedWatch) relay(ctx context.Context, r *Recorder, n int) {
	defer close(w.out)
	defer r.w.Write(Line{Kind: KindWatchEnd, Watch: n})
	for {
		select {
		case ev, ok := <-w.inner.ResultChan():
			if !ok || stopping(ctx) || w.stopped() {
				return
			}
			r.w.Write(Line{Kind: KindEvent, Watch: n, Type: string(ev.Type), Object: eventObject(ev, r.full)})
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		case <-w.stop:
			return
		}
	}
}

// eventObject is what an event line keeps of its object: the reduced
// object, or an ERROR's Status whole.
func eventObject(ev watch.Event, full bool) map[string]any {
	switch o := ev.Object.(type) {
	case *unstructured.Unstructured:
		if ev.Type == watch.Error {
			return o.Object
		}
		return Reduce(o.Object, full)
	case *metav1.Status:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err == nil {
			m["kind"], m["apiVersion"] = "Status", "v1"
			return m
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ev.Object)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return m
}

// Handler returns the informer handler that writes each call it gets.
func (r *Recorder) Handler() HandlerFuncs { return HandlerFuncs{w: r.w} }

// HandlerFuncs writes handler calls (it has the methods of cachelab's and
// client-go's ResourceEventHandler).
type HandlerFuncs struct{ w *Writer }

func (h HandlerFuncs) OnAdd(obj any, isInInitialList bool) {
	key, rv := keyRV(obj)
	call := "OnAdd"
	if isInInitialList {
		call = "OnAdd(initial)"
	}
	h.w.Write(Line{Kind: KindHandler, Call: call, Key: key, RV: rv})
}

func (h HandlerFuncs) OnUpdate(oldObj, newObj any) {
	key, rv := keyRV(newObj)
	_, old := keyRV(oldObj)
	h.w.Write(Line{Kind: KindHandler, Call: "OnUpdate", Key: key, RV: rv, OldRV: old})
}

func (h HandlerFuncs) OnDelete(obj any) {
	call := "OnDelete"
	if d, ok := obj.(store.DeletedFinalStateUnknown); ok {
		call, obj = "OnDelete(final state unknown)", d.Obj
	}
	key, rv := keyRV(obj)
	h.w.Write(Line{Kind: KindHandler, Call: call, Key: key, RV: rv})
}

// WriteCache writes the informer's cache, one line per object, sorted
// by key.
func WriteCache(w *Writer, objs []any, full bool) {
	keyed := map[string]map[string]any{}
	var keys []string
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			k, _ := keyRV(u)
			keyed[k] = Reduce(u.Object, full)
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.Write(Line{Kind: KindCache, Object: keyed[k]})
	}
}

func keyRV(obj any) (key, rv string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", ""
	}
	key = m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return key, m.GetResourceVersion()
}
