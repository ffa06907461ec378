package store_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// The mutation cache's differential harness: a script of operations on a
// mutation cache and the stores behind it, played to cachelab's and
// client-go's side by side inside one testing/synctest bubble, whose fake
// time is the clock of client-go's cache (it reads time.Now). Every
// result, every panic, every log line and, after every step, the keys
// the cache holds, in its least-recently-used order, are compared.

// MCConfig says how the two mutation caches are made.
type MCConfig struct {
	IncludeAdds bool
	// TTL is given to the constructor (0: the default, 5 minutes).
	TTL time.Duration
	// Options makes them with ...WithOptions and MaxCacheSize (0: the
	// default, 100), instead of NewIntegerResourceVersionMutationCache.
	Options      bool
	MaxCacheSize int
	// NoIndexer gives no indexer; SeparateIndexer gives one that is not
	// the backing store (writes name which they go to).
	NoIndexer, SeparateIndexer bool
	// FakeClock gives cachelab's cache a fake clock (MutationCacheOptions.
	// Clock, with Options) stepped with the bubble's; otherwise it reads
	// the real clock, which in the bubble is the bubble's.
	FakeClock bool
}

// MCOp is one step of a script.
type MCOp struct {
	// Kind: mutation, get, byindex, add, update, delete (to the stores),
	// onaddorupdate, ondelete, step.
	Kind string
	Obj  any
	Key  string
	// Index and Value for byindex.
	Index, Value string
	// To is where a store write goes: "" both stores (or the one),
	// "backing" or "indexer" (with SeparateIndexer).
	To string
	D  time.Duration
}

func (o MCOp) String() string {
	switch o.Kind {
	case "get":
		return "get " + o.Key
	case "byindex":
		return fmt.Sprintf("byindex %s=%s", o.Index, o.Value)
	case "step":
		return fmt.Sprintf("step %v", o.D)
	case "add", "update", "delete":
		to := ""
		if o.To != "" {
			to = " (" + o.To + ")"
		}
		return fmt.Sprintf("%s %s%s", o.Kind, render(o.Obj), to)
	}
	return o.Kind + " " + render(o.Obj)
}

// mcSide is one implementation with its stores and its log.
type mcSide struct {
	mc               any // store.MutationCache or cache.MutationCache
	backing, indexer interface {
		Add(any) error
		Update(any) error
		Delete(any) error
	}
	log   *lineLog
	clock *clocktesting.FakeClock
	do    func(op MCOp) string
}

// RunMutationScript plays ops to both sides and fails t at the first
// step where they differ. It returns the transcript.
func RunMutationScript(t *testing.T, cfg MCConfig, ops []MCOp) []string {
	t.Helper()
	var out []string
	synctest.Test(t, func(t *testing.T) {
		cl, cg := newCachelabSide(cfg), newClientGoSide(cfg)
		for i, op := range ops {
			if op.Kind == "step" {
				advance(op.D) // once: the bubble's time is both sides'
			}
			a, b := play(cl, op), play(cg, op)
			if a != b {
				t.Fatalf("step %d, %v: cachelab and client-go differ\ncachelab:  %s\nclient-go: %s\nso far:\n\t%s",
					i, op, a, b, strings.Join(out, "\n\t"))
			}
			out = append(out, a)
		}
	})
	return out
}

// play runs op on one side and renders what it did: its result, the log
// lines it wrote, and the cache's keys after it.
func play(s *mcSide, op MCOp) string {
	var res string
	if p := CatchPanic(func() { res = s.do(op) }); p != "" {
		res = "panic: " + p
	}
	line := fmt.Sprintf("%v → %s", op, res)
	for _, l := range s.log.take() {
		line += " | log " + l
	}
	return line + fmt.Sprintf(" | keys %v", lruKeys(s.mc))
}

// lruKeys is the keys a mutation cache holds, least recently used first,
// expired ones left out, read from its LRUExpireCache without touching
// it (Keys neither moves nor drops anything). Both implementations keep
// it in a field named mutationCache; it is unexported, so it is read
// through reflect.
func lruKeys(mc any) []any {
	f := reflect.ValueOf(mc).Elem().FieldByName("mutationCache")
	return (*utilcache.LRUExpireCache)(f.UnsafePointer()).Keys()
}

