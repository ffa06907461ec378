package sim

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// On a cluster (Options.Cluster, the CLI's --kubeconfig), a run has no
// etcd and no watch cache of its own: it makes a namespace in the
// cluster (package cluster), writes there through the API, and both
// informers reach the cluster's kube-apiserver over HTTPS with their own
// HTTP clients, as over the wire in process (sim/world/wire.go).
//
// What changes for the run:
//   - Every namespace a scenario names is the run's namespace, and an
//     informer of all namespaces watches that namespace only: a run
//     never reads the cluster's other pods. A scenario that names more
//     than one namespace, or selects by namespace in a field selector,
//     is refused.
//   - A step has settled when each informer has reached the newest write
//     in its scope (its namespace and selectors): its reflector's
//     resourceVersion is at least that write's. There is no etcd to ask
//     for a bookmark, and none is needed: a write out of the scope is
//     not waited for.
//   - The invariants hold each indexer against a LIST of the namespace
//     at the informer's resourceVersion, from the cluster.
//   - A cluster's other components write all the time (leases, events),
//     each write moving etcd's revision, so two informers that list or
//     start a watch-list a moment apart are told different
//     resourceVersions for the same objects: one is told the run's last
//     write's, the other a later one of other components' writes. Each
//     side's lines and state show a resourceVersion that is a point in
//     the cluster's history (a LIST's, a bookmark's, the store's, a
//     request's) as the run's newest write at or before it and a "+":
//     "rv 4987+" is the cluster's revision at the run's write 4987 or
//     some moment after it, before its next. What is compared is then
//     the same for both sides. An object's resourceVersion (a@4905) is
//     the run's write and stays as it is.

// clusterWorld is a real cluster through a kubeconfig (Options.Cluster):
// the run's namespace there, which its writes go to and its informers
// watch, and the proxy between the informers and the cluster.
type clusterWorld struct {
	quietWorld
	r     *runner
	ns    *cluster.Namespace
	proxy *cluster.Proxy
	wires map[wireKey]world.Wire // each side's HTTP client of the cluster, through proxy
	// rv is the resourceVersion of the run's newest write, and ownRVs
	// those of all its writes, in order.
	rv     string
	ownRVs []int64
	// ended: the namespace was deleted, or deleting it failed with
	// left.
	ended bool
	left  error
}

// connect makes the run's namespace on the cluster, its writer, and
// both sides of start's informer.
func (c *clusterWorld) connect() error {
	r := c.r
	ns, err := r.opts.Cluster.Begin(r.ctx, "cachelab-"+namespacePart(r.sc.Name)+"-")
	if err != nil {
		return err
	}
	c.ns = ns
	if c.proxy, err = r.opts.Cluster.StartProxy(); err != nil {
		return err
	}
	sides, err := r.newPair("", r.res)
	if err != nil {
		return err
	}
	r.sides = sides
	return nil
}

func (c *clusterWorld) describe(h *trace.Header) {
	h.Etcd, h.Cluster = "the cluster's", clusterHeader(c.r.opts.Cluster, c.ns.Name())
}

// server: every namespace is the run's. It serves the resource res
// names when the side makes a request (start may start the informer on
// another resource than the last).
func (c *clusterWorld) server(_ string, res *listwatch.Resource, i int, impl, user string, rec *trace.Recorder) (func(ns string) world.Server, int, error) {
	return func(string) world.Server { return c.wire(impl, user, *res, rec).Server(c.ns.Name()) }, i + 1, nil
}

func (c *clusterWorld) namespace(string) string { return c.ns.Name() }

// writer: the run's objects of the resource, in the run's namespace
// (cluster.Kept; lever.Resource refused the others before the first
// step).
func (c *clusterWorld) writer(name string) (objectWriter, error) {
	return c.ns.Of(c.r.resourceNamed(name))
}

func (c *clusterWorld) cutters() ([]cutter, string) { return []cutter{c.proxy}, "the cluster" }

// made: a cluster's requests are timed as a real server's (world.Conn's
// OnCluster).
func (c *clusterWorld) made(p *world.Conn) { p.OnCluster(c.r.clock) }

