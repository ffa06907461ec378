package listwatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// An embedded cluster (EmbeddedOptions.Members above 1) is several etcd
// members in this process, each with its own client and peer ports on
// loopback (chosen by the kernel) and its own data directory (m1, m2,
// ... under Dir), speaking raft to each other as the members of a real
// cluster do. Its levers: StopMember and StartMember (a member that
// comes back rejoins and catches up from the leader), MoveLeader (etcd's
// leadership transfer), and Leader to say which member leads. Restart
// restarts every member; Snapshot, Restore and Wipe, which copy one
// member's disk, refuse (ErrCluster).
//
// A cluster starts, and comes back from Restart, with its first member
// leading: when the election picks another, leadership is moved there,
// so that a cluster starts the same way every time.

// maxMembers bounds EmbeddedOptions.Members: raft clusters are small.
const maxMembers = 7

// ErrCluster is returned by a lever that works on a single-member etcd
// only (Snapshot, Restore, Wipe) when the etcd is a cluster.
var ErrCluster = errors.New("listwatch: not on an etcd cluster")

// ErrNotCluster is returned by a member lever on a single-member etcd.
var ErrNotCluster = errors.New("listwatch: a single-member etcd has no members to stop, start or lead")

// cluster says whether e runs several members.
func (e *Embedded) cluster() bool { return e.opts.Members > 1 }

// clusterConfig makes cfg, a single member's configuration, m's in the
// cluster.
func (e *Embedded) clusterConfig(cfg *embed.Config, m *member) {
	cfg.Name = m.name
	parts := make([]string, len(e.members))
	for i, o := range e.members {
		parts[i] = o.name + "=" + o.peerURL.String()
	}
	cfg.InitialCluster = strings.Join(parts, ",")
	cfg.InitialClusterToken = "cachelab"
	cfg.ClusterState = embed.ClusterStateFlagNew // ignored once a member has data
	// Several members, on a machine that may be busy: heartbeats every
	// 20ms, and an election only after 500ms without one, so that a
	// member slowed down by other work does not start elections of its
	// own (etcd's defaults are 100ms and 1s).
	cfg.TickMs, cfg.ElectionMs = 20, 500
	// The ports were reserved with SO_REUSEPORT (reservePort); etcd
	// binds them beside the reservation, which is then let go.
	cfg.SocketOpts.ReusePort = e.reusePort
}

// startCluster reserves every member's ports, starts the members and
// waits until each serves, connects the client, and leaves the first
// member leading.
func (e *Embedded) startCluster(ctx context.Context) error {
	e.reusePort = true
	var held [][]net.Listener
	defer func() {
		for _, ls := range held {
			for _, l := range ls {
				_ = l.Close()
			}
		}
	}()
	for i := range e.opts.Members {
		m := &member{name: fmt.Sprintf("m%d", i+1)}
		m.dir = filepath.Join(e.dir, m.name)
		var ls []net.Listener
		for _, u := range []struct {
			url    *url.URL
			scheme string
		}{{&m.clientURL, "https"}, {&m.peerURL, "https"}} {
			l, err := e.reservePort()
			if err != nil {
				return err
			}
			*u.url = url.URL{Scheme: u.scheme, Host: l.Addr().String()}
			if l != nil {
				ls = append(ls, l)
			}
		}
		e.members = append(e.members, m)
		held = append(held, ls)
	}
	// Every member must know every peer URL before any starts; each
	// port stays reserved until its member has bound it.
	for i, m := range e.members {
		if err := e.launch(m); err != nil {
			return err
		}
		for _, l := range held[i] {
			_ = l.Close()
		}
		held[i] = nil
	}
	return e.startMembers(ctx)
}

// reservePort binds a loopback port the kernel picks and keeps it, so
// that nothing else takes it before its member binds it too (with
// SO_REUSEPORT, as etcd is told to). Where the platform cannot share a
// port (etcd's transport says so), it lets the port go at once and etcd
// binds it a moment later, a small race that only such platforms run.
func (e *Embedded) reservePort() (net.Listener, error) {
	if e.reusePort {
		l, err := transport.NewListenerWithOpts("127.0.0.1:0", "http",
			transport.WithSocketOpts(&transport.SocketOpts{ReusePort: true}))
		if err == nil {
			go refuse(l)
			return l, nil
		}
		e.reusePort = false // the first reservation fails, or none does
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listwatch: reserve a loopback port: %w", err)
	}
	_ = l.Close()
	return closedListener{l.Addr()}, nil
}

