package scenario

import (
	"fmt"
	"maps"
	"strconv"
	"time"
)

// dryRun follows a scenario's steps at parse time, keeping only what
// decides whether a later step can run: which objects exist, which
// handlers are registered, what was started. A run starts from an empty
// etcd (an external one gets a fresh prefix) and nothing else writes to
// it, so this is exact: a step it refuses is one the run would fail on
// halfway, after seconds or minutes, with an error about the file rather
// than about informers.
type dryRun struct {
	server     string // the scenario's "# Server:" line
	apiservers int    // kube-apiservers added by add-apiserver

	objects map[string]int // live object key -> line that created it
	raw     map[string]int // key holding put-raw's bytes -> the line that put them
	// snapshots are the live objects each etcd-snapshot saw, by the
	// snapshot's name, and which of them were put-raw's bytes:
	// etcd-restore brings them back.
	snapshots    map[string]map[string]int
	snapshotsRaw map[string]map[string]int
	// meta is what the live objects' metadata says of their life
	// (dryrunobjects.go), where it says anything; snapshotsMeta each
	// snapshot's.
	meta          map[string]objMeta
	snapshotsMeta map[string]map[string]objMeta
	created       int            // objects created in all
	handlers      map[string]int // registered handler -> line that added it

	started, running bool          // a start ran; no stop since
	controller       int           // the line of the controllers' start-controller, or 0
	ctlWaits         bool          // they wait for the informers' start
	queue            bool          // the last start was start-queue
	resync           time.Duration // the last start's resync period
	stack            string        // start's stack= (stacks)
	stackLine        int           // the first start, which fixes the stack
	clock            time.Duration // scenario time so far

	// factories are the scenario's factories, by name: the line that
	// made each, and whether each has made its informer.
	factories     map[string]int
	factoryHasInf map[string]bool   // "<factory>/<resource>" -> it has made that informer
	factoryHasAny map[string]bool   // factory -> it has made an informer
	factoryRuns   map[string]bool   // factory-start ran it with its informer made, and no stop since
	customKinds   map[string]bool   // the custom resources factories have informers of
	factoryNS     map[string]string // factory -> the namespace= it was made with
	controllers   map[string]int    // controller name ("" for an unnamed one) -> its start-controller's line
	ctlWriter     int               // the line of the controller that writes, or 0
	startWriter   bool              // that controller is on start's informer
	startResource string            // the resource of the last start's informer

	firstLine int           // the first command's line
	cluster   *clusterModel // etcd-cluster ran (cluster.go)
}

func newDryRun() *dryRun {
	return &dryRun{objects: map[string]int{}, raw: map[string]int{}, handlers: map[string]int{},
		factories: map[string]int{}, factoryNS: map[string]string{}, factoryHasInf: map[string]bool{}, factoryHasAny: map[string]bool{}, factoryRuns: map[string]bool{}, controllers: map[string]int{},
		snapshots: map[string]map[string]int{}, snapshotsRaw: map[string]map[string]int{},
		meta: map[string]objMeta{}, snapshotsMeta: map[string]map[string]objMeta{}}
}

