// Package requestlog writes down the requests informers send: a
// ListerWatcher of cachelab's etcd that adds a line per LIST and WATCH
// to a log, so that a test, a chapter's cell or a lab can count what a
// shared informer factory asked the server, and compare it with what
// client-go's asked.
package requestlog

import (
	"context"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/listwatch"
)

// Log is the requests of one side, one line each:
// `WATCH pods rv="" sendInitialEvents=true`, with its selectors if any.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Wrap is lw with each request written to l, named what (the resource,
// and whatever else the caller wants in the line).
func (l *Log) Wrap(lw *listwatch.ListerWatcher, what string) *ListerWatcher {
	return &ListerWatcher{ListerWatcher: lw, log: l, what: what}
}

// Lines is the log, sorted: informers run on goroutines of their own, so
// the order of their requests is free.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.lines))
}

func (l *Log) add(verb, what string, o metav1.ListOptions) {
	line := fmt.Sprintf("%s %s rv=%q", verb, what, o.ResourceVersion)
	if o.LabelSelector != "" {
		line += fmt.Sprintf(" labels=%q", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		line += fmt.Sprintf(" fields=%q", o.FieldSelector)
	}
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		line += " sendInitialEvents=true"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// ListerWatcher is an etcd ListerWatcher whose requests go into a Log.
type ListerWatcher struct {
	*listwatch.ListerWatcher
	log  *Log
	what string
}

func (l *ListerWatcher) List(o metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), o)
}

func (l *ListerWatcher) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), o)
}

func (l *ListerWatcher) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	l.log.add("LIST", l.what, o)
	return l.ListerWatcher.ListWithContext(ctx, o)
}

func (l *ListerWatcher) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	l.log.add("WATCH", l.what, o)
	return l.ListerWatcher.WatchWithContext(ctx, o)
}