// refuse closes every connection a reservation accepts, until the
// reservation is let go. A member that starts asks each of its peers
// whether the cluster knows it already (etcd's bootstrap: GET /members,
// with a 1 s timeout); a peer not started yet would hold the question in
// its reservation's backlog for that whole second, and the first member
// of three waits two. Closed at once, the question fails at once, as it
// would against a port nothing listens on.
func refuse(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return // let go
		}
		_ = c.Close()
	}
}

// closedListener is a port reserved and already let go: only its address
// is left.
type closedListener struct{ addr net.Addr }

func (l closedListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (l closedListener) Close() error              { return nil }
func (l closedListener) Addr() net.Addr            { return l.addr }

// startMembers waits until every member of a cluster serves, launching
// those that are stopped first; then it connects the client if there is
// none and leaves the first member leading.
func (e *Embedded) startMembers(ctx context.Context) error {
	for _, m := range e.members {
		if m.server == nil {
			if err := e.launch(m); err != nil {
				return err
			}
		}
	}
	for _, m := range e.members {
		if err := e.ready(ctx, m); err != nil {
			return err
		}
	}
	if e.client == nil {
		client, err := Connect(ctx, e.ownClientOptions())
		if err != nil {
			return fmt.Errorf("listwatch: connect to embedded etcd: %w", err)
		}
		e.client = client
	}
	return e.MoveLeader(ctx, 0)
}

// Members is how many members e has (1 unless it is a cluster).
func (e *Embedded) Members() int { return len(e.members) }

// MemberName is member i's name in etcd: m1, m2, ... in a cluster.
func (e *Embedded) MemberName(i int) string { return e.members[i].name }

// MemberRunning says whether member i runs (StopMember stopped it).
func (e *Embedded) MemberRunning(i int) bool { return e.members[i].server != nil }

// member checks i for a member lever.
func (e *Embedded) member(what string, i int) (*member, error) {
	if !e.cluster() {
		return nil, fmt.Errorf("%w (%s)", ErrNotCluster, what)
	}
	if i < 0 || i >= len(e.members) {
		return nil, fmt.Errorf("listwatch: %s: no member %d; the cluster has members 0 to %d", what, i, len(e.members)-1)
	}
	return e.members[i], nil
}

// StopMember stops member i as a crash would for its clients (their
// streams drop, etcd's client resumes its watches on another member)
// and as a shutdown does for raft: a leader hands its leadership to
// another member on its way down. The member keeps its data and ports
// for StartMember. Stopping a member that is stopped does nothing.
// Stopping so many that fewer than a majority run leaves the cluster
// without quorum: every request waits until one comes back.
func (e *Embedded) StopMember(i int) error {
	m, err := e.member("stop member", i)
	if err != nil {
		return err
	}
	m.stop()
	return nil
}

// StartMember starts member i again on its data and ports, and waits
// until it has rejoined the cluster: until it serves, which etcd allows
// once it has applied every write the cluster had committed when it
// came back. Starting a member that runs does nothing.
func (e *Embedded) StartMember(ctx context.Context, i int) error {
	m, err := e.member("start member", i)
	if err != nil {
		return err
	}
	if m.server != nil {
		return nil
	}
	return e.startMember(ctx, m)
}

// Leader waits until every running member follows the same leader, a
// running member, and returns its index. After a leader stops, that is
// once the others have elected or been handed a new one.
func (e *Embedded) Leader(ctx context.Context) (int, error) {
	if !e.cluster() {
		return 0, nil
	}
	for {
		if i, ok := e.agreedLeader(); ok {
			return i, nil
		}
		if err := tick(ctx); err != nil {
			return 0, fmt.Errorf("listwatch: the running etcd members agree on no leader: %w", err)
		}
	}
}

// agreedLeader is the leader every running member follows, if they agree
// on one that runs.
func (e *Embedded) agreedLeader() (int, bool) {
	var lead types.ID
	for _, m := range e.members {
		if m.server == nil {
			continue
		}
		l := m.server.Server.Leader()
		if l == 0 || (lead != 0 && l != lead) {
			return 0, false
		}
		lead = l
	}
	for i, m := range e.members {
		if m.server != nil && m.server.Server.MemberID() == lead {
			return i, true
		}
	}
	return 0, false
}

// MoveLeader hands leadership to member i (etcd's MoveLeader, asked of
// the leader, as `etcdctl move-leader` does) and waits until every
// running member follows it. Moving it to the leader does nothing.
func (e *Embedded) MoveLeader(ctx context.Context, i int) error {
	if !e.cluster() {
		if i == 0 {
			return nil
		}
		return fmt.Errorf("%w (move leader)", ErrNotCluster)
	}
	to, err := e.member("move leader", i)
	if err != nil {
		return err
	}
	if to.server == nil {
		return fmt.Errorf("listwatch: move leader to %s: it is stopped", to.name)
	}
	for attempt := 1; ; attempt++ {
		from, err := e.Leader(ctx)
		if err != nil {
			return err
		}
		if from == i {
			return nil
		}
		lead := e.members[from].server.Server
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = lead.MoveLeader(tctx, uint64(lead.MemberID()), uint64(to.server.Server.MemberID()))
		cancel()
		if err != nil && (ctx.Err() != nil || attempt == 5) {
			return fmt.Errorf("listwatch: move leader %s -> %s: %w", e.members[from].name, to.name, err)
		}
		// Done, or a transfer that raced an election: look again.
	}
}

// MemberServing says which member answers c's requests now: ask it
// etcd's Status on c's own gRPC connection and read the answering
// member's ID. With a client that uses its endpoints in order
// (ClientOptions.InOrder), that member serves its watches too. A member
// just stopped may still be c's for a moment; the question waits until
// c has moved on (etcd's client waits for a member that answers). So
// does an answer from a member that is not running: an exploration of
// etcd-cluster-member-rejoins-behind met one once, from a stop lever
// right after a member had rejoined, and could not go on; the answer
// is asked again, a heartbeat later, until ctx ends.
func (e *Embedded) MemberServing(ctx context.Context, c *clientv3.Client) (int, error) {
	mc := pb.NewMaintenanceClient(c.ActiveConnection())
	for {
		resp, err := mc.Status(ctx, &pb.StatusRequest{}, grpc.WaitForReady(true))
		if err == nil {
			for i, m := range e.members {
				if m.server != nil && uint64(m.server.Server.MemberID()) == resp.Header.MemberId {
					return i, nil
				}
			}
			if tick(ctx) != nil {
				return 0, fmt.Errorf("listwatch: member %x answered, and is none of this etcd's running members", resp.Header.MemberId)
			}
			continue
		}
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return 0, fmt.Errorf("listwatch: which member serves the client: %w", err)
		}
	}
}