// step checks st, whose arguments a are valid on their own, against what
// came before it, and records what it changes.
func (p *dryRun) step(st Step, a Args) error {
	if err := worldFor(st.Cmd, p.server); err != nil {
		return err
	}
	if p.firstLine == 0 {
		p.firstLine = st.Line
	}
	if NeedsServer(st.Cmd) == ServerWatchCache {
		return p.apiserverStep(st.Cmd, a)
	}
	switch st.Cmd {
	case "etcd-cluster", "etcd-stop-member", "etcd-start-member", "etcd-move-leader":
		return p.clusterStep(st, a)
	case "restart-etcd":
		return p.singleMember(st.Cmd)
	case "create":
		return p.create(st.Line, a)
	case "gc":
		p.gc()
	case "bulk-create":
		return p.bulkCreate(st.Line, a)
	case "update", "delete":
		if a.Resource == DefaultResource {
			if err := p.notRaw(st.Cmd, a.Pos); err != nil {
				return err
			}
		}
		return p.change(st.Line, st.Cmd, a)
	case "put-raw":
		return p.putRaw(st.Line, a.Pos[0])
	case "watch-list-lose":
		if _, ok := p.objects[a.Pos[0]]; !ok {
			return fmt.Errorf("watch-list-lose %s: no object %s exists here for a watch-list to leave out; create it first", a.Pos[0], a.Pos[0])
		}
	case "delete-raw":
		return p.deleteRaw(a.Pos[0])
	case "etcd-snapshot":
		if err := p.singleMember(st.Cmd); err != nil {
			return err
		}
		p.snapshots[a.Pos[0]], p.snapshotsRaw[a.Pos[0]] = maps.Clone(p.objects), maps.Clone(p.raw)
		p.snapshotsMeta[a.Pos[0]] = cloneMeta(p.meta)
	case "etcd-restore":
		if err := p.singleMember(st.Cmd); err != nil {
			return err
		}
		return p.restore(a.Pos[0])
	case "etcd-wipe":
		if err := p.singleMember(st.Cmd); err != nil {
			return err
		}
		p.objects, p.raw, p.meta = map[string]int{}, map[string]int{}, map[string]objMeta{}
	case "start", "start-queue":
		if ns, ok := a.Value("namespace"); ok {
			if c, custom := a.Custom(); custom && !c.Namespaced {
				return clusterInNamespace(st.Cmd+" informer="+a.Resource, c, "namespace="+ns)
			}
		}
		return p.start(st.Line, st.Cmd, a)
	case "stop":
		p.running, p.controller, p.ctlWaits = false, 0, false
		p.controllers, p.ctlWriter = map[string]int{}, 0
		p.factoryRuns = map[string]bool{} // stop shuts the factories down (I4)
	case "start-controller":
		return p.startController(st.Line, a)
	case "factory", "informer", "factory-start", "factory-wait":
		if st.Cmd == "factory" {
			if ns, ok := a.Value("namespace"); ok {
				p.factoryNS[a.Pos[0]] = ns
			}
		}
		if c, custom := a.Custom(); custom && st.Cmd == "informer" {
			if err := p.oneCustomKind(a.Pos[0], a.Resource); err != nil {
				return err
			}
			if ns := p.factoryNS[a.Pos[0]]; ns != "" && !c.Namespaced {
				return clusterInNamespace("informer "+a.Pos[0]+" "+a.Resource, c, "factory "+a.Pos[0]+" namespace="+ns)
			}
		}
		return p.factoryStep(st.Line, st.Cmd, a.Pos[0], a.Resource)
	case "show":
		switch {
		case a.Pos[0] != "workqueue":
		case p.controller == 0:
			return fmt.Errorf("show workqueue shows the controllers' queues, and none run here: start-controller starts them")
		case p.ctlWaits:
			return fmt.Errorf("show workqueue: the controllers of line %d start with the informers, and none are running yet", p.controller)
		}
	case "add-handler":
		if f, ok := a.Value("informer"); ok {
			if err := p.factoryInformer("add-handler "+a.Pos[0]+" informer="+f, f); err != nil {
				return err
			}
		}
		return p.addHandler(st.Line, a.Pos[0])
	case "remove-handler", "release":
		return p.useHandler(st.Cmd, a.Pos[0])
	case "pause", "resume":
		if !p.started || !p.queue {
			return fmt.Errorf("%s works on a queue started with start-queue, and this file has none started by here "+
				"(in a running informer, processing holds the queue's lock: pausing it would stop the reflector too)", st.Cmd)
		}
	case "resync":
		if !p.started || p.resync <= 0 {
			return fmt.Errorf("resync advances the clock by the informers' resync period, and they were not started with one by here; " +
				"use start resync=<period>, or advance <duration>")
		}
		return p.advance("resync", p.resync)
	case "advance":
		d, _ := time.ParseDuration(a.Pos[0])
		return p.advance("advance "+a.Pos[0], d)
	}
	return nil
}