func (c *clusterWorld) stepped(sr *trace.StepResult, began time.Time) {
	sr.Took = time.Since(began) // a cluster's time, said as such (trace.StepResult)
}

func (c *clusterWorld) close() {
	for _, w := range c.wires {
		w.Close()
	}
	if c.proxy != nil {
		_ = c.proxy.Close()
	}
}

// namespacePart is a scenario's name as part of a namespace's name: a
// DNS label, short enough to leave room for the rest.
func namespacePart(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "run"
	}
	return s
}

// wire is the side's HTTP client of the cluster for res, made at the
// first call.
func (c *clusterWorld) wire(impl, user string, res listwatch.Resource, rec *trace.Recorder) world.Wire {
	k := wireKey{user: user, resource: res.Resource}
	if w, ok := c.wires[k]; ok {
		return w
	}
	newWire := world.CachelabCluster
	if impl == trace.ClientGo {
		newWire = world.ClientGoCluster
	}
	w, err := newWire(c.proxy, user, res, c.ns.Name(), rec)
	if err != nil {
		// Made from the configuration Open read and checked.
		panic(fmt.Sprintf("sim: an HTTP client of the cluster: %v", err))
	}
	if c.wires == nil {
		c.wires = map[wireKey]world.Wire{}
	}
	c.wires[k] = w
	return w
}

// wrote keeps, for each informer whose scope the write is in, the
// resourceVersion the write made: the step has settled for the informer
// once its reflector has reached it. A removal is waited for by its key
// too: a DELETE answers with the object at the deletion's
// resourceVersion, but an update that takes the last finalizer of an
// object being deleted answers with it as it was (kube-apiserver's
// registry), and the DELETED event that follows carries a
// resourceVersion the run is not told.
func (c *clusterWorld) wrote(before, after *unstructured.Unstructured) bool {
	at, gone := after, ""
	if at == nil {
		at, gone = before, trace.KeyOf(before)
	}
	if at == nil {
		return true
	}
	for _, p := range c.r.livePairs() {
		if p[0].cfg.matches(before) || p[0].cfg.matches(after) {
			p[0].clusterRV, p[1].clusterRV = at.GetResourceVersion(), at.GetResourceVersion()
			p[0].clusterGone, p[1].clusterGone = gone, gone
		}
	}
	if rv := at.GetResourceVersion(); rvAtLeast(rv, c.rv) {
		c.rv = rv
		if n, err := strconv.ParseInt(rv, 10, 64); err == nil {
			c.ownRVs = append(c.ownRVs, n)
		}
	}
	return true
}

// rvName is how an object's resourceVersion, which the cluster
// gave, shows in the trace and compares (see the top of this file): as
// it is if one of the run's writes made it, else as the newest of them
// before it, and "+".
func (c *clusterWorld) rvName(rv string) string { return c.name(rv, false) }

// pointName is how a resourceVersion that is a point in the
// cluster's history, not an object's, shows and compares: a LIST's, a
// bookmark's, a request's, the store's. It is the run's newest write at
// or before it, and "+". Two informers that list a moment apart are told
// the run's last write itself, or a revision that other components'
// writes made after it: to them it is the same point, and so it
// compares.
func (c *clusterWorld) pointName(rv string) string { return c.name(rv, true) }

func (c *clusterWorld) name(rv string, point bool) string {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return rv
	}
	i, found := slices.BinarySearch(c.ownRVs, n)
	switch {
	case found && !point:
		return rv
	case found:
		i++ // the write itself is the newest at or before it
	}
	return c.ownBefore(i) + "+"
}

// ownBefore is the i-th of the run's writes' resourceVersions, counting
// from 1 ("0" for none).
func (c *clusterWorld) ownBefore(i int) string {
	if i == 0 {
		return "0"
	}
	return strconv.FormatInt(c.ownRVs[i-1], 10)
}

// rvInText is a resourceVersion in a line's words: an object's (a@12), a
// request's or a list's (rv=12, rv 12), a URL's (resourceVersion=12).
var rvInText = regexp.MustCompile(`(@|\brv[ =]|resourceVersion=)(\d+)\b`)

