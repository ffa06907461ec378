package listwatch

import (
	"context"
	"maps"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Changes is what a LIST at one revision would hold that the same LIST
// at an earlier revision did not: enough to keep a copy of the list up to
// date without reading and decoding every object again.
type Changes struct {
	// Written is every key in the list's range written after the earlier
	// revision and present at this one, in key order, with its object if
	// the list holds it (nil where the selectors leave it out).
	Written []Written
	// Count is how many keys the list's range holds at this revision,
	// whether the selectors keep them or not: a copy that knows which
	// keys it had can tell from it whether any was deleted.
	Count int64
}

// Written is one key written since a revision, and its object in a list.
type Written struct {
	Key    string
	Object *unstructured.Unstructured
}

// ListChanges reads, at opts' resourceVersion (read exactly), what the
// LIST opts asks for holds that it did not hold at revision since: the
// keys written in between and their objects as ListWithContext would
// return them, and how many keys the list's range holds. It reads the
// keys written with etcd's min-mod-revision filter, and counts the rest
// without reading them. A value written in between that does not decode
// fails it as it fails a LIST; opts must not ask for pages. A simulator's
// invariants check the informers' indexers against etcd after each step:
// this makes a step's check cost what the step wrote
// (TestListChangesKeepsAListUpToDate).
func (lw *ListerWatcher) ListChanges(ctx context.Context, opts metav1.ListOptions, since int64) (Changes, error) {
	var ch Changes
	req, scope, err := lw.exactScope(opts)
	if err != nil {
		return ch, err
	}
	resp, err := lw.client.Get(ctx, req.start, append(scope, clientv3.WithMinModRev(since+1))...)
	if err != nil {
		return ch, lw.listError(ctx, err, req)
	}
	var corrupt []corruptValue
	for _, kv := range resp.Kvs {
		obj, err := decodeValue(kv.Value, kv.ModRevision)
		if err != nil {
			corrupt = append(corrupt, corruptValue{key: string(kv.Key), rev: kv.ModRevision, err: err})
			continue
		}
		w := Written{Key: string(kv.Key)}
		if req.filter.matches(obj) {
			w.Object = obj
		}
		ch.Written = append(ch.Written, w)
	}
	if len(corrupt) > 0 {
		return ch, lw.storageReadError(corrupt[:min(len(corrupt), maxCorrupt)], len(corrupt) >= maxCorrupt)
	}
	count, err := lw.client.Get(ctx, req.start, append(scope, clientv3.WithCountOnly())...)
	if err != nil {
		return ch, lw.listError(ctx, err, req)
	}
	ch.Count = count.Count
	return ch, nil
}

// ListKeys is every key the range of the LIST opts asks for holds at its
// resourceVersion (read exactly), whether its selectors keep the objects
// or not, in key order.
func (lw *ListerWatcher) ListKeys(ctx context.Context, opts metav1.ListOptions) ([]string, error) {
	req, scope, err := lw.exactScope(opts)
	if err != nil {
		return nil, err
	}
	resp, err := lw.client.Get(ctx, req.start, append(scope, clientv3.WithKeysOnly())...)
	if err != nil {
		return nil, lw.listError(ctx, err, req)
	}
	keys := make([]string, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		keys[i] = string(kv.Key)
	}
	return keys, nil
}

// exactScope is the etcd range of the LIST opts asks for, read at its
// resourceVersion exactly and without pages.
func (lw *ListerWatcher) exactScope(opts metav1.ListOptions) (listRequest, []clientv3.OpOption, error) {
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	req, err := lw.parseList(opts)
	if err != nil {
		return req, nil, err
	}
	if req.rev <= 0 || req.limit > 0 || req.continued {
		return req, nil, badRequest("ListChanges wants an exact resourceVersion and no pages")
	}
	if req.single {
		return req, []clientv3.OpOption{clientv3.WithRev(req.rev)}, nil
	}
	return req, []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(req.prefix)), clientv3.WithRev(req.rev)}, nil
}

// A ListCopy is a LIST's objects kept up to date with ListChanges: each
// read at a later revision reads and decodes only what was written since
// the one before, and reads the range's keys only when a key was deleted
// in between. It keeps what its caller makes of each object (a name and a
// resourceVersion, say), not the objects. Whoever rewrites etcd's history
// (a restore of a snapshot, a wipe: revisions come again with other
// content) must Reset it.
type ListCopy[T any] struct {
	lw   *ListerWatcher
	opts metav1.ListOptions
	keep func(*unstructured.Unstructured) T
	rev  int64           // the revision kept is at; 0 before the first read
	kept map[string]T    // by etcd key: the objects the LIST holds
	left map[string]bool // the keys in its range that the selectors leave out
}

// NewListCopy keeps a copy of the LIST opts asks for (its selectors; its
// resourceVersion and pages are At's business), as keep makes each
// object.
func NewListCopy[T any](lw *ListerWatcher, opts metav1.ListOptions, keep func(*unstructured.Unstructured) T) *ListCopy[T] {
	opts.ResourceVersion, opts.Limit, opts.Continue = "", 0, ""
	return &ListCopy[T]{lw: lw, opts: opts, keep: keep}
}

// Reset forgets the copy: the next At reads everything.
func (c *ListCopy[T]) Reset() { c.rev, c.kept, c.left = 0, nil, nil }

// At returns what the copy keeps of the list's objects at revision rev,
// by etcd key: a map the copy does not change later (the same map as the
// read before, where nothing changed in between). Reading at a revision
// before the copy's reads everything again. An error (the revision
// compacted, a value that does not decode) leaves the copy as it was.
func (c *ListCopy[T]) At(ctx context.Context, rev int64) (map[string]T, error) {
	since := c.rev
	if rev < since || c.kept == nil {
		since = 0
	}
	opts := c.opts
	opts.ResourceVersion = strconv.FormatInt(rev, 10)
	ch, err := c.lw.ListChanges(ctx, opts, since)
	if err != nil {
		return nil, err
	}
	base, baseLeft := c.kept, c.left
	if since == 0 {
		base, baseLeft = map[string]T{}, map[string]bool{}
	}
	had := int64(len(base) + len(baseLeft))
	for _, w := range ch.Written {
		if _, ok := base[w.Key]; !ok && !baseLeft[w.Key] {
			had++ // a key new since the copy's revision
		}
	}
	deleted := had != ch.Count
	if len(ch.Written) == 0 && !deleted {
		c.rev, c.kept, c.left = rev, base, baseLeft
		return base, nil
	}
	var keys []string
	if deleted {
		if keys, err = c.lw.ListKeys(ctx, opts); err != nil {
			return nil, err
		}
	}
	kept, left := maps.Clone(base), maps.Clone(baseLeft)
	if deleted {
		present := make(map[string]bool, len(keys))
		for _, k := range keys {
			present[k] = true
		}
		maps.DeleteFunc(kept, func(k string, _ T) bool { return !present[k] })
		maps.DeleteFunc(left, func(k string, _ bool) bool { return !present[k] })
	}
	for _, w := range ch.Written {
		delete(kept, w.Key)
		delete(left, w.Key)
		if w.Object != nil {
			kept[w.Key] = c.keep(w.Object)
		} else {
			left[w.Key] = true
		}
	}
	c.rev, c.kept, c.left = rev, kept, left
	return kept, nil
}
