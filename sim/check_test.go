package sim

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
)

// What a run's options cannot carry out is refused before anything
// starts, with the step's file:line: Open calls Check first. Each case
// below used to start etcd and run steps, and fail only at the step (or,
// for compact on an external etcd, succeed and destroy history the run
// did not own). Issue 27, cases 6 and 10.
func TestCheckRefusesUpFront(t *testing.T) {
	const external = "http://127.0.0.1:1" // never dialed: Check comes first
	for _, tc := range []struct {
		name, src string
		opts      Options
		want      string // the error, after the file:line
	}{
		{
			name: "a watch-cache lever with --server etcd",
			src:  "# t\n\ncreate ns0/a\n----\n\nhold-cache\n----\n",
			opts: Options{Server: scenario.ServerEtcd},
			want: `inline.txt:6: hold-cache needs kube-apiserver's watch cache; this run's server is --server etcd (kube-apiserver's storage with its watch cache off): run it with --server watchcache or --server apiserver`,
		},
		{
			name: "an etcd-world lever with --server watchcache",
			src:  "# t\n\nput-raw ns0/x bytes\n----\n",
			opts: Options{Server: scenario.ServerWatchCache},
			want: `inline.txt:3: put-raw is a lever of the etcd world (kube-apiserver with its watch cache off); this run's server is --server watchcache (kube-apiserver's watch cache, in process): run it with --server etcd`,
		},
		{
			name: "an etcd-world lever over the wire",
			src:  "# t\n# Server: etcd\n\nput-raw ns0/x bytes\n----\n",
			opts: Options{Server: scenario.ServerWatchCache, Wire: true},
			want: `inline.txt:4: put-raw is a lever of the etcd world (kube-apiserver with its watch cache off); this run's server is --server apiserver (kube-apiserver over HTTPS, with its watch cache): run it with --server etcd`,
		},
		{
			// Issue 47, case 5: the etcd world's scenario moves its
			// informers' clock on by a year, cheap there; behind the
			// watch cache it is a re-watch every 5 to 10 minutes.
			name: "a long advance behind the watch cache",
			src:  "# t\n# Server: etcd\n\nstart\n----\n\nadvance 8760h\n----\n",
			opts: Options{Server: scenario.ServerWatchCache},
			want: "inline.txt:7: advance 8760h: behind the watch cache, with informers running, one advance moves at most a day (24h): " +
				"each watch ends every 5 to 10 minutes of scenario time and both informers open it again, so a day is about 300 " +
				"re-watches the run settles, and this would be about 105120; advance a day at a time, or stop the informers first",
		},
		{
			name: "restart-etcd on an external etcd",
			src:  "# t\n\ncreate ns0/a\n----\n\nrestart-etcd\n----\n",
			opts: Options{Etcd: listwatch.ClientOptions{Endpoints: []string{external}}},
			want: "inline.txt:6: restart-etcd needs the embedded etcd (it stops and starts etcd); this run uses an external one (--etcd-endpoints)",
		},
		{
			name: "a snapshot on an external etcd",
			src:  "# t\n\netcd-snapshot s1\n----\n",
			opts: Options{Etcd: listwatch.ClientOptions{Endpoints: []string{external}}},
			want: "inline.txt:3: etcd-snapshot needs the embedded etcd (it copies etcd's data directory); this run uses an external one (--etcd-endpoints)",
		},
		{
			name: "a cluster on an external etcd",
			src:  "# t\n\netcd-cluster\n----\n\netcd-stop-member m2\n----\n",
			opts: Options{Etcd: listwatch.ClientOptions{Endpoints: []string{external}}},
			want: "inline.txt:3: etcd-cluster needs the embedded etcd (it starts an etcd cluster of its own); this run uses an external one (--etcd-endpoints)",
		},
		{
			name: "compact on an external etcd",
			src:  "# t\n\ncreate ns0/a\n----\n\ncompact\n----\n",
			opts: Options{Etcd: listwatch.ClientOptions{Endpoints: []string{external}}},
			want: "inline.txt:6: compact compacts the whole etcd, not only this run's keys: on an external etcd (--etcd-endpoints) " +
				"every application's history before that revision would be gone; --allow-compacting-external-etcd lets it",
		},
		{
			name: "a cluster scenario on one member",
			src:  "# t\n\netcd-cluster\n----\n\netcd-stop-member m2\n----\n",
			opts: Options{EtcdMembers: 1},
			want: "inline.txt:3: etcd-cluster needs an etcd cluster, and --etcd-members 1 runs this scenario on one member",
		},
		{
			name: "restart-etcd on a cluster",
			src:  "# t\n\nrestart-etcd\n----\n",
			opts: Options{EtcdMembers: 3},
			want: "inline.txt:3: restart-etcd works on a single-member etcd, and --etcd-members 3 runs this scenario on a cluster: " +
				"each connection would come back on whichever member answered first, which differs from run to run; stop and start members instead",
		},
		{
			name: "a member a smaller cluster does not have",
			src:  "# t\n\netcd-cluster members=5\n----\n\netcd-stop-member m5\n----\n",
			opts: Options{EtcdMembers: 3},
			want: "inline.txt:6: etcd-stop-member m5: the cluster has m1 to m3 (--etcd-members 3)",
		},
		{
			name: "a stop a smaller cluster has no majority for",
			src:  "# t\n\netcd-cluster members=5\n----\n\netcd-stop-member m2\n----\n\netcd-stop-member m3\n----\n",
			opts: Options{EtcdMembers: 3},
			want: "inline.txt:9: etcd-stop-member m3 would leave 1 of 3 members up, not a majority: the cluster would lose quorum " +
				"and every request wait; start a member first (--etcd-members 3)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := mustParse(t, tc.src)
			err := Check(sc, tc.opts)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Check: got  %v\nwant %s", err, tc.want)
			}
			var re *RefusedError
			if !errors.As(err, &re) || re.Line == 0 || re.Step < 1 || sc.Steps[re.Step-1].Line != re.Line {
				t.Errorf("Check's error %#v does not name its step", err)
			}
			// Open's context has ended already: whatever Open started
			// before Check (an etcd, a connection) would fail on it, with
			// an error that is not Check's refusal. How long Open took
			// was the check once, which made the verdict the machine's
			// load.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			ses, err := Open(ctx, sc, tc.opts)
			if err == nil {
				ses.Close()
				t.Fatal("Open ran what Check refuses")
			}
			if !errors.As(err, &re) {
				t.Errorf("Open: %v, want Check's refusal: it started something first", err)
			}
		})
	}
}

