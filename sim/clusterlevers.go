package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// An etcd cluster: a scenario that starts with etcd-cluster runs on an
// embedded cluster of members (m1, m2, m3) on loopback, and its levers
// stop a member, start it again, and move the leadership.
//
// Which member serves a connection decides what a lever does to it, so it
// must be the same on every run. etcd's client balances its requests over
// every endpoint (round_robin), which would serve each watch stream from
// whichever member came next; here each connection lists every member's
// endpoint and uses them in order (listwatch.ClientOptions.InOrder): the
// first that answers serves all its requests, watches included, until it
// fails, and then the next one that answers does (listwatch.Connect and
// MoveOff make sure of "first" and "next" when a member is slow to
// answer: gRPC would try the one after it beside it). The world's
// connection (writes, compaction, revision) lists them m1, m2, m3; both
// informers' list them m2, m3, ..., m1, so that the leader (m1 at the
// start) and the member serving the informers are different members, and
// a lever can hit either. Each lever asks etcd which member answers each
// connection (listwatch.Embedded.MemberServing) and says so in the trace.
//
// The leader is the scenario's too: m1 at the start; when the leader is
// stopped, etcd's shutdown hands leadership to the member connected to
// it longest, and the simulator hands it first to the first member up,
// so every run has the same leader; etcd-move-leader moves it. A busy
// machine can delay heartbeats past the election timeout and let a
// follower take over on its own; each lever first moves the leadership
// back to the scenario's leader if that happened.

// members is how many members the run's embedded etcd has: the
// override, or the scenario's.
func (r *runner) members() int {
	if r.opts.EtcdMembers > 0 {
		return r.opts.EtcdMembers
	}
	return r.sc.Members()
}

// clusterEndpoints is the order in which connection i (0 the world's, 1
// cachelab's, 2 client-go's, 3 and on each kube-apiserver's) lists a
// cluster's endpoints: the world's from m1, the others from m2, each
// going round to the others.
func clusterEndpoints[T any](i int, eps []T) []T {
	if i == 0 {
		return eps
	}
	return append(slices.Clone(eps[1:]), eps[0])
}

// clusterState is what the runner keeps of the cluster between levers.
type clusterState struct {
	leader    int           // the scenario's leader
	stoppedAt map[int]int64 // a stopped member -> etcd's revision when it stopped
}

// clustered checks that the run is on an embedded cluster, and returns
// its state.
func (w *etcdWorld) clustered(cmd string) (*clusterState, error) {
	if err := w.embeddedOnly(); err != nil {
		return nil, err
	}
	if w.etcd.Members() < 2 {
		return nil, fmt.Errorf("%s needs an etcd cluster, and this run's embedded etcd has one member", cmd)
	}
	if w.cluster == nil {
		w.cluster = &clusterState{stoppedAt: map[int]int64{}}
	}
	return w.cluster, nil
}

// memberIndex is the index of the member named p (m1 is 0).
func (w *etcdWorld) memberIndex(p string) (int, error) {
	i, _ := strconv.Atoi(strings.TrimPrefix(p, "m"))
	if i < 1 || i > w.etcd.Members() {
		return 0, fmt.Errorf("no member %s: the cluster has m1 to m%d", p, w.etcd.Members())
	}
	return i - 1, nil
}

func (w *etcdWorld) memberName(i int) string { return w.etcd.MemberName(i) }

// clusterCtx bounds a cluster lever's waits on etcd.
func (w *etcdWorld) clusterCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(w.r.ctx, time.Minute)
}

// holdLeader moves the leadership back to the scenario's leader if a
// follower took it on its own (a busy machine, heartbeats late).
func (w *etcdWorld) holdLeader(ctx context.Context, cl *clusterState) error {
	lead, err := w.etcd.Leader(ctx)
	if err != nil || lead == cl.leader {
		return err
	}
	return w.etcd.MoveLeader(ctx, cl.leader)
}

