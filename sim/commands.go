package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cockroachdb/datadriven"
)

// command is one scenario command: its arguments, what it does, and a line
// of help for `cachelab scenarios --commands` and for errors.
type command struct {
	usage  string
	help   string
	minPos int // positional arguments (object keys, names, durations)
	maxPos int
	values map[string]string // key=value arguments and what each takes
	flags  map[string]string // bare-word flags and what each means
	run    func(r *runner, a args) error
}

// args are a step's parsed arguments.
type args struct {
	pos    []string
	values map[string][]string
	flags  map[string]bool
}

func (a args) value(k string) (string, bool) {
	v, ok := a.values[k]
	if !ok {
		return "", false
	}
	return strings.Join(v, ","), true
}

var commands map[string]*command

func init() {
	commands = map[string]*command{
		// The world.
		"create": {usage: "create <ns/name>... [labels=(k=v,...)] [managed]", help: "create objects in etcd",
			minPos: 1, maxPos: 100, values: map[string]string{"labels": "labels, as (k=v,k2=v2)"},
			flags: map[string]string{"managed": "give the object a managedFields entry, as server-side apply would"},
			run: func(r *runner, a args) error {
				for _, k := range a.pos {
					if err := r.create(k, labelsArg(a), a.flags["managed"]); err != nil {
						return err
					}
				}
				return nil
			}},
		"update": {usage: "update <ns/name> [labels=(k=v,...)] [image=<image>] [times=<n>]",
			help:   "update an object in etcd (labels replace the old ones); times=n makes n updates in a row, each setting the label update=<count>",
			minPos: 1, maxPos: 1, values: map[string]string{"labels": "the new labels, as (k=v,...), or () for none", "image": "a new spec.image",
				"times": fmt.Sprintf("how many updates in a row (1-%d); each also sets the label update=<count>, so each is a change with its own resourceVersion", maxTimes)},
			run: func(r *runner, a args) error {
				img, _ := a.value("image")
				var labels map[string]string
				if _, ok := a.values["labels"]; ok {
					labels = labelsArg(a)
					if labels == nil {
						labels = map[string]string{}
					}
				}
				if v, ok := a.value("times"); ok {
					n, _ := strconv.Atoi(v)
					return r.updateTimes(a.pos[0], labels, img, n)
				}
				return r.update(a.pos[0], labels, img)
			}},
		"put-raw": {usage: "put-raw <ns/name> <text>", help: "store text as it is under the object's etcd key, as a tool writing to etcd directly would: a value kube-apiserver cannot decode",
			minPos: 2, maxPos: 2, run: cmdPutRaw},
		"delete-raw": {usage: "delete-raw <ns/name>", help: "remove the value put-raw stored (kube-apiserver cannot delete what it cannot decode without its unsafe option)",
			minPos: 1, maxPos: 1, run: cmdDeleteRaw},
		"delete": {usage: "delete <ns/name>...", help: "delete objects from etcd", minPos: 1, maxPos: 100,
			run: func(r *runner, a args) error {
				for _, k := range a.pos {
					if err := r.delete(k); err != nil {
						return err
					}
				}
				return nil
			}},
		"bulk-create": {usage: "bulk-create n=<count> [ns=<namespace>] [labels=(k=v,...)]", help: "create n objects ns/obj-0001..., numbered to the width of n",
			values: map[string]string{"n": "how many (1-100000)", "ns": "their namespace (default bulk)", "labels": "their labels"},
			run: func(r *runner, a args) error {
				ns, ok := a.value("ns")
				if !ok {
					ns = "bulk"
				}
				nStr, _ := a.value("n")
				n, _ := strconv.Atoi(nStr)
				for i := 1; i <= n; i++ {
					u, err := r.newPod(bulkName(ns, i, n))
					if err != nil {
						return err
					}
					u.SetLabels(labelsArg(a))
					out, err := r.writer.Create(r.ctx, u)
					if err != nil {
						return err
					}
					r.wrote(nil, out)
				}
				r.etcdChanged()
				rev, err := r.revision()
				if err != nil {
					return err
				}
				r.note(trace.LayerEtcd, "", fmt.Sprintf("created %d %s %s..%s (etcd at rv %d)", n, plural(n, "object", "objects"), bulkName(ns, 1, n), bulkName(ns, n, n), rev))
				return nil
			}},
		"compact":         {usage: "compact", help: "compact etcd at its current revision: older resourceVersions are gone (410)", run: func(r *runner, a args) error { return r.compact() }},
		"progress":        {usage: "progress", help: "ask etcd for a progress notification: each watch that allows bookmarks gets a BOOKMARK", run: cmdProgress},
		"close-watch":     cmdCloseWatch,
		"disconnect":      cmdDisconnect,
		"reconnect":       cmdReconnect,
		"fail-next":       cmdFailNext,
		"expire-continue": cmdExpireContinue,
		"server":          cmdServer,
		"restart-etcd": {usage: "restart-etcd", help: "stop etcd and start it again on the same data and ports (embedded etcd only)",
			run: func(r *runner, a args) error {
				if r.etcd == nil {
					return fmt.Errorf("it needs the embedded etcd; this run uses an external one (--etcd-endpoints)")
				}
				rev, err := r.revision()
				if err != nil {
					return err
				}
				if err := r.etcd.Restart(r.ctx); err != nil {
					return err
				}
				for _, s := range r.sides {
					s.conn.Resumed(rev)
				}
				r.note(trace.LayerEtcd, "", "etcd restarted (same data, same ports)")
				return nil
			}},
		"etcd-snapshot": cmdEtcdSnapshot,
		"etcd-restore":  cmdEtcdRestore,
		"etcd-wipe":     cmdEtcdWipe,
		// An etcd cluster (clusterlevers.go).
		"etcd-cluster":      cmdEtcdCluster,
		"etcd-stop-member":  cmdEtcdStopMember,
		"etcd-start-member": cmdEtcdStartMember,
		"etcd-move-leader":  cmdEtcdMoveLeader,
		// The watch cache (cachelevers.go).
		"hold-cache":        cmdHoldCache,
		"release-cache":     cmdReleaseCache,
		"restart-apiserver": cmdRestartAPIServer,
		"add-apiserver":     cmdAddAPIServer,
		"use-apiserver":     cmdUseAPIServer,
		"advance": {usage: "advance <duration>", help: "move the fake clock forward (resync periods, watch durations, re-watch backoff)",
			minPos: 1, maxPos: 1, run: func(r *runner, a args) error {
				d, _ := time.ParseDuration(a.pos[0])
				return r.advance(d)
			}},
		"resync": {usage: "resync", help: "advance the fake clock by the informer's resync period, so a resync is due",
			run: func(r *runner, a args) error {
				if r.cfg == nil || r.cfg.resync <= 0 {
					return fmt.Errorf("resync needs an informer started with resync=<period>")
				}
				return r.advance(r.cfg.resync)
			}},
		// The informers.
		"start": {usage: "start [stack=default|classic] [resync=<period>] [namespace=<ns>] [labels=<selector>] [fields=<selector>] [transform=strip-managed-fields]",
			help: "start both informers (cachelab's and client-go's) with the handlers added so far",
			values: map[string]string{"stack": "default (RealFIFO, watch-list) or classic (DeltaFIFO, LIST+WATCH)", "resync": "the default resync period",
				"namespace": "watch one namespace only (its requests go to the namespace's path)",
				"labels":    "a label selector, as (app=web) or (app in (a,b))", "fields": "a field selector (metadata.name, metadata.namespace)", "transform": "strip-managed-fields"},
			run: func(r *runner, a args) error { return cmdStart(r, a, false) }},
		"start-queue": {usage: "start-queue [stack=default|classic] [resync=<period>] [namespace=<ns>] [labels=<selector>] [fields=<selector>]",
			help: "start a reflector filling the stack's bare queue (RealFIFO or DeltaFIFO) on each side; the simulator pops it after each step",
			values: map[string]string{"stack": "default (RealFIFO) or classic (DeltaFIFO)", "resync": "the resync period",
				"namespace": "watch one namespace only", "labels": "a label selector", "fields": "a field selector"},
			run: func(r *runner, a args) error { return cmdStart(r, a, true) }},
		"pause": {usage: "pause", help: "stop popping the queue (start-queue only): deltas pile up as the queue stores them",
			run: func(r *runner, a args) error { return r.setPaused(true) }},
		"resume": {usage: "resume", help: "pop everything queued, and keep popping after each step (start-queue only)",
			run: func(r *runner, a args) error { return r.setPaused(false) }},
		"stop": {usage: "stop", help: "stop both informers; they keep what they hold, refuse new handlers, and a later start builds fresh ones",
			run: cmdStop},
		"add-handler": {usage: "add-handler <name> [resync=<period>] [slow] [informer=<factory>]", help: "register an event handler on both informers (before or after start)",
			minPos: 1, maxPos: 1, values: map[string]string{"resync": "this handler's resync period",
				"informer": "the factory whose informer it goes on (informer <factory> made it); without it, start's"},
			flags: map[string]string{"slow": "its calls wait until `release <name>`"},
			run:   cmdAddHandler},
		"remove-handler": {usage: "remove-handler <name>", help: "unregister a handler", minPos: 1, maxPos: 1,
			run: func(r *runner, a args) error {
				sides := r.handlerSides(a.pos[0])
				if sides == nil {
					return fmt.Errorf("no handler %q", a.pos[0])
				}
				for _, s := range sides {
					h := s.handlerNamed(a.pos[0])
					if s.inf != nil {
						// What the removal drops can be counted on
						// cachelab's side only: client-go's listener
						// buffer cannot be seen from outside.
						if b, ok := s.inf.backlog(); ok {
							s.rec.Add(trace.LayerQueue, trace.KindQueue, "", fmt.Sprintf("%s: %d buffered %s dropped (cachelab's count)",
								h.name, b.Buffered[h.name], plural(b.Buffered[h.name], "notification", "notifications")))
						}
						if err := s.inf.removeHandler(h); err != nil {
							return err
						}
					}
					h.removed = true
					h.release()
				}
				r.note(trace.LayerSim, "", fmt.Sprintf("handler %s removed: it gets no further calls (RemoveEventHandler returns at once; a call in progress finishes)", a.pos[0]))
				return nil
			}},
		"release": {usage: "release <name>", help: "let a slow handler's calls through; it is not slow any more", minPos: 1, maxPos: 1,
			run: func(r *runner, a args) error {
				sides := r.handlerSides(a.pos[0])
				if sides == nil {
					return fmt.Errorf("no handler %q", a.pos[0])
				}
				for _, s := range sides {
					s.handlerNamed(a.pos[0]).release()
				}
				return nil
			}},
		// Looking.
		// show's argument is checked when the file is read (check); its
		// lines are added once the step has settled (runner.show).
		// Shared informer factories (factories.go).
		"factory": {usage: "factory <name> [namespace=<ns>] [labels=<selector>] [fields=<selector>] [resync=<period>]",
			help:   "make a shared informer factory on each side (cachelab's factory/, client-go's informers.SharedInformerFactory); its informers list what the options say",
			minPos: 1, maxPos: 1, values: map[string]string{"namespace": "its informers watch one namespace only", "labels": "a label selector, as (app=web)",
				"fields": "a field selector (metadata.name, metadata.namespace)", "resync": "its default resync period"},
			run: cmdFactory},
		"informer": {usage: "informer <factory>", help: "ask the factory for its pods informer (ForResource): the first request makes it, every later one gets the same; it runs at the factory's next Start",
			minPos: 1, maxPos: 1, run: cmdInformer},
		"factory-start": {usage: "factory-start <factory>", help: "the factory's Start: run every informer asked for and not started yet, and only those",
			minPos: 1, maxPos: 1, run: cmdFactoryStart},
		"factory-wait": {usage: "factory-wait <factory>", help: "what the factory's WaitForCacheSync returns once the step has settled: each started informer's HasSynced ({} if none was started)",
			minPos: 1, maxPos: 1, run: cmdFactoryWait},
		// The controllers.
		"start-controller": {usage: "start-controller [workers=<n>] [writes] [guard] [skip-forget] [name=<name>] [informer=<factory>]",
			help: "put a controller on each informer (before start, they start with the informers): handlers queue keys on a rate-limiting workqueue, " +
				"workers reconcile them from the cache (cachelab's controller/ and workqueue/, and the same loop on client-go's workqueue); they run after each step until no key is ready",
			values: map[string]string{"workers": fmt.Sprintf("keys reconciled in one round (1-%d, default 1)", maxWorkers),
				"name":     "the controller's name, which its trace lines carry; several controllers each need one",
				"informer": "the factory whose informer it is on (informer <factory> made it); without it, start's"},
			flags: map[string]string{"writes": "each reconcile records the object's spec.image in the annotation " + observedAnnotation + " when it differs (an update with the resourceVersion it read)",
				"guard":       "the staleness guard: no reconcile while the cache is older than the controller's own last write of the key",
				"skip-forget": "the bug: success does not call Forget, so the backoff never resets"},
			run: cmdStartController},
		"reconcile-fail": {usage: "reconcile-fail <ns/name> [times=<n>] [requeue-after=<duration>]",
			help:   "the key's next n reconciles return an error (with a requeue-after too, if given: the error wins)",
			minPos: 1, maxPos: 1, values: map[string]string{"times": fmt.Sprintf("how many reconciles (1-%d, default 1)", maxTimes),
				"requeue-after": "a delay the failing reconcile also asks for"},
			run: func(r *runner, a args) error { return cmdScript(r, a, true) }},
		"reconcile-requeue": {usage: "reconcile-requeue <ns/name> after=<duration> [times=<n>]",
			help:   "the key's next n reconciles succeed and ask to be requeued after the duration",
			minPos: 1, maxPos: 1, values: map[string]string{"after": "the requeue-after delay", "times": fmt.Sprintf("how many reconciles (1-%d, default 1)", maxTimes)},
			run: func(r *runner, a args) error { return cmdScript(r, a, false) }},
		"show": {usage: "show store|queue|handlers|requests|synced|metrics|workqueue", help: "print what one part holds now (metrics: what a scrape of the informer's metrics would read; workqueue: the controller's queue)", minPos: 1, maxPos: 1,
			run: func(r *runner, a args) error { return nil }},
		"settle": {usage: "settle", help: "wait until both informers have processed everything (every step does this; it prints nothing new)",
			run: func(r *runner, a args) error { return nil }},
	}
}