// create records each object of a create line; each must be new. An
// object is its resource's (ObjectRef): a configmap and a pod may share
// a name, as in kube-apiserver.
func (p *dryRun) create(line int, a Args) error {
	resource, keys := a.Resource, a.Pos
	if err := p.count(len(keys)); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	ownerRes, ownerKey := a.Owner()
	for _, k := range keys {
		ref := ObjectRef(resource, k)
		if at, ok := p.objects[ref]; ok {
			return fmt.Errorf("create %s: %s", ref, alreadyExistsOf(resource, k, at, line))
		}
		if ownerRes != "" {
			if err := p.setOwner("create", ref, ObjectRef(ownerRes, ownerKey)); err != nil {
				return err
			}
		}
		p.objects[ref] = line
		if f := a.Finalizers(); len(f) > 0 {
			m := p.meta[ref]
			m.finalizers = f
			p.meta[ref] = m
		}
		if err := p.admit("create", ref, k, a, nil); err != nil {
			return err
		}
	}
	return nil
}

// admit is kube-apiserver's handling of a custom resource's create or
// update (CustomResource.Admit), where the build links it: the object
// as the step leaves it (its old spec, with spec= set on it), refused
// as the server refuses it. It keeps the object's spec for the next.
func (p *dryRun) admit(cmd, ref, key string, a Args, old map[string]any) error {
	c, ok := a.Custom()
	if !ok {
		return nil
	}
	spec := maps.Clone(old)
	if set := a.Spec(); set != nil {
		if spec == nil {
			spec = map[string]any{}
		}
		maps.Copy(spec, set)
	}
	m := p.meta[ref]
	m.spec = spec
	p.meta[ref] = m
	admit := c.Admit()
	if admit == nil {
		return nil
	}
	obj := c.Object(key, maps.Clone(spec))
	if l := a.Labels(); l != nil {
		obj["metadata"].(map[string]any)["labels"] = toAny(l)
	}
	var before map[string]any
	if cmd != "create" {
		// An update names the version it read; any will do here.
		before = c.Object(key, maps.Clone(old))
		for _, o := range []map[string]any{obj, before} {
			o["metadata"].(map[string]any)["resourceVersion"] = "1"
		}
	}
	if err := admit(obj, before); err != nil {
		return fmt.Errorf("%s %s: kube-apiserver refuses it: %v", cmd, ref, err)
	}
	return nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// notRaw refuses an update or delete of a key that holds put-raw's
// bytes: it reads the object first, and there is none to read.
func (p *dryRun) notRaw(cmd string, keys []string) error {
	for _, k := range keys {
		if at, ok := p.raw[k]; ok {
			return fmt.Errorf("%s %s: %s holds the bytes put-raw stored at line %d, which do not decode as an object; delete-raw removes them",
				cmd, k, k, at)
		}
	}
	return nil
}

// putRaw records a key that holds bytes, not an object: over an object
// (which it replaces) or a new key.
func (p *dryRun) putRaw(line int, key string) error {
	if _, ok := p.objects[key]; !ok {
		if err := p.count(1); err != nil {
			return fmt.Errorf("put-raw: %w", err)
		}
	}
	p.objects[key], p.raw[key] = line, line
	delete(p.meta, key) // bytes have no metadata
	return nil
}

// deleteRaw removes a key put-raw wrote.
func (p *dryRun) deleteRaw(key string) error {
	if _, ok := p.raw[key]; !ok {
		return fmt.Errorf("delete-raw %s: no put-raw before this line stored bytes there (delete removes an object)", key)
	}
	delete(p.raw, key)
	delete(p.objects, key)
	return nil
}

// restore brings back the objects a snapshot saw, and only them; the
// snapshot must have been taken before.
func (p *dryRun) restore(name string) error {
	objects, ok := p.snapshots[name]
	if !ok {
		return fmt.Errorf("etcd-restore %s: no snapshot named %q was taken before this line (etcd-snapshot %s takes one)", name, name, name)
	}
	p.objects, p.raw = maps.Clone(objects), maps.Clone(p.snapshotsRaw[name])
	p.meta = cloneMeta(p.snapshotsMeta[name])
	return nil
}

// bulkCreate records ns/obj-0001... as the runner names them.
func (p *dryRun) bulkCreate(line int, a Args) error {
	ns := a.BulkNS()
	nStr, _ := a.Value("n")
	n, _ := strconv.Atoi(nStr)
	if err := p.count(n); err != nil {
		return fmt.Errorf("bulk-create: %w", err)
	}
	for i := 1; i <= n; i++ {
		k := BulkName(ns, i, n)
		if at, ok := p.objects[k]; ok {
			return fmt.Errorf("bulk-create %s..%s: %s", BulkName(ns, 1, n), BulkName(ns, n, n), alreadyExists(k, at, line))
		}
		p.objects[k] = line
	}
	return nil
}

// BulkName is the key of bulk-create's i-th object of n: obj-0001 and
// on, zero-padded to at least 4 digits and to the width of n, so that the
// names sort in creation order however many there are.
func BulkName(ns string, i, n int) string {
	width := max(4, len(strconv.Itoa(n)))
	return fmt.Sprintf("%s/obj-%0*d", ns, width, i)
}

// count adds n to the objects created in all.
func (p *dryRun) count(n int) error {
	if p.created+n > maxObjects {
		return fmt.Errorf("this file would create %d objects in all; a scenario creates at most %d "+
			"(each is its own etcd write, and both informers hold every one)", p.created+n, maxObjects)
	}
	p.created += n
	return nil
}

// alreadyExists is kube-apiserver's message for a create of an existing
// pod, with where it was created.
func alreadyExists(key string, at, line int) string {
	return alreadyExistsOf(DefaultResource, key, at, line)
}

// alreadyExistsOf is alreadyExists for an object of resource.
func alreadyExistsOf(resource, key string, at, line int) string {
	_, name := SplitKey(key)
	if at == line {
		return fmt.Sprintf("%s %q already exists: %s is named twice on this line", resource, name, key)
	}
	return fmt.Sprintf("%s %q already exists: %s was created at line %d", resource, name, key, at)
}

// change checks that each object an update or delete names exists.
func (p *dryRun) change(line int, cmd string, a Args) error {
	resource, keys := a.Resource, a.Pos
	deleted := map[string]bool{}
	for _, k := range keys {
		ref := ObjectRef(resource, k)
		if _, ok := p.objects[ref]; !ok {
			_, name := SplitKey(k)
			why := "no create before this line makes it"
			if deleted[ref] {
				why = k + " is named twice on this line"
			}
			return fmt.Errorf("%s %s: %s %q not found: %s", cmd, ref, resource, name, why)
		}
		switch {
		case cmd == "delete":
			p.deleteObject(ref)
			deleted[ref] = true
		case a.Values["finalizers"] != nil:
			deleted, err := p.setFinalizers(cmd, ref, a.Finalizers())
			if err != nil || deleted {
				return err
			}
			fallthrough
		default:
			if err := p.admit(cmd, ref, k, a, p.meta[ref].spec); err != nil {
				return err
			}
		}
	}
	return nil
}

// start checks that nothing is running, that a start-queue has no
// handlers to add (the queue world has none), and that the file keeps to
// one stack: the run sets the stack's feature gates once, from the first
// start that names one, and every start runs that stack.
func (p *dryRun) start(line int, cmd string, a Args) error {
	if p.running {
		return fmt.Errorf("%s: the informers are already started; stop them first to start fresh ones", cmd)
	}
	if h, at := p.firstHandler(); cmd == "start-queue" && h != "" {
		return fmt.Errorf("start-queue runs a bare queue, which has no handlers, and handler %q is registered (line %d); "+
			"remove-handler it first, or use start", h, at)
	}
	stack := stacks[0]
	if v, ok := a.Value("stack"); ok {
		stack = v
	}
	switch {
	case p.stackLine == 0:
		p.stack, p.stackLine = stack, line
	case a.Values["stack"] != nil && stack != p.stack:
		return fmt.Errorf("%s stack=%s: this run's stack is %s, fixed by the first start (line %d); "+
			"a run uses one stack, so name it there", cmd, stack, p.stack, p.stackLine)
	}
	if at := p.firstFactory(); cmd == "start-queue" && at > 0 {
		return fmt.Errorf("start-queue runs bare queues, and the factory of line %d makes informers: a run has one or the other", at)
	}
	if p.ctlWaits && cmd == "start-queue" {
		return fmt.Errorf("start-queue: the controllers of line %d wait for informers to start with, and start-queue's bare queues have no handlers: use start", p.controller)
	}
	if a.Resource != DefaultResource && p.startWriter && p.ctlWriter != 0 {
		return fmt.Errorf("%s informer=%s: the controller of line %d writes, and records a pod's spec.image; this informer holds %s", cmd, a.Resource, p.ctlWriter, a.Resource)
	}
	p.startResource = a.Resource
	p.ctlWaits = false
	p.started, p.running, p.queue = true, true, cmd == "start-queue"
	p.resync = 0
	if v, ok := a.Value("resync"); ok {
		p.resync, _ = time.ParseDuration(v)
	}
	return nil
}

// firstHandler is the registered handler added first, or "".
func (p *dryRun) firstHandler() (name string, line int) {
	for h, at := range p.handlers {
		if name == "" || at < line {
			name, line = h, at
		}
	}
	return name, line
}

// addHandler registers a handler as the runner would: a duplicate name
// fails the run, the queue world refuses handlers, and stopped informers
// refuse them too (the trace shows it; the handler is not registered).
func (p *dryRun) addHandler(line int, name string) error {
	if at, ok := p.handlers[name]; ok {
		return fmt.Errorf("add-handler %s: a handler named %q is already registered (line %d)", name, name, at)
	}
	switch {
	case p.running && p.queue:
		return fmt.Errorf("add-handler %s: the queue world (start-queue) has no handlers; use start for an informer", name)
	case p.started && !p.running:
		return nil
	}
	p.handlers[name] = line
	return nil
}

// useHandler checks that remove-handler and release name a registered
// handler.
func (p *dryRun) useHandler(cmd, name string) error {
	if _, ok := p.handlers[name]; !ok {
		return fmt.Errorf("%s %s: no handler %q is registered here (add-handler adds one; once the informers are stopped, they refuse new ones)",
			cmd, name, name)
	}
	if cmd == "remove-handler" {
		delete(p.handlers, name)
	}
	return nil
}

// informed reports whether informers run, whose reflectors watch: start's
// (its bare queues too: a reflector feeds them), or a factory's.
func (p *dryRun) informed() bool {
	return p.running || len(p.factoryRuns) > 0
}

// advance moves scenario time, which may not pass maxClock in all, nor,
// behind the watch cache with informers running, more than a day at once.
func (p *dryRun) advance(what string, d time.Duration) error {
	if err := InformedAdvance(what, d, p.informed(), p.server); err != nil {
		return err
	}
	if p.clock+d > maxClock {
		return fmt.Errorf("%s: scenario time would reach %v; it may reach at most %v "+
			"(the trace prints it as a Go duration, which stops at 292 years)", what, p.clock+d, maxClock)
	}
	p.clock += d
	return nil
}

// clusterInNamespace refuses an informer of cluster-scoped c in one
// namespace (what says which): kube-apiserver has no path for it there
// (404), and client-go's generated informers of a cluster-scoped kind
// leave a factory's namespace out.
func clusterInNamespace(what string, c CustomResource, ns string) error {
	return fmt.Errorf("%s: %s is cluster-scoped, and %s: kube-apiserver serves no namespace's %s (404); watch it without a namespace",
		what, c.Plural, ns, c.Plural)
}