// serving is the member that answers each connection: the world's, then
// each side's.
func (w *etcdWorld) serving(ctx context.Context) ([]int, error) {
	out := make([]int, len(w.clients))
	for i, c := range w.clients {
		m, err := w.etcd.MemberServing(ctx, c)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// watchersOf are the connections that watch etcd, by their index in
// etcdWorld.clients: the informers', or behind the watch cache each
// kube-apiserver's (the informers talk to kube-apiserver, not to etcd).
func (w *etcdWorld) watchersOf() []int {
	c := w.r.caches()
	if c == nil {
		return []int{1, 2}
	}
	out := make([]int, len(c.apis))
	for k := range c.apis {
		out[k] = 3 + k
	}
	return out
}

// watchers names the connections that watch etcd, for the trace.
func (w *etcdWorld) watchers() string {
	c := w.r.caches()
	switch {
	case c == nil:
		return "the informers"
	case len(c.apis) == 1:
		return "kube-apiserver"
	}
	return "the kube-apiservers"
}

// watchersOn says which member serves the connections that watch etcd.
func (w *etcdWorld) watchersOn(s []int) string {
	r := w.r
	conns := w.watchersOf()
	name := func(k int) string {
		if !r.cached() {
			return []string{trace.Cachelab, trace.ClientGo}[k]
		}
		return fmt.Sprintf("apiserver-%d", k+1)
	}
	same := true
	for _, c := range conns {
		same = same && s[c] == s[conns[0]]
	}
	switch {
	case same && len(conns) == 1:
		return fmt.Sprintf("%s's connection is served by %s", w.watchers(), w.memberName(s[conns[0]]))
	case same:
		return fmt.Sprintf("%s' connections are served by %s", w.watchers(), w.memberName(s[conns[0]]))
	}
	// "cachelab's connection is served by m2, client-go's by m3"
	parts := make([]string, len(conns))
	for k, c := range conns {
		parts[k] = fmt.Sprintf("%s's by %s", name(k), w.memberName(s[c]))
	}
	parts[0] = strings.Replace(parts[0], "'s by ", "'s connection is served by ", 1)
	return strings.Join(parts, ", ")
}

func etcdCluster(w *etcdWorld, a scenario.Args) error {
	r := w.r
	if _, err := w.clustered("etcd-cluster"); err != nil {
		return err
	}
	ctx, cancel := w.clusterCtx()
	defer cancel()
	n := w.etcd.Members()
	names := make([]string, n)
	for i := range n {
		names[i] = w.memberName(i)
	}
	s, err := w.serving(ctx)
	if err != nil {
		return err
	}
	// The embedded cluster starts with m1 leading.
	w.cluster.leader = 0
	if err := w.holdLeader(ctx, w.cluster); err != nil {
		return err
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("etcd cluster of %d members on loopback: %s; %s leads", n, strings.Join(names, " "), w.memberName(0)))
	inf := clusterEndpoints(1, names)
	whose := "both informers'"
	if r.cached() {
		whose = "kube-apiserver's (the informers talk to kube-apiserver, not to etcd)"
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("each connection lists every member and uses the first that answers until it fails: the world's (writes) in the order %s, served by %s; "+
		"%s in the order %s: %s",
		strings.Join(names, ","), w.memberName(s[0]), whose, strings.Join(inf, ","), w.watchersOn(s)))
	return nil
}

// member checks a member lever's argument: the run is on a cluster, and
// the member it names exists and is up (up) or stopped (!up); otherwise
// is how the member is when it is not as the lever needs it.
func (w *etcdWorld) member(cmd string, a scenario.Args, up bool, otherwise string) (*clusterState, int, error) {
	cl, err := w.clustered(cmd)
	if err != nil {
		return nil, 0, err
	}
	i, err := w.memberIndex(a.Pos[0])
	if err != nil {
		return nil, 0, err
	}
	if w.etcd.MemberRunning(i) != up {
		return nil, 0, fmt.Errorf("member %s %s", a.Pos[0], otherwise)
	}
	return cl, i, nil
}

// moveOff readies the connections member i serves (before says which
// member serves each) for i to stop, each to move to the first other
// member up in its order and to no other (listwatch.MoveOff: on a busy
// machine gRPC could skip it). It returns the connections it readied,
// for listEveryMember.
func (w *etcdWorld) moveOff(i int, before []int) []int {
	eps := w.etcd.Endpoints()
	var moving []int
	for c, m := range before {
		if m != i {
			continue
		}
		for _, j := range clusterEndpoints(c, w.memberIndices()) {
			if j != i && w.etcd.MemberRunning(j) {
				listwatch.MoveOff(w.clients[c], eps[i], eps[j])
				moving = append(moving, c)
				break
			}
		}
	}
	return moving
}

// listEveryMember lists every member again, in its order, for each
// connection moveOff readied, once it has moved: it stays on the member
// it is on, which is listed.
func (w *etcdWorld) listEveryMember(moving []int) {
	for _, c := range moving {
		w.clients[c].SetEndpoints(clusterEndpoints(c, w.etcd.Endpoints())...)
	}
}

// memberIndices are 0 to the number of members - 1.
func (w *etcdWorld) memberIndices() []int {
	out := make([]int, w.etcd.Members())
	for j := range out {
		out[j] = j
	}
	return out
}

func etcdStopMember(w *etcdWorld, a scenario.Args) error {
	r := w.r
	cl, i, err := w.member("etcd-stop-member", a, true, "is stopped already")
	if err != nil {
		return err
	}
	ctx, cancel := w.clusterCtx()
	defer cancel()
	if err := w.holdLeader(ctx, cl); err != nil {
		return err
	}
	before, err := w.serving(ctx)
	if err != nil {
		return err
	}
	rev, err := r.revision()
	if err != nil {
		return err
	}
	name := w.memberName(i)
	if cl.leader == i {
		to := -1
		for j := range w.etcd.Members() {
			if j != i && w.etcd.MemberRunning(j) {
				to = j
				break
			}
		}
		if to < 0 {
			return fmt.Errorf("member %s leads and no other member runs", name)
		}
		if err := w.etcd.MoveLeader(ctx, to); err != nil {
			return err
		}
		cl.leader = to
		r.note(trace.LayerEtcd, "", fmt.Sprintf("%s leads: on its way down it hands the leadership to %s (etcd's shutdown picks the member connected to it longest; "+
			"the simulator picks the first member up, so every run has the same leader)", name, w.memberName(to)))
	}
	moving := w.moveOff(i, before)
	if err := w.etcd.StopMember(i); err != nil {
		return err
	}
	cl.stoppedAt[i] = rev
	up := 0
	for j := range w.etcd.Members() {
		if w.etcd.MemberRunning(j) {
			up++
		}
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("etcd member %s stopped at rv %d (%d of %d members up, a majority: the cluster goes on, %s leading)",
		name, rev, up, w.etcd.Members(), w.memberName(cl.leader)))
	after, err := w.serving(ctx)
	if err != nil {
		return err
	}
	w.listEveryMember(moving)
	if before[0] == i {
		r.note(trace.LayerSim, "", fmt.Sprintf("the world's connection moves from %s to %s, its next member", name, w.memberName(after[0])))
	}
	hit := false
	for _, c := range w.watchersOf() {
		hit = hit || before[c] == i
	}
	if !r.cached() {
		for k, s := range r.sides {
			if before[k+1] == i {
				// etcd's client resumes the watch on the next member from
				// the revision it had reached, as after a restart.
				s.conn.Resumed(rev)
			}
		}
	}
	if !hit {
		r.note(trace.LayerSim, "", fmt.Sprintf("%s did not serve %s: %s, untouched", name, w.watchers(), w.watchersOn(after)))
		return nil
	}
	if r.cached() {
		r.note(trace.LayerSim, "", fmt.Sprintf("%s served %s's own watch of etcd: its stream drops, and etcd's client resumes the watch on the next member that answers, "+
			"from the revision after the last one it had; the watch cache misses nothing, and the informers' watches, which the cache serves, see nothing; %s now",
			name, w.watchers(), w.watchersOn(after)))
		return nil
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("%s served the informers: their streams drop, and etcd's client resumes each watch on the next member that answers, "+
		"from the revision after the last one it had, without telling the informer; %s now", name, w.watchersOn(after)))
	return nil
}

func etcdStartMember(w *etcdWorld, a scenario.Args) error {
	r := w.r
	cl, i, err := w.member("etcd-start-member", a, false, "runs already")
	if err != nil {
		return err
	}
	ctx, cancel := w.clusterCtx()
	defer cancel()
	rev, err := r.revision()
	if err != nil {
		return err
	}
	if err := w.etcd.StartMember(ctx, i); err != nil {
		return err
	}
	// etcd lets a member serve once it has applied what the cluster had
	// committed when it came back: its revision is the cluster's.
	got, err := w.etcd.MemberRevision(ctx, i)
	if err != nil {
		return err
	}
	if got != rev {
		return fmt.Errorf("member %s rejoined at rv %d, and the cluster is at rv %d", a.Pos[0], got, rev)
	}
	if err := w.holdLeader(ctx, cl); err != nil {
		return err
	}
	s, err := w.serving(ctx)
	if err != nil {
		return err
	}
	name := w.memberName(i)
	at := cl.stoppedAt[i]
	delete(cl.stoppedAt, i)
	how := "nothing was written while it was down"
	if at < rev {
		how = fmt.Sprintf("it stopped at rv %d, and caught up from the leader's log to rv %d before it served", at, rev)
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("etcd member %s started again on its data and ports and rejoined the cluster: %s", name, how))
	r.note(trace.LayerSim, "", fmt.Sprintf("a connection moves only when its member fails: %s", w.watchersOn(s)))
	return nil
}

func etcdMoveLeader(w *etcdWorld, a scenario.Args) error {
	r := w.r
	cl, i, err := w.member("etcd-move-leader", a, true, "is stopped: it cannot lead")
	if err != nil {
		return err
	}
	ctx, cancel := w.clusterCtx()
	defer cancel()
	if err := w.holdLeader(ctx, cl); err != nil {
		return err
	}
	from := cl.leader
	if err := w.etcd.MoveLeader(ctx, i); err != nil {
		return err
	}
	cl.leader = i
	s, err := w.serving(ctx)
	if err != nil {
		return err
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("leadership moves %s -> %s (etcd's MoveLeader, as etcdctl move-leader)", w.memberName(from), w.memberName(i)))
	r.note(trace.LayerSim, "", fmt.Sprintf("no connection drops: a member serves watches whether it leads or follows; %s", w.watchersOn(s)))
	return nil
}
