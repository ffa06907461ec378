package sim

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// Parse follows a cluster's members: a file is refused where a member
// lever could not run (no cluster, a member that does not exist or is in
// the wrong state, a stop that would lose quorum), and where a lever
// for a single member is pulled on a cluster.
func TestClusterLeversParse(t *testing.T) {
	const c = "# s\n\netcd-cluster\n----\n\n"
	refused := []struct{ name, src, want string }{
		{"not first", "# s\n\ncreate ns0/a\n----\n\netcd-cluster\n----\n", "x.txt:6: etcd-cluster decides the etcd the run starts on, so it must be the scenario's first command"},
		{"no cluster", "# s\n\netcd-stop-member m1\n----\n", "x.txt:3: etcd-stop-member needs an etcd cluster: start the scenario with etcd-cluster"},
		{"bad size", "# s\n\netcd-cluster members=4\n----\n", "x.txt:3: members=4: want 3 or 5"},
		{"bad name", c + "etcd-stop-member node1\n----\n", "x.txt:6: etcd-stop-member node1: want a member's name, m1, m2, ..."},
		{"no such member", c + "etcd-stop-member m4\n----\n", "x.txt:6: etcd-stop-member m4: the cluster has m1 to m3"},
		{"stopped twice", c + "etcd-stop-member m2\n----\n\netcd-stop-member m2\n----\n", "x.txt:9: etcd-stop-member m2: m2 is stopped already"},
		{"quorum", c + "etcd-stop-member m2\n----\n\netcd-stop-member m3\n----\n",
			"x.txt:9: etcd-stop-member m3 would leave 1 of 3 members up, not a majority"},
		{"start running", c + "etcd-start-member m1\n----\n", "x.txt:6: etcd-start-member m1: m1 runs already"},
		{"lead stopped", c + "etcd-stop-member m3\n----\n\netcd-move-leader m3\n----\n", "x.txt:9: etcd-move-leader m3: m3 is stopped and cannot lead"},
		{"lead leader", c + "etcd-move-leader m1\n----\n", "x.txt:6: etcd-move-leader m1: m1 leads already"},
		{"leader moved on stop", c + "etcd-stop-member m1\n----\n\netcd-move-leader m2\n----\n", "x.txt:9: etcd-move-leader m2: m2 leads already"},
		{"snapshot", c + "etcd-snapshot s1\n----\n", "x.txt:6: etcd-snapshot works on a single-member etcd, and this scenario runs on a cluster"},
		{"wipe", c + "etcd-wipe\n----\n", "x.txt:6: etcd-wipe works on a single-member etcd"},
		{"restart", c + "restart-etcd\n----\n", "x.txt:6: restart-etcd works on a single-member etcd"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("x.txt", []byte(tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v, want %q...", err, tc.want)
			}
		})
	}
	accepted := "# s\n\netcd-cluster members=5\n----\n\netcd-stop-member m1\n----\n\netcd-stop-member m5\n----\n\n" +
		"etcd-move-leader m3\n----\n\netcd-start-member m1\n----\n\netcd-stop-member m2\n----\n"
	sc, err := scenario.Parse("x.txt", []byte(accepted))
	if err != nil {
		t.Fatalf("5 members, 2 down at most: %v", err)
	}
	if sc.Members() != 5 {
		t.Errorf("Members() = %d, want 5", sc.Members())
	}
	if sc, _ := scenario.Parse("x.txt", []byte("# s\n\ncreate ns0/a\n----\n")); sc.Members() != 1 {
		t.Errorf("a scenario without etcd-cluster: Members() = %d, want 1", sc.Members())
	}
}

// Each connection lists every member, in its own order: the world's from
// m1, the informers' from m2.
func TestClusterEndpoints(t *testing.T) {
	eps := []string{"a", "b", "c"}
	for i, want := range []string{"a,b,c", "b,c,a", "b,c,a"} {
		if got := strings.Join(clusterEndpoints(i, eps), ","); got != want {
			t.Errorf("connection %d: %s, want %s", i, got, want)
		}
	}
	if strings.Join(eps, ",") != "a,b,c" {
		t.Errorf("clusterEndpoints changed its argument: %v", eps)
	}
}
