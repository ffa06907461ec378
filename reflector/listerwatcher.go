package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListerWatcher is where a Reflector gets its data: a LIST and a WATCH of
// one resource. It is client-go's ListerWatcher method set, so any
// client-go ListerWatcher fits; one that also has the context methods
// (ListerWatcherWithContext, as listwatch.ListerWatcher does) is called
// through those.
type ListerWatcher interface {
	List(opts metav1.ListOptions) (runtime.Object, error)
	Watch(opts metav1.ListOptions) (watch.Interface, error)
}

// ListerWatcherWithContext is a ListerWatcher whose calls take a context,
// which ends them when the reflector stops. It is what the reflector
// calls.
type ListerWatcherWithContext interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// ToListerWatcherWithContext returns lw's context methods if it has them,
// else a wrapper whose calls ignore the context (client-go:
// ToListerWatcherWithContext). The wrapper hides everything else lw
// declares, WatchListUnsupported included, which is why New looks at lw
// before it wraps it.
func ToListerWatcherWithContext(lw ListerWatcher) ListerWatcherWithContext {
	if c, ok := lw.(ListerWatcherWithContext); ok {
		return c
	}
	return withoutContext{lw}
}

type withoutContext struct{ lw ListerWatcher }

func (w withoutContext) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return w.lw.List(opts)
}

func (w withoutContext) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return w.lw.Watch(opts)
}
