package recording

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/wire"
)

// Options says what to record.
type Options struct {
	// Resource is what the informer lists and watches, one of
	// Resources; pods if zero.
	Resource listwatch.Resource
	// Namespace is the informer's namespace; "" for all.
	Namespace string
	// Labels and Fields are its selectors, as kubectl's -l and
	// --field-selector take them.
	Labels, Fields string
	// Full keeps whole objects; by default a session keeps what Reduce
	// keeps.
	Full bool
	// Server names the cluster in the session line (its address).
	Server string
	// Now is the wall clock: the lines' times count from the first call.
	Now func() time.Time
	// Written, if set, is told of every line once it is written (a
	// test waits on it for the writes it made).
	Written func(Line)
}

// Record runs cachelab's informer (the default stack) of o.Resource on
// the server cfg names, through a Recorder, and writes the session to out
// until ctx ends: the session line, every request, page, watch, event and
// handler call as it comes, then the informer's cache and an end line
// that says why it ended (ctx's cause). It returns the first error
// writing met; that error also ends the recording, at once: a session
// that cannot be written is not recorded on.
// Resources are what a session may record and a replay play: the
// built-in resources a scenario names. A recording only reads, so
// deployments are among them, though a run on a cluster does not write
// them.
var Resources = []listwatch.Resource{listwatch.Pods, listwatch.ConfigMaps, listwatch.Secrets, listwatch.Deployments}

// Replayable says why a session of resource cannot be recorded or
// replayed, or nil.
func Replayable(resource string) error {
	if _, ok := ResourceNamed(resource); ok {
		return nil
	}
	return fmt.Errorf("cachelab records and replays %s, not %s", resourceList(), resource)
}

// resourceList names Resources: "pods, configmaps and secrets".
func resourceList() string {
	var names []string
	for _, r := range Resources {
		names = append(names, r.Resource)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ResourceNamed is the one of Resources named resource.
func ResourceNamed(resource string) (listwatch.Resource, bool) {
	for _, r := range Resources {
		if r.Resource == resource {
			return r, true
		}
	}
	return listwatch.Resource{}, false
}

func Record(ctx context.Context, cfg wire.Config, o Options, out io.Writer) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Resource == (listwatch.Resource{}) {
		o.Resource = listwatch.Pods
	}
	if err := Replayable(o.Resource.Resource); err != nil {
		return err
	}
	objects := "metadata"
	if o.Full {
		objects = "full"
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w := NewWriter(out, o.Now)
	w.written = o.Written
	w.failed = func(err error) { stop(fmt.Errorf("writing the session: %w", err)) }
	w.Write(Line{Kind: KindSession, Version: Version, Resource: o.Resource.Resource, Namespace: o.Namespace, Labels: o.Labels,
		Fields: o.Fields, Server: o.Server, Began: o.Now().UTC().Format(time.RFC3339), Objects: objects})
	var rec *Recorder
	lw, err := wire.NewListerWatcher(cfg, o.Resource, wire.Options{Namespace: o.Namespace,
		Observe: func(x wire.Exchange) { rec.Observe(x) }})
	if err != nil {
		return err
	}
	defer lw.Close()
	rec = NewRecorder(lw, w, o)
	inf := informer.New(rec, informer.Options{})
	if _, err := inf.AddEventHandler(rec.Handler()); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	<-ctx.Done()
	<-done
	rec.Wait()
	WriteCache(w, inf.GetStore().List(), o.Full)
	w.Write(Line{Kind: KindEnd, Error: fmt.Sprint(context.Cause(ctx))})
	return w.Err()
}
