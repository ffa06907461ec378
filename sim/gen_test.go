package sim

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// genScenario writes a random well-formed scenario: a "#" paragraph, then
// 3 to 15 commands, each with a "----" line and no expected output. It
// draws from every command in the table, in any order, over a small pool
// of objects and handlers, so that levers are pulled before start and
// after stop, writes hit objects the informers' selectors hide, and a
// stopped informer is started again.
//
// Well-formed means scenario.Parse accepts it. Parse refuses steps that cannot
// run where they stand (an update of an object that does not exist, a
// pause with no start-queue); gen's model of the scenario avoids most of
// them, and each step is kept only once Parse accepts the file with it,
// so the generator keeps up with whatever Parse refuses. The same seed
// gives the same scenario for as long as Parse refuses the same things.
func genScenario(rng *rand.Rand) string {
	g := &gen{rng: rng, objects: map[string]bool{}, handlers: map[string]bool{}, snapshots: map[string]map[string]bool{},
		queueMode: rng.IntN(4) == 0, cache: rng.IntN(3) == 0}
	text := "# A random well-formed scenario written by genScenario (sim/gen_test.go).\n" +
		"# It has no expected output: FuzzRunner checks that it runs without a panic\n" +
		"# or a hang, and the same way twice.\n"
	if g.cache {
		text += "# Server: watchcache\n"
	} else {
		text += "# Server: etcd\n"
	}
	n := 3 + rng.IntN(13)
	for i, written := 0, 0; i < n; i++ {
		text += g.acceptedStep(text)
		written++
		if late := g.lateStep(text, written+n-1-i < 15); late != "" {
			text += late
			written++
		}
	}
	return text
}

// genLate are the commands added to the table after the seed corpus
// (fuzzSeeds, testdata/fuzz) was chosen for what its scenarios do. Drawn
// by step, among genOrder, each would change the scenario of every seed
// (one more weight, one more draw); lateStep adds them between the drawn
// steps instead, from a stream of its own, and the drawn steps stay as
// each seed has them.
var genLate = map[string]genStep{
	"watch-list-lose": {func(g *gen) int { return g.unless(len(g.objects) > 0, 1, 0) }, func(g *gen) string { return "watch-list-lose " + g.key(true) }},
	// Resources beyond pods, finalizers and owners, and the garbage
	// collector's sweep: the etcd world's (kinds.go's model, apart from
	// what the drawn steps read).
	"gc": {func(g *gen) int { return g.unless(!g.cache && g.kinds.owned, 12, 0) }, func(*gen) string { return "gc" }},
}

// genKindSteps are late steps (lateStep) that act on resources other
// than pods, in the etcd world: writes of configmaps, secrets and
// deployments, some with finalizers or an owner, and a factory's
// informer of one. Their model (gen.kinds) is their own: no drawn step
// reads it.
var genKindSteps = []genStep{
	{func(g *gen) int { return g.unless(!g.cache, 10, 0) }, (*gen).createKind},
	{func(g *gen) int { return g.unless(!g.cache && len(g.kinds.objects) > 0, 6, 0) }, (*gen).updateKind},
	{func(g *gen) int { return g.unless(!g.cache && len(g.kinds.objects) > 0, 4, 0) }, (*gen).deleteKind},
	{func(g *gen) int { return g.unless(!g.cache && len(g.factories) > 0, 8, 0) }, (*gen).informerKind},
	// After a write of another kind, so that a scenario of the corpus,
	// chosen when it drew none of these, still draws none.
	{func(g *gen) int { return g.unless(!g.cache && !g.kinds.crd && len(g.kinds.objects) > 0, 6, 0) }, (*gen).crd},
}

// lateStream is the late source's stream: one with which no scenario of
// the corpus gets a late step, so the corpus runs as it was chosen to.
const lateStream = 6

