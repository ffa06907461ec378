package consistencydetector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Tiny builders for the tables.

func pod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name)}}
}

// anonymous is a pod without a UID: every such pod sorts as equal.
func anonymous(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
}

func podList(rv string, pods ...*v1.Pod) *v1.PodList {
	l := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

func objects(pods ...*v1.Pod) []runtime.Object {
	out := make([]runtime.Object, len(pods))
	for i, p := range pods {
		out[i] = p
	}
	return out
}

func unstructuredPod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	return u
}

// answer is what one LIST call returns.
type answer struct {
	list runtime.Object
	err  error
}

func listed(l runtime.Object) answer { return answer{list: l} }
func failed(msg string) answer       { return answer{err: errors.New(msg)} }

// lister answers LIST calls from a script (the last answer repeats) and
// writes down the options of each call. cancel, if set, is called at the
// call whose number is cancelAt (1-based), before it answers.
type lister struct {
	mu       sync.Mutex
	answers  []answer
	requests []metav1.ListOptions
	cancelAt int
	cancel   context.CancelFunc
}

func (l *lister) List(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, opts)
	n := len(l.requests)
	if n == l.cancelAt && l.cancel != nil {
		l.cancel()
	}
	a := l.answers[min(n, len(l.answers))-1]
	return a.list, a.err
}

// logSink writes down every entry: level, message and keys, in order.
type logSink struct {
	mu    *sync.Mutex
	lines *[]string
	names []string
}

func newLogger() (klog.Logger, func() []string) {
	var mu sync.Mutex
	var lines []string
	return logr.New(&logSink{mu: &mu, lines: &lines}), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

func (s *logSink) Init(logr.RuntimeInfo)          {}
func (s *logSink) Enabled(int) bool               { return true }
func (s *logSink) WithValues(...any) logr.LogSink { return s }
func (s *logSink) WithName(name string) logr.LogSink {
	c := *s
	c.names = append(append([]string(nil), s.names...), name)
	return &c
}

func (s *logSink) Info(level int, msg string, kv ...any) {
	s.add(fmt.Sprintf("V(%d) %s%q%s", level, s.name(), msg, keys(kv)))
}

func (s *logSink) Error(err error, msg string, kv ...any) {
	s.add(fmt.Sprintf("error %s%q err=%v%s", s.name(), msg, err, keys(kv)))
}

func (s *logSink) name() string {
	if len(s.names) == 0 {
		return ""
	}
	return "[" + strings.Join(s.names, "/") + "] "
}

func (s *logSink) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.lines = append(*s.lines, line)
}

func keys(kv []any) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	return b.String()
}

// panicked runs f and returns what it panicked with, as text ("" if it
// did not).
func panicked(f func()) (value string) {
	defer func() {
		if r := recover(); r != nil {
			value = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