// pin puts c's connection on the endpoint first, where member answered
// (checkEndpoint asked it), and then lists rest behind it. An InOrder
// connection (gRPC's pick_first) tries the next endpoint beside the one
// it is dialing once that dial has taken 250 ms (Happy Eyeballs), and
// keeps whichever answers first: on a busy machine it could land past
// the endpoint it was meant to use. Listed alone,
// first is the only choice; the connection stays on it when the others
// are listed again, as pick_first keeps a ready connection whose
// endpoint is still listed.
func pin(ctx context.Context, c *clientv3.Client, member uint64, first string, rest ...string) error {
	c.SetEndpoints(first)
	// The balancer takes the new list in its own time: until it has, the
	// connection may still answer from where it was.
	mc := pb.NewMaintenanceClient(c.ActiveConnection())
	for {
		resp, err := mc.Status(ctx, &pb.StatusRequest{}, grpc.WaitForReady(true))
		if err == nil && resp.Header.MemberId == member {
			break
		}
		if err != nil && (status.Code(err) != codes.Unavailable || ctx.Err() != nil) {
			return fmt.Errorf("listwatch: connect to %s: %w", first, err)
		}
		if err := tick(ctx); err != nil {
			return fmt.Errorf("listwatch: connect to %s: %w", first, err)
		}
	}
	c.SetEndpoints(append([]string{first}, rest...)...)
	return nil
}

// MoveOff readies c, served by the endpoint from, for from's member to
// stop: it lists only from and to, so that c moves to to. A connection
// whose endpoint fails begins again from the first one it lists, and
// once a dial has taken 250 ms it dials the next beside it (Happy
// Eyeballs): with every member listed, on a busy machine, it could land
// past to. Once c has moved, list every endpoint again (SetEndpoints):
// it stays on to, as a listed endpoint.
func MoveOff(c *clientv3.Client, from, to string) { c.SetEndpoints(from, to) }

// MemberRevision is the revision member i has applied, as it says
// itself: a member that rejoined shows it has caught up.
func (e *Embedded) MemberRevision(ctx context.Context, i int) (int64, error) {
	m, err := e.member("member revision", i)
	if err != nil {
		return 0, err
	}
	if m.server == nil {
		return 0, fmt.Errorf("listwatch: member %s is stopped", m.name)
	}
	return m.server.Server.KV().Rev(), nil
}

// tick waits a raft heartbeat, or until ctx ends: what a wait for the
// cluster to agree polls at.
func tick(ctx context.Context) error {
	t := time.NewTimer(5 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