// lateStep may add one of genLate's commands after a drawn step, if room
// is left for it among the 15 steps at most: rarely, by a source seeded
// with the scenario so far (so the same seed adds the same), and only
// where Parse accepts it. It draws nothing from g.rng, and a late command
// changes nothing of gen's model that a later draw reads.
func (g *gen) lateStep(text string, room bool) string {
	if !room {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), lateStream))
	late := make([]genStep, 0, len(genLate))
	for _, n := range slices.Sorted(maps.Keys(genLate)) {
		late = append(late, genLate[n])
	}
	if step := g.lateFrom(text, r, late); step != "" {
		return step
	}
	// The other resources' steps come in one scenario of four, decided
	// by its first step, and draw from a stream of their own: kindSalt
	// is one with which no scenario of the corpus gets one either.
	if g.kinds.on == 0 {
		g.kinds.on = 1 + rand.New(rand.NewPCG(h.Sum64(), kindSalt)).IntN(4)
	}
	if g.kinds.on != 1 {
		return ""
	}
	return g.lateFrom(text, rand.New(rand.NewPCG(h.Sum64(), lateStream)), genKindSteps)
}

// kindSalt decides which scenarios get steps over other resources: a
// salt with which none of the corpus does (TestGenCorpusKeepsItsSteps).
const kindSalt = 1

// lateFrom is the first of steps that r draws and Parse accepts after
// text, or "".
func (g *gen) lateFrom(text string, r *rand.Rand, steps []genStep) string {
	for _, s := range steps {
		if w := s.weight(g); w == 0 || r.IntN(24) >= w {
			continue
		}
		main := g.rng
		saved := g.kinds.clone()
		g.rng = r // the command's own choices (which object) come from the late source too
		step := "\n" + s.write(g) + "\n----\n"
		g.rng = main
		if _, err := scenario.Parse("gen.txt", []byte(text+step)); err == nil {
			return step
		}
		g.kinds = saved
	}
	return ""
}

// acceptedStep draws steps until Parse accepts the file with one added,
// and returns it with its "----". A step Parse refuses leaves gen's model
// as it was. "show store" can follow anything, so it ends a long run of
// refusals.
func (g *gen) acceptedStep(text string) string {
	for range 20 {
		saved := g.save()
		step := "\n" + g.step() + "\n----\n"
		if _, err := scenario.Parse("gen.txt", []byte(text+step)); err == nil {
			g.steps++
			return step
		}
		g.restore(saved)
	}
	return "\nshow store\n----\n"
}

// gen is the generator's loose model of the scenario so far: enough to
// make most steps ones that Parse accepts and that do something, not a
// re-implementation of Parse's checks or of the runner.
type gen struct {
	rng        *rand.Rand
	queueMode  bool                       // this scenario starts queues (start-queue), which take no handlers
	cache      bool                       // it runs in the watch-cache world
	objects    map[string]bool            // keys created and not deleted
	raw        map[string]bool            // keys put-raw wrote and delete-raw did not remove
	snapshots  map[string]map[string]bool // etcd-snapshot's name -> the objects it saw
	handlers   map[string]bool            // names added and not removed
	started    bool                       // start or start-queue ran, and no stop since
	controller bool                       // an unnamed start-controller ran, and no stop since
	ctlNames   []string                   // named controllers started, and no stop since
	ctlWriter  bool                       // one of the controllers writes
	factories  []string                   // factories made
	facInf     []string                   // factories that have made their informer
	queue      bool                       // the last start was start-queue
	resync     bool                       // the last start had a resync period
	stack      string                     // fixed by the first start: "default" or "classic"
	steps      int                        // steps written so far
	cluster    bool                       // the first step was etcd-cluster (3 members)
	down       [3]bool                    // a cluster's stopped members (m1 is 0)
	leader     int                        // a cluster's leader
	kinds      genKinds                   // the late steps' model of other resources
}

func (g *gen) save() gen {
	c := *g
	c.objects, c.handlers, c.raw, c.snapshots = maps.Clone(g.objects), maps.Clone(g.handlers), maps.Clone(g.raw), maps.Clone(g.snapshots)
	c.ctlNames, c.factories, c.facInf = slices.Clone(g.ctlNames), slices.Clone(g.factories), slices.Clone(g.facInf)
	c.kinds = g.kinds.clone()
	return c
}