// advance moves the bubble's time by d: in a bubble, a sleep returns as
// soon as every goroutine waits, with the fake clock moved by exactly d.
func advance(d time.Duration) { time.Sleep(d) }

// render shows a value from either side in one neutral form.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case store.ExplicitKey:
		return fmt.Sprintf("explicit(%s)", string(x))
	case cache.ExplicitKey:
		return fmt.Sprintf("explicit(%s)", string(x))
	case store.DeletedFinalStateUnknown:
		return fmt.Sprintf("dfsu(%s, %s)", x.Key, render(x.Obj))
	case cache.DeletedFinalStateUnknown:
		return fmt.Sprintf("dfsu(%s, %s)", x.Key, render(x.Obj))
	case Tomb:
		return fmt.Sprintf("dfsu(%s, %s)", x.Key, render(x.Obj))
	case BadObject:
		return fmt.Sprintf("bad(%d)", x.ID)
	case *unstructured.Unstructured:
		return renderMeta(x)
	case []any:
		parts := make([]string, len(x))
		for i, o := range x {
			parts[i] = render(o)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case metav1.Object:
		// Only the caches' own tombstones are metadata objects here that
		// are not Unstructured: *store.mutationTombstone, *cache.tombstone.
		return "tombstone " + renderMeta(x)
	case runtime.Object:
		return fmt.Sprintf("%T", x)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

func renderMeta(m metav1.Object) string {
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	s := key + "@" + m.GetResourceVersion()
	if m.GetUID() != "" {
		s += " uid=" + string(m.GetUID())
	}
	if u, ok := m.(*unstructured.Unstructured); ok {
		for _, k := range []string{"app", LabelIndexFails} {
			if v, ok := u.GetLabels()[k]; ok {
				s += " " + k + "=" + v
			}
		}
	}
	return s
}

// MPod is a pod for mutation scripts: key "ns/name" or "name", a
// resourceVersion (any string: the caches must cope with bad ones), a UID
// and an app label ("" for none).
func MPod(key, rv, uid, app string) *unstructured.Unstructured {
	var opts []ObjOption
	if app != "" {
		opts = append(opts, Label("app", app))
	}
	p := Pod(key, opts...)
	p.SetResourceVersion(rv)
	p.SetUID(types.UID(uid))
	return p
}

// lineLog is a logr sink that writes down every line at every level, so
// that what the two caches log (client-go's V(4) line included) is
// compared too.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) logger() klog.Logger { return logr.New(&lineSink{log: l}) }

func (l *lineLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

// take returns the lines written since the last take, each side's own
// type names (in an index function's error, say) made neutral.
func (l *lineLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	for i, line := range out {
		out[i] = sideTypes.Replace(line)
	}
	return out
}

var sideTypes = strings.NewReplacer(
	"store.ExplicitKey", "ExplicitKey", "cache.ExplicitKey", "ExplicitKey",
	"store.DeletedFinalStateUnknown", "DeletedFinalStateUnknown", "cache.DeletedFinalStateUnknown", "DeletedFinalStateUnknown")

type lineSink struct {
	log *lineLog
	kv  []any
}

func (s *lineSink) Init(logr.RuntimeInfo)  {}
func (s *lineSink) Enabled(level int) bool { return true }
func (s *lineSink) Info(level int, msg string, kv ...any) {
	s.log.add(fmt.Sprintf("V(%d) %q %v", level, msg, append(append([]any(nil), s.kv...), kv...)))
}
func (s *lineSink) Error(err error, msg string, kv ...any) {
	s.log.add(fmt.Sprintf("error %q err=%v %v", msg, err, append(append([]any(nil), s.kv...), kv...)))
}
func (s *lineSink) WithValues(kv ...any) logr.LogSink {
	return &lineSink{log: s.log, kv: append(append([]any(nil), s.kv...), kv...)}
}
func (s *lineSink) WithName(string) logr.LogSink { return s }