// shown shows each resourceVersion in events as rvName (an object's) or
// pointName (any other) says, in place.
func (c *clusterWorld) shown(events []trace.Event) {
	for i := range events {
		e := &events[i]
		if e.Key != "" {
			e.RV = c.rvName(e.RV)
		} else {
			e.RV = c.pointName(e.RV)
		}
		e.PrevRV = c.rvName(e.PrevRV)
		e.Detail = rvInText.ReplaceAllStringFunc(e.Detail, func(m string) string {
			sub := rvInText.FindStringSubmatch(m)
			if sub[1] == "@" {
				return sub[1] + c.rvName(sub[2])
			}
			return sub[1] + c.pointName(sub[2])
		})
	}
}

// comparable is a side's state as it compares: its resourceVersions as
// pointName shows them.
func (c *clusterWorld) comparable(sn snapshot) snapshot {
	sn.LastSyncRV, sn.StoreRV = c.pointName(sn.LastSyncRV), c.pointName(sn.StoreRV)
	return sn
}

// rvAtLeast reports whether resourceVersion rv is at least want ("" is
// reached by any).
func rvAtLeast(rv, want string) bool {
	if want == "" {
		return true
	}
	n, err := strconv.ParseInt(want, 10, 64)
	return err == nil && atLeast(rv, n)
}

// revision is the resourceVersion of the run's newest write, as a
// number (a cluster's resourceVersions are its etcd's revisions; a
// client may compare them only for this: the run's own writes, in
// order).
func (c *clusterWorld) revision() (int64, error) {
	if c.rv == "" {
		return 0, nil
	}
	var n int64
	if _, err := fmt.Sscan(c.rv, &n); err != nil {
		return 0, fmt.Errorf("the cluster's resourceVersion %q is not a number", c.rv)
	}
	return n, nil
}

// reached: a side has had what the run wrote in its scope once its
// reflector's resourceVersion is its newest write's there (wrote).
func (c *clusterWorld) reached(s *side, _ int64) bool {
	if !rvAtLeast(s.inf.lastSyncRV(), s.clusterRV) || holds(s, s.clusterGone) {
		return false
	}
	s.clusterGone = "" // gone for good: later settles need not look again
	return true
}

// holds reports whether the side's informer still holds key in its
// store. A bare queue (start-queue) holds a deleted key until it is
// popped, so there the resourceVersion alone says.
func holds(s *side, key string) bool {
	if key == "" || s.cfg == nil || s.cfg.queue {
		return false
	}
	objs, _ := s.inf.indexer()
	for _, o := range objs {
		if trace.KeyOf(o) == key {
			return true
		}
	}
	return false
}

// listAt is the namespace's objects of the informer's resource in its
// scope, at rv exactly.
func (c *clusterWorld) listAt(cfg *startConfig, rv string) (map[string]string, error) {
	objs, err := c.ns.Of(cfg.res)
	if err != nil {
		return nil, err
	}
	items, err := objs.ListAt(c.r.ctx, metav1.ListOptions{LabelSelector: cfg.labels, FieldSelector: cfg.fields}, rv)
	if err != nil {
		return nil, errors.New(world.DescribeErr(err))
	}
	out := make(map[string]string, len(items))
	for i := range items {
		out[trace.KeyOf(&items[i])] = trace.Describe(&items[i])
	}
	return out, nil
}

// end deletes the run's namespace, within limit (Namespace.End takes at
// most a minute), whatever the run's context says: the run may end
// because it was interrupted.
func (c *clusterWorld) end(limit time.Duration) {
	if c.ns == nil || c.ended {
		return
	}
	c.ended = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.ctx), limit)
	defer cancel()
	if err := c.ns.End(ctx); err != nil {
		c.left = err
	}
}

func (c *clusterWorld) leftBehind() error { return c.left }

// clusterHeader is the header's word on the cluster.
func clusterHeader(c *cluster.Cluster, ns string) string {
	return fmt.Sprintf("%s, namespace %s (made for this run; resourceVersions, names and timing differ from run to run)", c.Describe(), ns)
}