func (g *gen) restore(saved gen) { *g = saved }

// The pools steps draw from.
var (
	genKeys      = []string{"ns0/a", "ns0/b", "ns1/c"}
	genHandlers  = []string{"h1", "h2", "h3"}
	genLabels    = []string{"(app=web)", "(app=db)", "(app=web,tier=front)", "()"}
	genStatuses  = []string{"410", "429", "500", "503"}
	genDurations = []string{"1s", "2s", "5s", "30s", "45s", "1m", "2m", "5m", "5m1s", "10m", "11m", "1h", "6h"} // hours: quiet moves (issue 27, case 2)
	genPeriods   = []string{"0s", "10s", "30s", "1m", "5m"}
	genShows     = []string{"store", "queue", "handlers", "requests", "synced", "metrics"}
	genSnapshots = []string{"s1", "s2"}
)

// genStep is one command's generator and how often it is drawn.
type genStep struct {
	weight func(g *gen) int
	write  func(g *gen) string
}

func always(n int) func(*gen) int { return func(*gen) int { return n } }

// genSteps covers every command in the table (TestGenCoversEveryCommand).
var genSteps = map[string]genStep{
	"create":            {always(6), (*gen).create},
	"update":            {func(g *gen) int { return g.unless(len(g.objects) > 0, 6, 0) }, (*gen).update},
	"delete":            {func(g *gen) int { return g.unless(len(g.objects) > 0, 3, 0) }, (*gen).delete},
	"bulk-create":       {always(1), (*gen).bulkCreate},
	"compact":           {always(2), func(*gen) string { return "compact" }},
	"progress":          {always(2), func(*gen) string { return "progress" }},
	"close-watch":       {always(2), func(*gen) string { return "close-watch" }},
	"disconnect":        {always(2), func(*gen) string { return "disconnect" }},
	"reconnect":         {always(2), func(*gen) string { return "reconnect" }},
	"fail-next":         {always(2), (*gen).failNext},
	"expire-continue":   {always(1), func(*gen) string { return "expire-continue" }},
	"put-raw":           {always(1), (*gen).putRaw},
	"delete-raw":        {func(g *gen) int { return g.unless(len(g.raw) > 0, 3, 0) }, (*gen).deleteRaw},
	"restart-etcd":      {always(1), func(*gen) string { return "restart-etcd" }},
	"etcd-snapshot":     {always(1), (*gen).etcdSnapshot},
	"etcd-restore":      {func(g *gen) int { return g.unless(len(g.snapshots) > 0, 2, 0) }, (*gen).etcdRestore},
	"etcd-wipe":         {always(1), (*gen).etcdWipe},
	"server":            {always(1), func(g *gen) string { return "server watch-list=" + g.pick([]string{"on", "off"}) }},
	"advance":           {always(3), func(g *gen) string { return "advance " + g.pick(genDurations) }},
	"resync":            {func(g *gen) int { return g.unless(g.started && g.resync, 4, 0) }, func(*gen) string { return "resync" }},
	"start":             {func(g *gen) int { return g.unless(g.queueMode, 0, g.startWeight()) }, func(g *gen) string { return g.start("start") }},
	"start-queue":       {func(g *gen) int { return g.unless(g.queueMode, g.startWeight(), 0) }, func(g *gen) string { return g.start("start-queue") }},
	"stop":              {func(g *gen) int { return g.unless(g.started, 2, 0) }, (*gen).stop},
	"add-handler":       {func(g *gen) int { return g.unless(g.queueMode, 0, 4) }, (*gen).addHandler},
	"remove-handler":    {func(g *gen) int { return g.unless(len(g.handlers) > 0, 1, 0) }, (*gen).removeHandler},
	"release":           {func(g *gen) int { return g.unless(len(g.handlers) > 0, 2, 0) }, func(g *gen) string { return "release " + g.handler(true) }},
	"pause":             {func(g *gen) int { return g.unless(g.queue, 3, 0) }, func(*gen) string { return "pause" }},
	"resume":            {func(g *gen) int { return g.unless(g.queue, 3, 0) }, func(*gen) string { return "resume" }},
	"show":              {always(2), func(g *gen) string { return "show " + g.pick(genShows) }},
	"settle":            {always(1), func(*gen) string { return "settle" }},
	"start-controller":  {func(g *gen) int { return g.unless(!g.queueMode && !g.controller && len(g.ctlNames) < 3, 3, 0) }, (*gen).startController},
	"factory":           {func(g *gen) int { return g.unless(!g.queueMode && len(g.factories) < scenario.MaxFactories, 2, 0) }, (*gen).factory},
	"informer":          {func(g *gen) int { return g.unless(len(g.factories) > 0, 3, 0) }, (*gen).informer},
	"factory-start":     {func(g *gen) int { return g.unless(len(g.factories) > 0, 3, 0) }, func(g *gen) string { return "factory-start " + g.factoryName(g.factories) }},
	"factory-wait":      {func(g *gen) int { return g.unless(len(g.factories) > 0, 2, 0) }, func(g *gen) string { return "factory-wait " + g.factoryName(g.factories) }},
	"reconcile-fail":    {always(1), (*gen).reconcileFail},
	"reconcile-requeue": {always(1), (*gen).reconcileRequeue},
	"hold-cache":        {always(2), func(*gen) string { return "hold-cache" }},
	"release-cache":     {always(2), func(*gen) string { return "release-cache" }},
	"restart-apiserver": {always(1), func(*gen) string { return "restart-apiserver" }},
	"add-apiserver":     {always(1), func(*gen) string { return "add-apiserver" }},
	"use-apiserver":     {always(1), func(g *gen) string { return "use-apiserver " + g.pick([]string{"1", "2"}) }},
	// An etcd cluster: rarely (each run starts three members), and only
	// as the first step.
	"etcd-cluster":      {func(g *gen) int { return g.unless(g.steps == 0, 5, 0) }, (*gen).etcdCluster},
	"etcd-stop-member":  {func(g *gen) int { return g.unless(g.cluster && g.up() == 3, 3, 0) }, (*gen).stopMember},
	"etcd-start-member": {func(g *gen) int { return g.unless(g.cluster && g.up() < 3, 8, 0) }, (*gen).startMember},
	"etcd-move-leader":  {func(g *gen) int { return g.unless(g.cluster, 2, 0) }, (*gen).moveLeader},
}

