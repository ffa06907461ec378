package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
)

// The world's actions: writes to etcd, compaction, the informers' start,
// handlers, the clock, and what "show" prints.

// wrote notes a write and whether the informers' watches will see it: an
// object that matches the selectors before or after the write.
func (r *runner) wrote(before, after *unstructured.Unstructured) {
	if r.cfg == nil {
		return
	}
	r.unseenWrite = !(r.cfg.matches(before) || r.cfg.matches(after))
}

func (r *runner) revision() (int64, error) {
	resp, err := r.client.Get(r.ctx, "cachelab-revision-probe")
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

func (r *runner) newPod(key string) (*unstructured.Unstructured, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("object %q: want namespace/name", key)
	}
	u := examplePod()
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

func (r *runner) create(key string, labels map[string]string, managed bool) error {
	u, err := r.newPod(key)
	if err != nil {
		return err
	}
	if len(labels) > 0 {
		u.SetLabels(labels)
	}
	if managed {
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v1", Time: &metav1.Time{Time: r.clock.Now()}, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}})
	}
	out, err := r.writer.Create(r.ctx, u)
	if err != nil {
		return err
	}
	r.wrote(nil, out)
	r.note(layerEtcd, key, "create "+describeLong(out))
	return nil
}

func (r *runner) update(key string, labels map[string]string, image string) error {
	ns, name, _ := strings.Cut(key, "/")
	u, err := r.writer.Get(r.ctx, ns, name)
	if err != nil {
		return err
	}
	old := describe(u)
	before := u.DeepCopy()
	if labels != nil {
		u.SetLabels(labels)
	}
	if image != "" {
		if err := unstructured.SetNestedField(u.Object, image, "spec", "image"); err != nil {
			return err
		}
	}
	out, err := r.writer.Update(r.ctx, u)
	if err != nil {
		return err
	}
	r.wrote(before, out)
	r.note(layerEtcd, key, "update "+old+" -> "+describeLong(out))
	return nil
}

func (r *runner) delete(key string) error {
	ns, name, _ := strings.Cut(key, "/")
	out, err := r.writer.Delete(r.ctx, ns, name, listwatch.Preconditions{})
	if err != nil {
		return err
	}
	r.wrote(out, nil)
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.note(layerEtcd, key, fmt.Sprintf("delete %s (at rv %d)", describe(out), rev))
	return nil
}

func (r *runner) compact() error {
	rev, err := r.revision()
	if err != nil {
		return err
	}
	if _, err := r.client.Compact(r.ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact to %d: %w", rev, err)
	}
	r.note(layerEtcd, "", fmt.Sprintf("compact: history before rv %d is gone", rev))
	return nil
}

// cmdStart starts both informers (start), or both bare queues with their
// reflectors (start-queue, queue true).
func cmdStart(r *runner, a args, queue bool) error {
	if r.cfg != nil {
		return fmt.Errorf("the informers are already started")
	}
	cfg := startConfig{stack: r.stack()}
	if v, ok := a.value("resync"); ok {
		cfg.resync, _ = time.ParseDuration(v)
	}
	cfg.labels, _ = a.value("labels")
	cfg.fields, _ = a.value("fields")
	cfg.transform, _ = a.value("transform")
	cfg.queue = queue
	for i, s := range r.sides {
		lw := listwatch.NewListerWatcher(r.clients[i+1], r.res, listwatch.Options{})
		s.probe = newProbe(lw, cfg.labels, cfg.fields, s.rec)
		if err := s.start(cfg, r.opts.Seed); err != nil {
			return err
		}
	}
	r.cfg = &cfg
	return nil
}

func cmdAddHandler(r *runner, a args) error {
	name := a.pos[0]
	resync := time.Duration(-1)
	if v, ok := a.value("resync"); ok {
		resync, _ = time.ParseDuration(v)
	}
	for _, s := range r.sides {
		if s.handlerNamed(name) != nil {
			return fmt.Errorf("a handler named %q is already registered", name)
		}
		h := newHandler(name, resync, a.flags["slow"], s.rec)
		s.handlers = append(s.handlers, h)
		if s.inf != nil {
			if err := s.inf.addHandler(h); err != nil {
				return err
			}
		}
	}
	return nil
}

func cmdProgress(r *runner, a args) error {
	if r.cfg == nil {
		return fmt.Errorf("progress needs started informers")
	}
	for _, s := range r.sides {
		s.probe.showNextBookmark()
		if err := s.probe.lw.RequestProgress(r.ctx); err != nil {
			return err
		}
	}
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.note(layerEtcd, "", fmt.Sprintf("progress notification requested (etcd at rv %d)", rev))
	return nil
}

func (r *runner) advance(d time.Duration) error {
	r.clock.Step(d)
	for _, s := range r.sides {
		if s.probe != nil {
			s.probe.mu.Lock()
			s.probe.parked = false // a reflector waiting on the clock moves on
			s.probe.mu.Unlock()
		}
	}
	r.note(layerSim, "", fmt.Sprintf("clock +%v (now %s)", d, r.clock.Now().Sub(epoch)))
	return nil
}

func (r *runner) setPaused(p bool) error {
	if r.cfg == nil || !r.cfg.queue {
		return fmt.Errorf("pause and resume work on a queue started with start-queue: in a running informer, " +
			"processing holds the queue's lock, so pausing it would stop the reflector too (see the queue world in sim/queueworld.go)")
	}
	r.paused = p
	if p {
		r.note(layerSim, "", "processing paused: nobody pops the queue")
	} else {
		r.note(layerSim, "", "processing resumed: the queue is popped")
	}
	return nil
}

// show adds a show command's lines to a side's trace.
func (r *runner) show(s *side, a args, sn snapshot) {
	add := func(text string) { s.rec.add(layerShow, "", text) }
	switch a.pos[0] {
	case "store":
		if s.inf == nil {
			add("(not started)")
			return
		}
		objs, _ := s.inf.indexer()
		lines := make([]string, 0, len(objs))
		for _, o := range objs {
			lines = append(lines, describeLong(o))
		}
		sort.Strings(lines)
		add(fmt.Sprintf("%d objects; last synced rv %s", len(objs), sn.LastSyncRV))
		for _, l := range lines {
			add("  " + l)
		}
	case "synced":
		for _, n := range syncedNames(sn) {
			add(fmt.Sprintf("%s HasSynced=%t", n, sn.Synced[n]))
		}
	case "handlers":
		for _, h := range s.handlers {
			if h.removed {
				continue
			}
			state := ""
			if h.slow() {
				state = ", slow (held)"
			}
			add(fmt.Sprintf("%s: %d calls%s", h.name, h.callCount(), state))
		}
	case "requests":
		if s.probe == nil {
			add("(not started)")
			return
		}
		for _, q := range s.probe.requests() {
			add(q)
		}
	case "queue":
		// Only cachelab's queue can be seen: the line goes in a layer
		// that is cachelab's own and not compared.
		if s.inf == nil {
			return
		}
		if q, ok := s.inf.(queueOps); ok {
			if n, ok := q.queued(); ok {
				s.rec.add(layerQueueLen, "", fmt.Sprintf("%d items waiting", n))
			}
			return
		}
		if b, ok := s.inf.backlog(); ok {
			keys := make([]string, 0, len(b.Handlers))
			for k := range b.Handlers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := []string{fmt.Sprintf("queue: %d unfinished", b.Queued)}
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s: %d pending", k, b.Handlers[k]))
			}
			s.rec.add(layerQueueLen, "", strings.Join(parts, "; "))
		}
	}
}
