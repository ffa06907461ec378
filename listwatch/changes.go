package listwatch

import (
	"context"
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
	// Keys is every key in the list's range at this revision: a key the
	// copy has and this lacks was deleted.
	Keys []string
}

// Written is one key written since a revision, and its object in a list.
type Written struct {
	Key    string
	Object *unstructured.Unstructured
}

// ListChanges reads, at opts' resourceVersion (read exactly), what the
// LIST opts asks for holds that it did not hold at revision since: the
// keys written in between and their objects as ListWithContext would
// return them, and every key the list's range holds. It reads the keys
// written with etcd's min-mod-revision filter, and the rest as keys only.
// A value written in between that does not decode fails it as it fails a
// LIST; opts must not ask for pages. A simulator's invariants check the
// informers' indexers against etcd after each step: this makes a step's
// check cost what the step wrote (TestListChangesKeepsAListUpToDate).
func (lw *ListerWatcher) ListChanges(ctx context.Context, opts metav1.ListOptions, since int64) (Changes, error) {
	var ch Changes
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	req, err := lw.parseList(opts)
	if err != nil {
		return ch, err
	}
	if req.rev <= 0 || req.limit > 0 || req.continued {
		return ch, badRequest("ListChanges wants an exact resourceVersion and no pages")
	}
	scope := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(req.prefix)), clientv3.WithRev(req.rev)}
	if req.single {
		scope = []clientv3.OpOption{clientv3.WithRev(req.rev)}
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
	keys, err := lw.client.Get(ctx, req.start, append(scope, clientv3.WithKeysOnly())...)
	if err != nil {
		return ch, lw.listError(ctx, err, req)
	}
	ch.Keys = make([]string, len(keys.Kvs))
	for i, kv := range keys.Kvs {
		ch.Keys[i] = string(kv.Key)
	}
	return ch, nil
}

// A ListCopy is a LIST's objects kept up to date with ListChanges: each
// read at a later revision reads and decodes only what was written since
// the one before. It keeps what its caller makes of each object (a name
// and a resourceVersion, say), not the objects. Whoever rewrites etcd's
// history (a restore of a snapshot, a wipe: revisions come again with
// other content) must Reset it.
type ListCopy[T any] struct {
	lw   *ListerWatcher
	opts metav1.ListOptions
	keep func(*unstructured.Unstructured) T
	rev  int64        // the revision kept is at; 0 before the first read
	kept map[string]T // by etcd key
}

// NewListCopy keeps a copy of the LIST opts asks for (its selectors; its
// resourceVersion and pages are At's business), as keep makes each
// object.
func NewListCopy[T any](lw *ListerWatcher, opts metav1.ListOptions, keep func(*unstructured.Unstructured) T) *ListCopy[T] {
	opts.ResourceVersion, opts.Limit, opts.Continue = "", 0, ""
	return &ListCopy[T]{lw: lw, opts: opts, keep: keep}
}

// Reset forgets the copy: the next At reads everything.
func (c *ListCopy[T]) Reset() { c.rev, c.kept = 0, nil }

// At returns what the copy keeps of the list's objects at revision rev,
// by etcd key: a map of its own, which the copy does not change later.
// Reading at a revision before the copy's reads everything again. An
// error (the revision compacted, a value that does not decode) leaves the
// copy as it was.
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
	next := make(map[string]T, len(ch.Keys))
	if since > 0 {
		for _, k := range ch.Keys {
			if v, ok := c.kept[k]; ok {
				next[k] = v
			}
		}
	}
	for _, w := range ch.Written {
		delete(next, w.Key)
		if w.Object != nil {
			next[w.Key] = c.keep(w.Object)
		}
	}
	c.rev, c.kept = rev, next
	return next, nil // a new map each time: the copy never changes one it returned
}