func (g *gen) etcdCluster() string {
	g.cluster = true
	return "etcd-cluster"
}

// up is how many of a cluster's members run.
func (g *gen) up() int {
	n := 0
	for _, d := range g.down {
		if !d {
			n++
		}
	}
	return n
}

// member picks a member that runs (up true) or one that is stopped.
func (g *gen) member(up bool) int {
	var fit []int
	for i, d := range g.down {
		if d != up {
			fit = append(fit, i)
		}
	}
	if len(fit) == 0 {
		return g.rng.IntN(3) // Parse refuses the step; another is drawn
	}
	return fit[g.rng.IntN(len(fit))]
}

func (g *gen) stopMember() string {
	i := g.member(true)
	g.down[i] = true
	if g.leader == i {
		g.leader = slices.Index(g.down[:], false)
	}
	return fmt.Sprintf("etcd-stop-member m%d", i+1)
}

func (g *gen) startMember() string {
	i := g.member(false)
	g.down[i] = false
	return fmt.Sprintf("etcd-start-member m%d", i+1)
}

func (g *gen) moveLeader() string {
	i := g.member(true)
	g.leader = i
	return fmt.Sprintf("etcd-move-leader m%d", i+1)
}

// genOrder is genSteps' keys in a fixed order, so a seed always gives
// the same scenario.
var genOrder = slices.Sorted(maps.Keys(genSteps))

