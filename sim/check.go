package sim

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/scenario"
)

// What a run's options cannot carry out. scenario.Parse checks a file on
// its own, for the world its "# Server:" line names and the etcd its
// etcd-cluster asks for. A run may be given others (--server, --etcd-members,
// --etcd-endpoints), and some steps cannot run there: a watch-cache lever
// without the watch cache, a lever that stops or copies etcd on an etcd
// the run does not own, a member lever on one member. Found at its step,
// such a step ends the run halfway, after seconds or minutes and after
// earlier writes; Check finds it before anything starts, and Open calls
// it first.
//
// One lever could run on an external etcd and must not unasked: compact.
// etcd's compaction is global, not per key prefix: it discards every
// key's history before the revision, another application's too, though
// the run otherwise keeps to its own prefix. It runs there only when the
// user says so (Options.CompactExternalEtcd,
// --allow-compacting-external-etcd).

// RefusedError is a step the run's options cannot carry out, found
// before the run starts: Step is its number (1-based) in the scenario,
// File:Line where it is, Msg why.
type RefusedError struct {
	File string
	Line int
	Step int
	Msg  string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// embeddedLevers are the levers only an etcd the run started itself can
// pull, with what each does to it.
var embeddedLevers = map[string]string{
	"restart-etcd":      "it stops and starts etcd",
	"etcd-snapshot":     "it copies etcd's data directory",
	"etcd-restore":      "it puts a copy of etcd's data directory back",
	"etcd-wipe":         "it removes etcd's data directory",
	"etcd-cluster":      "it starts an etcd cluster of its own",
	"etcd-stop-member":  "it stops a member of the cluster",
	"etcd-start-member": "it starts a member of the cluster",
	"etcd-move-leader":  "it moves the cluster's leadership",
}

// Check says why sc cannot run with opts, or nil: a *RefusedError for
// the first step that the run's world (Options.Server), its etcd
// (Options.Etcd, an external one) or its etcd's size
// (Options.EtcdMembers) cannot carry out; a *NotLinkedError if the run
// needs what this build leaves out (NeedsFull).
func Check(sc *scenario.Scenario, opts Options) error {
	if err := checkLinked(sc, opts); err != nil {
		return err
	}
	if opts.Replay != nil {
		return checkReplay(sc, opts)
	}
	if opts.Cluster != nil {
		if opts.Wire || opts.Server != "" || len(opts.Etcd.Endpoints) > 0 || opts.EtcdMembers > 0 {
			return fmt.Errorf("a run on a cluster (--kubeconfig) has no etcd or kube-apiserver of its own: " +
				"--server, --etcd-endpoints and --etcd-members do not go with it")
		}
		if opts.Plant != "" {
			if _, err := LookupPlant(opts.Plant); err != nil {
				return err
			}
		}
		return CheckCluster(sc)
	}
	server := opts.Server
	if server == "" {
		server = sc.WrittenFor()
	}
	if opts.Wire && server != scenario.ServerWatchCache {
		return fmt.Errorf("over the wire (--server apiserver) the informers reach kube-apiserver's watch cache over HTTPS; this run's world is %s", describeServer(server, false))
	}
	if opts.Plant != "" {
		if _, err := LookupPlant(opts.Plant); err != nil {
			return err
		}
	}
	external := len(opts.Etcd.Endpoints) > 0
	if external && opts.EtcdMembers > 1 {
		return fmt.Errorf("an etcd cluster of %d members needs the embedded etcd; this run uses an external one", opts.EtcdMembers)
	}
	members := scenario.NewMembersCheck(sc, opts.EtcdMembers)
	for i, st := range sc.Steps {
		a, _ := scenario.ParseArgs(st) // Parse checked them
		err := serverAllows(st.Cmd, server, opts.Wire)
		if err == nil {
			err = scenario.InformedAdvance(st.Text, st.Moves, st.Informed, server)
		}
		switch {
		case err != nil:
		case external:
			err = externalAllows(st.Cmd, opts.CompactExternalEtcd)
		case members != nil:
			err = members.Step(st, a)
		}
		if err != nil {
			return &RefusedError{File: sc.File, Line: st.Line, Step: i + 1, Msg: err.Error()}
		}
	}
	return nil
}

// externalAllows says why cmd cannot run on an etcd the run does not own.
func externalAllows(cmd string, compact bool) error {
	if what, ok := embeddedLevers[cmd]; ok {
		return fmt.Errorf("%s needs the embedded etcd (%s); this run uses an external one (--etcd-endpoints)", cmd, what)
	}
	if cmd == "compact" && !compact {
		return fmt.Errorf("compact compacts the whole etcd, not only this run's keys: on an external etcd (--etcd-endpoints) " +
			"every application's history before that revision would be gone; --allow-compacting-external-etcd lets it")
	}
	return nil
}