// What the options allow is not refused: the same levers on the
// embedded etcd, and compact on an external etcd when the user says so.
func TestCheckAllows(t *testing.T) {
	external := listwatch.ClientOptions{Endpoints: []string{"http://127.0.0.1:1"}}
	for _, tc := range []struct {
		src  string
		opts Options
	}{
		{"# t\n\nrestart-etcd\n----\n", Options{}},
		{"# t\n\ncompact\n----\n", Options{Etcd: external, CompactExternalEtcd: true}},
		{"# t\n\netcd-cluster members=5\n----\n\netcd-stop-member m3\n----\n", Options{EtcdMembers: 3}},
		{"# t\n\netcd-cluster\n----\n", Options{EtcdMembers: 5}},
		{"# t\n\nhold-cache\n----\n", Options{Server: scenario.ServerWatchCache}},
	} {
		if err := Check(mustParse(t, tc.src), tc.opts); err != nil {
			t.Errorf("%q with %+v: %v", tc.src, tc.opts, err)
		}
	}
}

// A run on someone else's etcd keeps to its own keys: compaction, which
// is global in etcd, is refused there unless the user allows it, so
// another application's history survives the run (issue 27, case 6).
// Allowed, it does what the flag says.
func TestExternalEtcdKeepsOthersHistory(t *testing.T) {
	quietKlog() // before this test's etcd clients log through klog
	ctx := testdeadline.Context(t)
	server, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	etcd := server.ClientOptions()
	c, err := listwatch.Connect(ctx, etcd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Another application's key, written twice: its first version is
	// history a compaction would discard.
	first, err := c.Put(ctx, "/other-app/config", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "/other-app/config", "v2"); err != nil {
		t.Fatal(err)
	}
	readOld := func() error {
		_, err := c.Get(ctx, "/other-app/config", clientv3.WithRev(first.Header.Revision))
		return err
	}

	sc, err := Load("relist-after-compaction")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, sc, Options{Seed: 1, Etcd: etcd}); err == nil || !strings.Contains(err.Error(), "--allow-compacting-external-etcd") {
		t.Fatalf("a compacting scenario on an external etcd: got %v, want it refused", err)
	}
	if err := readOld(); err != nil {
		t.Fatalf("the other application's history is gone after a refused run: %v", err)
	}

	res, err := Run(ctx, sc, Options{Seed: 1, Etcd: etcd, CompactExternalEtcd: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	if err := readOld(); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("allowed to compact, the run left the old revision readable (%v): the flag does not do what it says", err)
	}
}

// A plant that names no known bug is refused before anything runs, with
// the names of those there are; each known one names itself.
func TestUnknownPlantIsRefused(t *testing.T) {
	sc := mustParse(t, "# t\n\nstart\n----\n")
	err := Check(sc, Options{Plant: "no-such-bug"})
	if err == nil || err.Error() != `unknown planted bug "no-such-bug"; the plants are: drop-relist-tombstones, rewatch-one-back, tombstones-last` {
		t.Errorf("Check: %v", err)
	}
	if _, err := Open(context.Background(), sc, Options{Plant: "no-such-bug"}); err == nil {
		t.Error("Open ran with an unknown plant")
	}
	for _, p := range Plants {
		if got, err := LookupPlant(p.Name); err != nil || got.Name != p.Name || (got.handler == nil) == (got.watch == nil) {
			t.Errorf("plant %s: %+v, %v; want it found, with one of handler and watch", p.Name, got, err)
		}
	}
}
