package exercise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/listwatch"
)

// server is one embedded etcd with kube-apiserver's storage in front of
// it: k8s.io/apiserver's cacher and cache delegator over its etcd3 store
// (package apistorage), on a fake clock.
type server struct {
	etcd  *listwatch.Embedded
	pods  *listwatch.Writer
	clock *clocktesting.FakeClock
	api   *apistorage.Server
	lw    *apistorage.ListerWatcher
	held  bool
}

// settleTimeout bounds every wait for the real cache: a story that is
// right never waits that long.
const settleTimeout = 10 * time.Second

// playReal plays steps against the real watch cache and returns the
// answer to each "list".
func playReal(steps []Step) ([]Answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	api, err := apistorage.New(ctx, e.Client(), listwatch.Pods, apistorage.Options{Cache: true, Clock: clk})
	if err != nil {
		return nil, err
	}
	defer api.Close()
	s := &server{etcd: e, pods: listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{}),
		clock: clk, api: api, lw: api.ListerWatcher("")}
	var answers []Answer
	for i, st := range steps {
		if st.Do == "list" {
			a, err := s.list(ctx, st)
			if err != nil {
				return nil, fmt.Errorf("step %d (%s): %w", i+1, tell(st), err)
			}
			answers = append(answers, a)
			continue
		}
		if err := s.do(ctx, st); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, tell(st), err)
		}
	}
	return answers, nil
}

// do plays a step other than a LIST, and waits until the cache has done
// all it will do about it: taken in etcd's revision, unless held.
func (s *server) do(ctx context.Context, st Step) error {
	switch st.Do {
	case "create":
		ns, name, _ := strings.Cut(st.Key, "/")
		p := &unstructured.Unstructured{}
		p.SetAPIVersion("v1")
		p.SetKind("Pod")
		p.SetNamespace(ns)
		p.SetName(name)
		if _, err := s.pods.Create(ctx, p); err != nil {
			return err
		}
	case "delete":
		ns, name, _ := strings.Cut(st.Key, "/")
		if _, err := s.pods.Delete(ctx, ns, name, listwatch.Preconditions{}); err != nil {
			return err
		}
	case "hold-cache":
		s.api.HoldCache()
		s.held = true
	case "release-cache":
		s.api.ReleaseCache()
		s.held = false
	case "restart-apiserver":
		if err := s.api.RestartCache(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no such step %q", st.Do)
	}
	return s.settle(ctx)
}

// settle waits until the cache has taken in etcd's revision (it is ready
// and caught up), or, held, has taken in all it will.
func (s *server) settle(ctx context.Context) error {
	rev, err := s.etcd.Revision(ctx)
	if err != nil {
		return err
	}
	return waitFor(ctx, func() bool {
		return s.api.CacheCaughtUp(uint64(rev)) && (s.held || s.api.Ready())
	}, func() string { return "the watch cache did not catch up with etcd: " + s.api.CacheState() })
}

// list sends one LIST. A LIST the cache makes wait (it is behind etcd)
// waits on the server's clock: while it does, the clock moves a second
// at a time, until the cache answers (3 s at most).
func (s *server) list(ctx context.Context, st Step) (Answer, error) {
	lctx, src := apistorage.WithSource(ctx)
	type result struct {
		obj runtime.Object
		err error
	}
	done := make(chan result, 1)
	go func() {
		obj, err := s.lw.ListWithContext(lctx, metav1.ListOptions{
			ResourceVersion:      st.ResourceVersion,
			ResourceVersionMatch: metav1.ResourceVersionMatch(st.ResourceVersionMatch),
			Limit:                st.Limit,
		})
		done <- result{obj, err}
	}()
	deadline := time.After(settleTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	// The clock moves a second at a time while the cache makes the LIST
	// wait, up to the cache's 3 s (watch_cache.go's blockTimeout) and no
	// further: past it the LIST goes to etcd, and its goroutine only looks
	// stalled until it is scheduled.
	start := s.clock.Now()
	for {
		select {
		case r := <-done:
			return answer(src.String(), r.obj, r.err)
		case <-tick.C:
			if s.clock.Since(start) < 3*time.Second && s.api.Stalled() {
				s.clock.Step(time.Second)
			}
		case <-deadline:
			return Answer{}, fmt.Errorf("the LIST was not answered in %v: %s", settleTimeout, s.api.CacheState())
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
	}
}

// answer reduces a LIST's result to an Answer.
func answer(source string, obj runtime.Object, err error) (Answer, error) {
	if err != nil {
		var st apierrors.APIStatus
		if !errors.As(err, &st) {
			return Answer{}, fmt.Errorf("the LIST failed with something that is not an API error: %v", err)
		}
		return Answer{Source: source, Code: int(st.Status().Code)}, nil
	}
	l, ok := obj.(*unstructured.UnstructuredList)
	if !ok {
		return Answer{}, fmt.Errorf("the LIST returned a %T", obj)
	}
	return Answer{Source: source, ResourceVersion: l.GetResourceVersion(), Items: len(l.Items)}, nil
}

// waitFor waits until cond holds, checking every millisecond (a wait on
// a condition the cache exports, not a guess at how long it takes).
func waitFor(ctx context.Context, cond func() bool, what func() string) error {
	deadline := time.After(settleTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return errors.New(what())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