func init() {
	// A late command is in the table, and so must be fuzzed
	// (TestGenCoversEveryCommand), but is not drawn by step (genLate).
	maps.Copy(genSteps, genLate)
	// crd is one of the other resources' late steps (genKindSteps).
	genSteps["crd"] = genStep{func(*gen) int { return 0 }, (*gen).crd}
}

// step draws a command by weight. A command whose weight is 0 where the
// scenario stands is still drawn, rarely: Parse refuses it or, where the
// runner is meant to cope (stop before start, a handler added to stopped
// informers), lets it through.
func (g *gen) step() string {
	total := 0
	weights := make([]int, len(genOrder))
	for i, n := range genOrder {
		weights[i] = max(genSteps[n].weight(g), 0)
		if weights[i] == 0 && g.rng.IntN(8) == 0 {
			weights[i] = 1
		}
		if need := scenario.NeedsServer(n); need == scenario.ServerEtcd && g.cache || need == scenario.ServerWatchCache && !g.cache {
			weights[i] = 0 // Parse refuses it in this world
		}
		total += weights[i]
	}
	x := g.rng.IntN(total)
	for i, n := range genOrder {
		if x < weights[i] {
			return genSteps[n].write(g)
		}
		x -= weights[i]
	}
	panic("unreachable: x < total")
}

// startWeight makes a first start likely within a few steps, and a
// restart after stop less so.
func (g *gen) startWeight() int {
	switch {
	case g.started:
		return 0
	case g.stack == "":
		return 16
	}
	return 4
}

func (g *gen) pick(pool []string) string { return pool[g.rng.IntN(len(pool))] }

// maybe is true with probability 1/n.
func (g *gen) maybe(n int) bool { return g.rng.IntN(n) == 0 }

func (g *gen) unless(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}

// key picks an object that exists (existing true) or one that does not.
// Bulk-created objects exist too, so update and delete reach them.
func (g *gen) key(existing bool) string {
	var fit []string
	if existing {
		fit = slices.Sorted(maps.Keys(g.objects))
	} else {
		fit = slices.DeleteFunc(slices.Clone(genKeys), func(k string) bool { return g.objects[k] })
	}
	if len(fit) == 0 {
		return g.pick(genKeys) // Parse refuses the step; another is drawn
	}
	return g.pick(fit)
}

// handler picks a handler name that is registered (existing true) or one
// that is not.
func (g *gen) handler(existing bool) string {
	fit := slices.DeleteFunc(slices.Clone(genHandlers), func(h string) bool { return g.handlers[h] != existing })
	if len(fit) == 0 {
		return g.pick(genHandlers)
	}
	return g.pick(fit)
}

func (g *gen) create() string {
	keys := []string{g.key(false)}
	for range g.rng.IntN(3) {
		if k := g.key(false); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		g.objects[k] = true
	}
	line := "create " + strings.Join(keys, " ")
	if g.maybe(2) {
		line += " labels=" + g.pick(genLabels[:3])
	}
	if g.maybe(4) {
		line += " managed"
	}
	return line
}

func (g *gen) update() string {
	line := "update " + g.key(true)
	switch g.rng.IntN(3) {
	case 0:
		line += " labels=" + g.pick(genLabels)
	case 1:
		line += " image=v" + fmt.Sprint(2+g.rng.IntN(3))
	default:
		line += " labels=" + g.pick(genLabels) + " image=v2"
	}
	if g.maybe(4) {
		line += " times=" + g.pick([]string{"1", "3", "10"})
	}
	return line
}

// putRaw stores bytes under a key of its own, apart from the objects the
// other steps update and delete (Parse refuses those over raw bytes).
func (g *gen) putRaw() string {
	k := g.pick([]string{"ns9/raw-a", "ns9/raw-b"})
	if g.raw == nil {
		g.raw = map[string]bool{}
	}
	g.raw[k] = true
	return "put-raw " + k + " " + g.pick([]string{"garbage", "{}", "[1,2]"})
}

func (g *gen) deleteRaw() string {
	keys := slices.Sorted(maps.Keys(g.raw))
	if len(keys) == 0 {
		return "delete-raw ns9/raw-a" // Parse refuses it
	}
	k := g.pick(keys)
	delete(g.raw, k)
	return "delete-raw " + k
}