// parse checks a step's arguments against the command.
func (c *command) parse(raw []datadriven.CmdArg) (args, error) {
	a := args{values: map[string][]string{}, flags: map[string]bool{}}
	for _, arg := range raw {
		switch {
		case len(arg.Vals) > 0 && c.flags[arg.Key] != "":
			return a, fmt.Errorf("%s is a flag and takes no value; %s", arg.Key, c.want())
		case len(arg.Vals) > 0:
			if _, ok := c.values[arg.Key]; !ok {
				return a, fmt.Errorf("unknown argument %q; %s", arg.Key, c.want())
			}
			if _, dup := a.values[arg.Key]; dup {
				return a, fmt.Errorf("argument %q given twice", arg.Key)
			}
			a.values[arg.Key] = arg.Vals
		case c.flags[arg.Key] != "":
			if a.flags[arg.Key] {
				return a, fmt.Errorf("flag %q given twice", arg.Key)
			}
			a.flags[arg.Key] = true
		default:
			a.pos = append(a.pos, arg.Key)
		}
	}
	if len(a.pos) < c.minPos || len(a.pos) > c.maxPos {
		return a, countError(c, a.pos)
	}
	return a, c.check(a)
}

func (c *command) want() string { return "usage: " + c.usage }

// check validates argument values, so a file is rejected before it runs
// (validate.go says what is refused, and why).
func (c *command) check(a args) error {
	name := nameOf(c)
	keys := make([]string, 0, len(a.values))
	for k := range a.values {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same error every time when two are bad
	for _, k := range keys {
		if err := checkValue(name, k, a.values[k]); err != nil {
			return err
		}
	}
	for _, p := range a.pos {
		if err := checkPositional(name, p); err != nil {
			return err
		}
	}
	return checkTogether(name, a)
}

// checkStep validates a parsed step: a known command with good arguments.
func checkStep(st Step) error {
	c, ok := commands[st.Cmd]
	if !ok {
		return fmt.Errorf("unknown command %q; want one of: %s", st.Cmd, strings.Join(commandNames(), ", "))
	}
	_, err := c.parse(st.Args)
	return err
}

func commandNames() []string {
	out := make([]string, 0, len(commands))
	for n := range commands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CommandHelp lists every command with its usage and help, sorted.
func CommandHelp() []string {
	var out []string
	for _, n := range commandNames() {
		c := commands[n]
		out = append(out, fmt.Sprintf("%-60s %s", c.usage, c.help))
	}
	return out
}

// labelsArg is the labels= of create, update and bulk-create as a map,
// nil for none; check has refused any that parseLabels refuses.
func labelsArg(a args) map[string]string {
	v, _ := a.value("labels")
	pairs, _ := parseLabels(v)
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.key] = p.value
	}
	return out
}

func argValue(raw []datadriven.CmdArg, key string) (string, bool) {
	for _, a := range raw {
		if a.Key == key {
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}
