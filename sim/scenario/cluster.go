package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// An etcd cluster as a scenario says it: etcd-cluster, its first command,
// asks for 3 or 5 members (m1, m2, ...), and the member levers stop one,
// start it again, or move the leadership. Parse's dry run follows them (clusterStep)
// so a file never stops a member twice, loses quorum, or names a member
// the cluster does not have; the runner (package sim, clusterlevers.go)
// pulls them on a real embedded cluster.

// The cluster sizes etcd-cluster takes: odd, so a majority is clear.
var clusterSizes = []int{3, 5}

var memberPattern = regexp.MustCompile(`^m[1-9]$`)

// checkMemberName checks a member lever's argument on its own.
func checkMemberName(cmd, p string) error {
	if !memberPattern.MatchString(p) {
		return fmt.Errorf("%s %s: want a member's name, m1, m2, ...", cmd, p)
	}
	return nil
}

// checkMembers checks etcd-cluster's members=.
func checkMembers(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || !slices.Contains(clusterSizes, n) {
		return fmt.Errorf("members=%s: want 3 or 5", v)
	}
	return nil
}

// membersOf is the size etcd-cluster asks for: 3 unless members= says.
func membersOf(a Args) int {
	if v, ok := a.Value("members"); ok {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 3
}

// Members is the size of the etcd the scenario asks for: its
// etcd-cluster's, else 1.
func (sc *Scenario) Members() int {
	for _, st := range sc.Steps {
		if st.Cmd == "etcd-cluster" {
			if v, ok := st.Value("members"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
			return 3
		}
	}
	return 1
}

// clusterModel is Parse's model of the cluster: which members run, and
// which leads.
type clusterModel struct {
	members int
	running []bool
	leader  int
}

// clusterStep checks a cluster command against the steps before it.
func (p *dryRun) clusterStep(st Step, a Args) error {
	if st.Cmd == "etcd-cluster" {
		if st.Line != p.firstLine {
			return fmt.Errorf("etcd-cluster decides the etcd the run starts on, so it must be the scenario's first command")
		}
		n := membersOf(a)
		p.cluster = &clusterModel{members: n, running: slices.Repeat([]bool{true}, n)}
		return nil
	}
	cl := p.cluster
	if cl == nil {
		return fmt.Errorf("%s needs an etcd cluster: start the scenario with etcd-cluster", st.Cmd)
	}
	i, _ := strconv.Atoi(strings.TrimPrefix(a.Pos[0], "m"))
	i--
	if i >= cl.members {
		return fmt.Errorf("%s %s: the cluster has m1 to m%d", st.Cmd, a.Pos[0], cl.members)
	}
	up := 0
	for _, r := range cl.running {
		if r {
			up++
		}
	}
	switch st.Cmd {
	case "etcd-stop-member":
		if !cl.running[i] {
			return fmt.Errorf("etcd-stop-member %s: %s is stopped already", a.Pos[0], a.Pos[0])
		}
		if up-1 <= cl.members/2 {
			return fmt.Errorf("etcd-stop-member %s would leave %d of %d members up, not a majority: the cluster would lose quorum "+
				"and every request wait; start a member first", a.Pos[0], up-1, cl.members)
		}
		cl.running[i] = false
		if cl.leader == i {
			cl.leader = slices.Index(cl.running, true)
		}
	case "etcd-start-member":
		if cl.running[i] {
			return fmt.Errorf("etcd-start-member %s: %s runs already", a.Pos[0], a.Pos[0])
		}
		cl.running[i] = true
	case "etcd-move-leader":
		if !cl.running[i] {
			return fmt.Errorf("etcd-move-leader %s: %s is stopped and cannot lead", a.Pos[0], a.Pos[0])
		}
		if cl.leader == i {
			return fmt.Errorf("etcd-move-leader %s: %s leads already", a.Pos[0], a.Pos[0])
		}
		cl.leader = i
	}
	return nil
}

// singleMember refuses, in a cluster scenario, a lever that works on one
// member's etcd.
func (p *dryRun) singleMember(cmd string) error {
	if p.cluster == nil {
		return nil
	}
	return fmt.Errorf("%s works on a single-member etcd, and this scenario runs on a cluster (etcd-cluster): %s", cmd, singleMemberWhy(cmd))
}

// singleMemberWhy says why cmd, a single-member etcd's lever, cannot run
// on a cluster.
func singleMemberWhy(cmd string) string {
	if cmd == "restart-etcd" {
		return "each connection would come back on whichever member answered first, which differs from run to run; stop and start members instead"
	}
	return "it copies one member's data, which would disagree with the other members' raft logs"
}

// MembersCheck follows a scenario's etcd levers on an embedded etcd of
// another size than the one it asks for (the runner's --etcd-members):
// Parse checked them against the scenario's own. sim's Check runs it
// before a run starts.
type MembersCheck struct {
	n int
	p *dryRun // its cluster, when n > 1
}

// NewMembersCheck is the check for a run on n members, or nil when the
// run's etcd is the one the scenario asks for (n is 0 or sc.Members()).
func NewMembersCheck(sc *Scenario, n int) *MembersCheck {
	if n == 0 || n == sc.Members() {
		return nil
	}
	c := &MembersCheck{n: n, p: newDryRun()}
	if n > 1 {
		c.p.cluster = &clusterModel{members: n, running: slices.Repeat([]bool{true}, n)}
	}
	return c
}

// Step says why st cannot run on the check's n members, or nil; a is its
// arguments (ParseArgs). Steps are given in order: the check follows
// which members run.
func (c *MembersCheck) Step(st Step, a Args) error {
	switch st.Cmd {
	case "etcd-cluster", "etcd-stop-member", "etcd-start-member", "etcd-move-leader":
		if c.n == 1 {
			return fmt.Errorf("%s needs an etcd cluster, and --etcd-members 1 runs this scenario on one member", st.Cmd)
		}
		if st.Cmd == "etcd-cluster" {
			return nil // the cluster is --etcd-members', not its members=
		}
		if err := c.p.clusterStep(st, a); err != nil {
			return fmt.Errorf("%w (--etcd-members %d)", err, c.n)
		}
	case "restart-etcd", "etcd-snapshot", "etcd-restore", "etcd-wipe":
		if c.n > 1 {
			return fmt.Errorf("%s works on a single-member etcd, and --etcd-members %d runs this scenario on a cluster: %s",
				st.Cmd, c.n, singleMemberWhy(st.Cmd))
		}
	}
	return nil
}