func (g *gen) delete() string {
	k := g.key(true)
	delete(g.objects, k)
	return "delete " + k
}

func (g *gen) bulkCreate() string {
	n := 1 + g.rng.IntN(5)
	if g.maybe(8) {
		n = 201 + g.rng.IntN(60) // more keys than the old 200 rounds of a controller's step (issue 27, case 1)
	}
	ns := g.pick([]string{scenario.BulkNamespace, "ns1"})
	line := fmt.Sprintf("bulk-create n=%d", n)
	if ns != scenario.BulkNamespace || g.maybe(2) {
		line += " ns=" + ns
	}
	if g.maybe(3) {
		line += " labels=" + g.pick(genLabels[:3])
	}
	for i := 1; i <= n; i++ {
		g.objects[fmt.Sprintf("%s/obj-%04d", ns, i)] = true
	}
	return line
}

// etcdSnapshot, etcdRestore and etcdWipe keep the objects in step with
// what etcd holds: a restore brings back the snapshot's, a wipe none.
func (g *gen) etcdSnapshot() string {
	name := g.pick(genSnapshots)
	g.snapshots[name] = maps.Clone(g.objects)
	return "etcd-snapshot " + name
}

func (g *gen) etcdRestore() string {
	names := slices.Sorted(maps.Keys(g.snapshots))
	if len(names) == 0 {
		return "etcd-restore " + g.pick(genSnapshots) // Parse refuses it; another is drawn
	}
	name := g.pick(names)
	g.objects = maps.Clone(g.snapshots[name])
	g.raw = nil // the snapshot's raw keys are not tracked: a delete-raw drawn later is refused and redrawn
	return "etcd-restore " + name
}

func (g *gen) etcdWipe() string {
	g.objects, g.raw = map[string]bool{}, nil
	return "etcd-wipe"
}

func (g *gen) failNext() string {
	switch g.rng.IntN(3) {
	case 0:
		if g.maybe(3) {
			return "fail-next list=" + g.pick(genStatuses) + " page=" + g.pick([]string{"1", "2"})
		}
		return "fail-next list=" + g.pick(genStatuses)
	case 1:
		return "fail-next watch=" + g.pick(genStatuses)
	default:
		return "fail-next list=" + g.pick(genStatuses) + " watch=" + g.pick(genStatuses)
	}
}

// start starts informers or queues. The first start fixes the run's
// stack (Parse refuses a later one that names another); FuzzRunner's
// Options.Stack overrides it anyway.
func (g *gen) start(cmd string) string {
	line := cmd
	switch {
	case g.stack == "":
		g.stack = "default"
		if g.maybe(2) {
			g.stack = g.pick([]string{"default", "classic"})
			line += " stack=" + g.stack
		}
	case g.maybe(3):
		line += " stack=" + g.stack
	}
	g.resync = g.maybe(3)
	if g.resync {
		line += " resync=" + g.pick(genPeriods[1:])
	}
	switch g.rng.IntN(6) {
	case 0:
		line += " labels=(app=web)"
	case 1:
		line += " fields=metadata.namespace=ns0"
	case 2:
		line += " namespace=ns0"
	}
	if cmd == "start" && g.maybe(4) {
		line += " transform=strip-managed-fields"
	}
	g.started, g.queue = true, cmd == "start-queue"
	return line
}

func (g *gen) stop() string {
	g.started, g.queue, g.controller = false, false, false
	g.ctlNames, g.ctlWriter = nil, false
	return "stop"
}

// factoryName picks a factory made so far, or f1 (Parse refuses a
// factory not made yet: a step drawn rarely, as any).
func (g *gen) factoryName(pool []string) string {
	if len(pool) == 0 {
		return "f1"
	}
	return g.pick(pool)
}

func (g *gen) startController() string {
	line := "start-controller"
	// Named, on a factory's informer or start's, when there is a
	// factory informer to put it on or named ones already.
	if len(g.ctlNames) > 0 || len(g.facInf) > 0 && g.maybe(2) {
		name := fmt.Sprintf("c%d", len(g.ctlNames)+1)
		g.ctlNames = append(g.ctlNames, name)
		line += " name=" + name
		if len(g.facInf) > 0 && !g.maybe(3) {
			line += " informer=" + g.pick(g.facInf)
		}
	} else {
		g.controller = true
	}
	if g.maybe(3) {
		line += " workers=2"
	}
	for _, f := range []string{"writes", "guard", "skip-forget"} {
		if g.maybe(2) && (f != "writes" || !g.ctlWriter) {
			line += " " + f
			g.ctlWriter = g.ctlWriter || f == "writes"
		}
	}
	return line
}

// factory makes a factory, f1 to f3, over all namespaces or one, with
// a selector or a resync period now and then.
func (g *gen) factory() string {
	name := fmt.Sprintf("f%d", len(g.factories)+1)
	g.factories = append(g.factories, name)
	line := "factory " + name
	if g.maybe(3) {
		line += " namespace=ns0"
	}
	if g.maybe(4) {
		line += " labels=(app=web)"
	}
	if g.maybe(3) {
		line += " resync=" + g.pick(genPeriods)
	}
	return line
}

func (g *gen) informer() string {
	f := g.factoryName(g.factories)
	if !slices.Contains(g.facInf, f) {
		g.facInf = append(g.facInf, f)
	}
	return "informer " + f
}

func (g *gen) reconcileFail() string {
	line := "reconcile-fail " + g.pick(genKeys)
	if g.maybe(2) {
		line += " times=3"
	}
	if g.maybe(3) {
		line += " requeue-after=" + g.pick(genDurations)
	}
	return line
}

func (g *gen) reconcileRequeue() string {
	line := "reconcile-requeue " + g.pick(genKeys) + " after=" + g.pick(genDurations)
	if g.maybe(2) {
		line += " times=2"
	}
	return line
}

func (g *gen) addHandler() string {
	name := g.handler(false)
	if g.started || g.stack == "" {
		g.handlers[name] = true // stopped informers refuse it (a trace line)
	}
	line := "add-handler " + name
	if len(g.facInf) > 0 && g.maybe(2) {
		line += " informer=" + g.pick(g.facInf)
	}
	if g.maybe(3) {
		line += " resync=" + g.pick(genPeriods)
	}
	if g.maybe(3) {
		line += " slow"
	}
	return line
}

func (g *gen) removeHandler() string {
	name := g.handler(true)
	delete(g.handlers, name)
	return "remove-handler " + name
}

// The generator never writes a file scenario.Parse rejects: a fuzz failure is
// then always the runner's, never the generator's.
func TestGenScenarioParses(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(200) {
		text := genScenario(rand.New(rand.NewPCG(seed, 0)))
		sc, err := scenario.Parse(fmt.Sprintf("gen-%d.txt", seed), []byte(text))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		if n := len(sc.Steps); n < 3 || n > 15 {
			t.Errorf("seed %d: %d steps, want 3 to 15", seed, n)
		}
		for _, st := range sc.Steps {
			seen[st.Cmd] = true
		}
		if again := genScenario(rand.New(rand.NewPCG(seed, 0))); again != text {
			t.Fatalf("seed %d: a second draw differs:\n%s\n---\n%s", seed, text, again)
		}
	}
	for _, n := range scenario.CommandNames() {
		if !seen[n] {
			t.Errorf("200 scenarios never used %q", n)
		}
	}
}

// Every command in the table has a generator, so a command added to the
// table is fuzzed as soon as it is added here.
func TestGenCoversEveryCommand(t *testing.T) {
	for _, n := range scenario.CommandNames() {
		if _, ok := genSteps[n]; !ok {
			t.Errorf("genScenario never writes %q: add it to genSteps", n)
		}
	}
	for n := range genSteps {
		if !slices.Contains(scenario.CommandNames(), n) {
			t.Errorf("genSteps has %q, which is not a command", n)
		}
	}
}
