package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Bad scenario files are rejected before anything runs, with file:line
// and what was expected.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"no comment", "create ns0/a\n----\n", "x.txt:1: a scenario starts with a # paragraph"},
		// Issue 27, case 10: the last line used to win silently.
		{"two server lines", "# s\n# Server: etcd\n# Server: watchcache\n\ncreate ns0/a\n----\n",
			`x.txt:3: a second "# Server:" line; line 2 says "etcd" already: a scenario runs behind one kube-apiserver, so say it once`},
		{"no separator", "# s\n\ncreate ns0/a\nstart\n", `x.txt:3: expected a line "----" after the command "create"`},
		// Issue 47, case 21: an unknown command gets the closest names, as
		// an unknown scenario name does; with none close, every name.
		{"unknown command", "# s\n\ncreat ns0/a\n----\n", `x.txt:3: unknown command "creat"; did you mean create, bulk-create? ('cachelab scenarios --commands' lists them all)`},
		{"unknown command, two near", "# s\n\nreleas\n----\n", `x.txt:3: unknown command "releas"; did you mean release, release-cache? (`},
		{"unknown command, none near", "# s\n\nfrobnicate\n----\n", `x.txt:3: unknown command "frobnicate"; want one of: add-apiserver, add-handler,`},
		{"unknown argument", "# s\n\nstart stak=classic\n----\n", `x.txt:3: unknown argument "stak"; usage: start`},
		{"bad stack", "# s\n\nstart stack=modern\n----\n", "x.txt:3: stack=modern: want default or classic"},
		{"bad key", "# s\n\ncreate a\n----\n", `x.txt:3: object "a": want namespace/name`},
		{"bad duration", "# s\n\nadvance soon\n----\n", "x.txt:3: advance soon: want a positive duration"},
		{"bad status", "# s\n\nfail-next watch=200\n----\n", "x.txt:3: watch=200: want an HTTP error status from 400 to 599"},
		{"missing positional", "# s\n\ndelete\n----\n", "x.txt:3: delete takes 1 to 100 objects (ns/name); this line has 0; usage: delete"},
		{"stray word", "# s\n\nstart app in (a)\n----\n", `x.txt:3: start takes no positional arguments; this line has 3: "app" "in" "(a)" (a selector with spaces goes in parentheses`},
		{"flag with value", "# s\n\nadd-handler h slow=yes\n----\n", "x.txt:3: slow is a flag and takes no value"},
		{"flag twice", "# s\n\nadd-handler h slow slow\n----\n", `x.txt:3: flag "slow" given twice`},
		// Point 4: selectors are parsed by apimachinery when the file is.
		{"bad label selector", "# s\n\nstart labels=(!!!)\n----\n", "x.txt:3: labels=(!!!): invalid label selector:"},
		{"bad field selector", "# s\n\nstart fields=(metadata.name)\n----\n", "x.txt:3: fields=(metadata.name): invalid field selector:"},
		{"unsupported field", "# s\n\nstart fields=(spec.nodeName=n1)\n----\n", "x.txt:3: fields=(spec.nodeName=n1): field label not supported: spec.nodeName"},
		// Point 5: kube-apiserver's validators and words.
		{"upper-case name", "# s\n\ncreate ns0/Web\n----\n", `x.txt:3: object "ns0/Web": metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain`},
		{"dotted namespace", "# s\n\ncreate a.b/web\n----\n", `x.txt:3: object "a.b/web": metadata.namespace: Invalid value: "a.b": must not contain dots`},
		{"bad ns=", "# s\n\nbulk-create n=2 ns=Bulk\n----\n", `x.txt:3: ns=Bulk: metadata.namespace: Invalid value: "Bulk"`},
		{"bad label key", "# s\n\ncreate ns0/a labels=(-app=web)\n----\n", `x.txt:3: labels=(-app=web): metadata.labels: Invalid value: "-app": name part must consist of alphanumeric characters`},
		{"long label value", "# s\n\ncreate ns0/a labels=(app=" + strings.Repeat("v", 64) + ")\n----\n", "x.txt:3: labels=(app=vvvv"},
		{"label without value", "# s\n\ncreate ns0/a labels=(app)\n----\n", `x.txt:3: labels=(app): "app" is not key=value`},
		{"label twice", "# s\n\ncreate ns0/a labels=(app=a,app=b)\n----\n", `x.txt:3: labels=(app=a,app=b): label "app" is given twice`},
		{"bad handler name", "# s\n\nadd-handler h.1\n----\n", `x.txt:3: handler name "h.1": want 1 to 32 ASCII letters`},
		// Control characters never reach a terminal; limits are stated.
		{"escape", "# s\n\ncreate ns0/a\n----\netcd \x1b[2J\n", "x.txt:5: character U+001B (ESC) at column 6:"},
		{"not utf-8", "# s\n\ncreate ns0/\xff\n----\n", "x.txt:3: byte 0xff at column 12 is not UTF-8"},
		{"bidi", "# s\n\ncreate ns0/a\u202e\n----\n", "x.txt:3: character U+202E at column 13: bidirectional-text controls"},
		{"bulk without n", "# s\n\nbulk-create\n----\n", "x.txt:3: bulk-create needs n=<count>"},
		{"too many", "# s\n\nbulk-create n=100001\n----\n", "x.txt:3: n=100001: want a count from 1 to 100000"},
		{"too many in all", "# s\n\nbulk-create n=60000\n----\n\nbulk-create n=60000 ns=b\n----\n", "x.txt:6: bulk-create: this file would create 120000 objects in all; a scenario creates at most 100000"},
		{"too long", "# s\n\nadvance 2000000h\n----\n", "x.txt:3: advance 2000000h: want a positive duration up to"},
		// Issue 47, case 5: behind the watch cache, with informers
		// running, a long advance is a re-watch every 5 to 10 minutes:
		// one moves at most a day, and says so up front.
		{"long advance behind the cache", "# s\n# Server: watchcache\n\nstart\n----\n\nadvance 100000h\n----\n",
			"x.txt:7: advance 100000h: behind the watch cache, with informers running, one advance moves at most a day (24h): " +
				"each watch ends every 5 to 10 minutes of scenario time and both informers open it again, so a day is about " +
				"300 re-watches the run settles, and this would be about 1200000; advance a day at a time, or stop the informers first"},
		{"long advance in the default world", "# s\n\nstart\n----\n\nadvance 25h\n----\n", "x.txt:6: advance 25h: behind the watch cache"},
		{"long advance of bare queues", "# s\n\nstart-queue\n----\n\nadvance 25h\n----\n", "x.txt:6: advance 25h: behind the watch cache"},
		{"long advance of a factory's informer", "# s\n\nfactory f\n----\n\ninformer f\n----\n\nfactory-start f\n----\n\nadvance 48h\n----\n",
			"x.txt:12: advance 48h: behind the watch cache"},
		{"update without change", "# s\n\ncreate ns0/a\n----\n\nupdate ns0/a\n----\n", "x.txt:6: update ns0/a needs labels=, image= or times="},
		{"too many times", "# s\n\ncreate ns0/a\n----\n\nupdate ns0/a times=1001\n----\n", "x.txt:6: times=1001: want a count from 1 to 1000"},
		{"page without list", "# s\n\nfail-next watch=500 page=2\n----\n", "x.txt:3: fail-next page= says which page of a LIST fails, and needs list=<status>"},
		{"page zero", "# s\n\nfail-next list=500 page=0\n----\n", "x.txt:3: page=0: want a page number from 1 to 100"},
		{"cut after pages and events", "# s\n\ndisconnect after-events=1 after-pages=1\n----\n", "x.txt:3: disconnect takes after-events= or after-pages=, not both"},
		{"cut after no pages", "# s\n\ndisconnect after-pages=0\n----\n", "x.txt:3: after-pages=0: want a page number from 1 to 100"},
		{"close-watch between pages", "# s\n\nclose-watch after-pages=1\n----\n", `x.txt:3: unknown argument "after-pages"; usage: close-watch [after-events=<n>]`},
		{"raw object", "# s\n\nput-raw ns0/a {\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}\n----\n", "x.txt:3: put-raw {\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}: that decodes as an object"},
		{"raw without text", "# s\n\nput-raw ns0/a\n----\n", "x.txt:3: put-raw takes 2"},
		{"update raw", "# s\n\nput-raw ns0/a garbage\n----\n\nupdate ns0/a times=2\n----\n", "x.txt:6: update ns0/a: ns0/a holds the bytes put-raw stored at line 3"},
		{"delete-raw of an object", "# s\n\ncreate ns0/a\n----\n\ndelete-raw ns0/a\n----\n", "x.txt:6: delete-raw ns0/a: no put-raw before this line stored bytes there"},
		{"create over raw", "# s\n\nput-raw ns0/a garbage\n----\n\ncreate ns0/a\n----\n", `x.txt:6: create ns0/a: pods "a" already exists`},
		// Steps that cannot run where they stand fail at parse time.
		{"update missing", "# s\n\nupdate ns0/a image=v2\n----\n", `x.txt:3: update ns0/a: pods "a" not found: no create before this line makes it`},
		{"create twice", "# s\n\ncreate ns0/a\n----\n\ncreate ns0/a\n----\n", `x.txt:6: create ns0/a: pods "a" already exists: ns0/a was created at line 3`},
		{"start twice", "# s\n\nstart\n----\n\nstart\n----\n", "x.txt:6: start: the informers are already started"},
		{"two stacks", "# s\n\nstart stack=classic\n----\n\nstop\n----\n\nstart stack=default\n----\n", "x.txt:9: start stack=default: this run's stack is classic, fixed by the first start (line 3)"},
		{"pause informer", "# s\n\nstart\n----\n\npause\n----\n", "x.txt:6: pause works on a queue started with start-queue"},
		{"release unknown", "# s\n\nrelease h1\n----\n", `x.txt:3: release h1: no handler "h1" is registered here`},
		{"controller before start-queue", "# s\n\nstart-controller\n----\n\nstart-queue\n----\n", "x.txt:6: start-queue: the controllers of line 3 wait for informers to start with"},
		{"controller waiting, shown", "# s\n\nstart-controller\n----\n\nshow workqueue\n----\n", "x.txt:6: show workqueue: the controllers of line 3 start with the informers, and none are running yet"},
		{"controller on a queue", "# s\n\nstart-queue\n----\n\nstart-controller\n----\n", "x.txt:6: start-controller puts a controller on informers, and start-queue's bare queues have no handlers"},
		{"controller twice", "# s\n\nstart\n----\n\nstart-controller\n----\n\nstart-controller writes\n----\n", "x.txt:9: start-controller: the controllers of line 6 are still there"},
		{"controller after stop", "# s\n\nstart\n----\n\nstart-controller\n----\n\nstop\n----\n\nshow workqueue\n----\n", "x.txt:12: show workqueue shows the controllers' queues, and none run here"},
		{"workers zero", "# s\n\nstart\n----\n\nstart-controller workers=0\n----\n", "x.txt:6: workers=0: want a count from 1 to 64"},
		{"requeue without after", "# s\n\nreconcile-requeue ns0/a\n----\n", "x.txt:3: reconcile-requeue needs after=<duration>"},
		{"requeue bad after", "# s\n\nreconcile-requeue ns0/a after=-1s\n----\n", "x.txt:3: after=-1s: want a positive duration"},
		{"fail bad key", "# s\n\nreconcile-fail a\n----\n", `x.txt:3: object "a": want namespace/name`},
		{"stray separator", "# s\n\n----\n", `x.txt:3: "----" with no command before it`},
		{"unclosed double separator", "# s\n\nstart\n----\n----\nline\n", "x.txt:3: output opened with \"----\" twice"},
		{"bad show", "# s\n\nshow everything\n----\n", `x.txt:3: show "everything": want store, queue, handlers, requests, synced, metrics or workqueue`},
		{"no commands", "# just a comment\n", "x.txt:1: the scenario has no commands"},
		// A "# Covers:" line that is not a list of IDs, or a second one.
		{"not an ID", "# s\n# Covers: P1 watch-list\n\nstart\n----\n", `x.txt:2: the # Covers: line lists behaviour IDs from REFERENCE.md (a capital letter and one or two digits, as P1 or E12), separated by spaces, or the word none; "watch-list" is not one`},
		{"lower case", "# s\n# Covers: p1\n\nstart\n----\n", `x.txt:2: the # Covers: line lists behaviour IDs`},
		{"none among IDs", "# s\n# Covers: P1 none\n\nstart\n----\n", `x.txt:2: the # Covers: line lists behaviour IDs`},
		{"three digits", "# s\n# Covers: P100\n\nstart\n----\n", `x.txt:2: the # Covers: line lists behaviour IDs`},
		{"twice", "# s\n# Covers: P1\n# Covers: E6\n\nstart\n----\n", "x.txt:3: a second # Covers: line (the first is line 2): put every ID the scenario covers on one line"},
		// An "# Env:" line: the detector's variable, true or false, once.
		{"env without a value", "# s\n# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR\n\nstart\n----\n", `x.txt:2: # Env: sets an environment variable of the informers' process, as KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true; not "KUBE_WATCHLIST_INCONSISTENCY_DETECTOR"`},
		{"env another variable", "# s\n# Env: GODEBUG=x=1\n\nstart\n----\n", `x.txt:2: # Env: sets KUBE_WATCHLIST_INCONSISTENCY_DETECTOR (client-go's data consistency detector) and nothing else; not "GODEBUG"`},
		{"env not a boolean", "# s\n# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=yes\n\nstart\n----\n", `x.txt:2: # Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR="yes": want true or false`},
		{"env twice", "# s\n# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true\n# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true\n\nstart\n----\n", "x.txt:3: a second # Env: line (the first is line 2)"},
		// Explore hints: a placement that can stand in the scenario, and a story.
		{"hint without story", "# s\n# Explore: close-watch at=1\n\nstart\n----\n", "x.txt:2: an explore hint is # Explore: <fault> at=<gap>"},
		{"hint unknown fault", "# s\n# Explore: unplug at=1: x\n\nstart\n----\n", `x.txt:2: the explore hint's fault "unplug" is not one explore places`},
		{"hint past the end", "# s\n# Explore: compact at=3: x\n\nstart\n----\n", "x.txt:2: the explore hint's at=3: want a gap from 1 (before step 1) to 2 (after the last step)"},
		{"hint without heal", "# s\n# Explore: disconnect at=1: x\n\nstart\n----\n", "x.txt:2: disconnect needs healing (reconnect): want heal= a gap after at=1, up to 2 (the end)"},
		{"hint heal not needed", "# s\n# Explore: compact at=1 heal=2: x\n\nstart\n----\n", "x.txt:2: compact needs no healing: drop heal="},
		{"hint cut of a compact", "# s\n# Explore: compact at=1 after-events=1: x\n\nstart\n----\n", "x.txt:2: after-events= puts a cut inside step at=: only disconnect or close-watch"},
		{"hint bad number", "# s\n# Explore: compact at=one: x\n\nstart\n----\n", "x.txt:2: the explore hint's at=one: want a positive number"},
		{"hint unknown key", "# s\n# Explore: compact at=1 step=2: x\n\nstart\n----\n", `x.txt:2: the explore hint says "step=2"; it takes at=, heal=, after-events= and after-pages=`},
		{"hint pages of a close-watch", "# s\n# Explore: close-watch at=1 after-pages=1: x\n\nstart\n----\n", "x.txt:2: after-pages= puts a cut between a LIST's pages inside step at=: only disconnect"},
		{"hint two cuts", "# s\n# Explore: disconnect at=1 heal=2 after-events=1 after-pages=1: x\n\nstart\n----\n", "x.txt:2: the explore hint says after-events= and after-pages=: one cut per placement"},
		// Resources beyond pods, finalizers and owners (I8, E18, E19).
		{"unknown resource", "# s\n# Server: etcd\n\ncreate configmap ns0/a\n----\n", `x.txt:4: create configmap: "configmap" is not an object (ns/name) or, before the objects, a resource; did you mean configmaps?`},
		{"unknown informer resource", "# s\n# Server: etcd\n\nfactory f\n----\n\ninformer f nodes\n----\n", `x.txt:7: informer nodes: "nodes" is not a resource; the resources are pods, configmaps, secrets, deployments`},
		{"data of a pod", "# s\n# Server: etcd\n\ncreate ns0/a data=(k=v)\n----\n", `x.txt:4: create pods: data= is not a field of pods; pods has labels=, image=`},
		{"image of a configmap", "# s\n# Server: etcd\n\ncreate configmaps ns0/a\n----\n\nupdate configmaps ns0/a image=x\n----\n", `x.txt:7: update configmaps: image= is not a field of configmaps`},
		{"bad data key", "# s\n# Server: etcd\n\ncreate configmaps ns0/a data=(a/b=v)\n----\n", `x.txt:4: data=(a/b=v): key "a/b": a valid config key must consist of alphanumeric characters`},
		{"replicas out of range", "# s\n# Server: etcd\n\ncreate deployments ns0/a replicas=-1\n----\n", `x.txt:4: replicas=-1: want a count from 0 to 1000`},
		{"resource object missing", "# s\n# Server: etcd\n\ncreate ns0/a\n----\n\ndelete configmaps ns0/a\n----\n", `x.txt:7: delete configmaps ns0/a: configmaps "a" not found: no create before this line makes it`},
		{"resource object twice", "# s\n# Server: etcd\n\ncreate secrets ns0/a\n----\n\ncreate secrets ns0/a\n----\n", `x.txt:7: create secrets ns0/a: secrets "a" already exists: ns0/a was created at line 4`},
		{"informer of a resource not made", "# s\n# Server: etcd\n\nfactory f\n----\n\ninformer f\n----\n\nadd-handler h informer=f/configmaps\n----\n", `x.txt:10: add-handler h informer=f/configmaps: factory f has not made its configmaps informer by here (informer f configmaps asks for it)`},
		{"informer of an unknown resource", "# s\n\nadd-handler h informer=f/nodes\n----\n", `x.txt:3: informer=f/nodes: "nodes" is not a resource`},
		{"writing controller on configmaps", "# s\n# Server: etcd\n\nfactory f\n----\n\ninformer f configmaps\n----\n\nstart-controller writes informer=f/configmaps\n----\n", `x.txt:10: start-controller writes informer=f/configmaps: the controller that writes records a pod's spec.image`},
		{"start of no resource", "# s\n\nstart informer=nodes\n----\n", `x.txt:3: informer=nodes: want a resource: pods, configmaps, secrets, deployments`},
		{"writing controller, then start of configmaps", "# s\n\nstart-controller writes\n----\n\nstart informer=configmaps\n----\n", `x.txt:6: start informer=configmaps: the controller of line 3 writes, and records a pod's spec.image; this informer holds configmaps`},
		{"start of secrets, then a writing controller", "# s\n\nstart informer=secrets\n----\n\nstart-controller writes\n----\n", `x.txt:6: start-controller writes: the controller that writes records a pod's spec.image, and start's informer holds secrets`},
		{"bad finalizer", "# s\n# Server: etcd\n\ncreate ns0/a finalizers=(a/b/c)\n----\n", `x.txt:4: finalizers=(a/b/c): metadata.finalizers: Invalid value: "a/b/c"`},
		{"finalizer twice", "# s\n# Server: etcd\n\ncreate ns0/a finalizers=(x,x)\n----\n", `x.txt:4: finalizers=(x,x): "x" is given twice`},
		{"new finalizer while deleting", "# s\n# Server: etcd\n\ncreate ns0/a finalizers=(x)\n----\n\ndelete ns0/a\n----\n\nupdate ns0/a finalizers=(x,y)\n----\n",
			`x.txt:10: update ns0/a: ns0/a is being deleted (deleted before this line, held by its finalizers): no new finalizers can be added if the object is being deleted, found new finalizers []string{"y"}`},
		{"finalized, then updated", "# s\n# Server: etcd\n\ncreate ns0/a finalizers=(x)\n----\n\ndelete ns0/a\n----\n\nupdate ns0/a finalizers=()\n----\n\nupdate ns0/a labels=()\n----\n", `x.txt:13: update ns0/a: pods "a" not found`},
		{"owner missing", "# s\n# Server: etcd\n\ncreate configmaps ns0/a owner=deployments/ns0/web\n----\n", `x.txt:4: create configmaps ns0/a: owner deployments ns0/web: no create before this line makes it`},
		{"owner elsewhere", "# s\n# Server: etcd\n\ncreate deployments ns1/web\n----\n\ncreate configmaps ns0/a owner=deployments/ns1/web\n----\n", `x.txt:7: create ns0/a owner=deployments/ns1/web: an owner is in its dependent's namespace, and ns0/a is in ns0`},
		{"owner itself", "# s\n# Server: etcd\n\ncreate configmaps ns0/a owner=configmaps/ns0/a\n----\n", `x.txt:4: create ns0/a owner=configmaps/ns0/a: an object does not own itself`},
		{"owner malformed", "# s\n# Server: etcd\n\ncreate ns0/a owner=web\n----\n", `x.txt:4: owner=web: want <resource>/<namespace>/<name>`},
		{"collected, then updated", "# s\n# Server: etcd\n\ncreate deployments ns0/web\n----\n\ncreate configmaps ns0/a owner=deployments/ns0/web\n----\n\ndelete deployments ns0/web\n----\n\ngc\n----\n\nupdate configmaps ns0/a data=()\n----\n", `x.txt:16: update configmaps ns0/a: configmaps "a" not found`},
		// A command right after an empty block, with no blank line, would
		// be read as that step's expected output.
		{"swallowed command", "# s\n\nstart\n----\ncreate ns0/a\n----\n", "x.txt:5: this looks like a command, not output: the expected output of the step at line 3"},
		{"swallowed after output", "# s\n\nstart\n----\nsim              started\nstop\n----\n", "x.txt:6: this looks like a command, not output"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.txt", []byte(c.src))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %q\nwant %q...", err, c.want)
			}
		})
	}
}

func TestParseLayout(t *testing.T) {
	src := "# Title line.\n# Covers: P1 D4\n\ncreate ns0/a \\\n  labels=(app=web)\n----\netcd x\n\nshow store\n----\n----\na\n\nb\n----\n----\n"
	sc, err := Parse("dir/name.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "name" || sc.Title != "Title line." || strings.Join(sc.IDs, ",") != "P1,D4" {
		t.Errorf("got name %q title %q ids %v", sc.Name, sc.Title, sc.IDs)
	}
	if len(sc.Steps) != 2 {
		t.Fatalf("got %d steps, want 2", len(sc.Steps))
	}
	if st := sc.Steps[0]; st.Line != 4 || st.Text != "create ns0/a labels=(app=web)" || st.Expected != "etcd x\n" {
		t.Errorf("step 1: got %+v", st)
	}
	if st := sc.Steps[1]; st.Expected != "a\n\nb\n" {
		t.Errorf("step 2 expected: got %q", st.Expected)
	}
}

// FuzzParse: no input panics the parser, and what it accepts, it accepts
// again from its own rendering.
func FuzzParse(f *testing.F) {
	// The catalog's files (package sim embeds them from ../scenarios).
	files, _ := filepath.Glob("../scenarios/*.txt")
	if len(files) == 0 {
		f.Fatal("no built-in scenarios in ../scenarios")
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("# x\n\ncreate ns/a labels=(a=b,c\n----\n"))
	f.Add([]byte("# x\n\nstart labels=((\n----\n----\n"))
	f.Add([]byte("# x\n# Server: etcd\n\ncreate deployments ns0/d\n----\n\ncreate configmaps ns0/a owner=deployments/ns0/d finalizers=(x.io/y) data=(k=v)\n----\n\ndelete deployments ns0/d\n----\n\ngc\n----\n\nupdate configmaps ns0/a finalizers=()\n----\n"))
	f.Add([]byte("# x\n\nstart informer=secrets\n----\n\nfactory f\n----\n\ninformer f configmaps\n----\n\nadd-handler h informer=f/configmaps\n----\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		sc, err := Parse("fuzz.txt", src)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			return
		}
		var b strings.Builder
		b.WriteString("# " + strings.ReplaceAll(sc.About, "\n", "\n# ") + "\n")
		for _, st := range sc.Steps {
			b.WriteString("\n" + st.Text + "\n" + st.Input + "----\n")
		}
		again, err := Parse("again.txt", []byte(b.String()))
		if err != nil {
			t.Fatalf("accepted %q but not its rendering %q: %v", src, b.String(), err)
		}
		if len(again.Steps) != len(sc.Steps) {
			t.Fatalf("rendering changed the step count: %d vs %d", len(again.Steps), len(sc.Steps))
		}
	})
}

// Rewriting a file with the outputs it already expects changes nothing,
// for every built-in and regression scenario; and a rewrite with new
// outputs puts each where its step's block was, in datadriven's layout.
func TestRewrite(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/*.txt")
	more, _ := filepath.Glob("../testdata/regress/*.txt")
	for _, file := range append(files, more...) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Parse(file, src)
		if err != nil {
			t.Fatal(err)
		}
		var outs []string
		for _, st := range sc.Steps {
			outs = append(outs, st.Expected)
		}
		got, err := sc.Rewrite(src, outs)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(src) {
			t.Errorf("%s: rewriting with its own expectations changed it:\n%s", file, cmp.Diff(string(src), string(got)))
		}
	}
	src := "# s\n\n# a comment stays\nstart\n----\n\nshow store\n----\nold\n\nstop\n----\n"
	sc, err := Parse("x.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, err := sc.Rewrite([]byte(src), []string{"a\nb\n", "", "with\n\nblank\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# s\n\n# a comment stays\nstart\n----\na\nb\n\nshow store\n----\n\nstop\n----\n----\nwith\n\nblank\n----\n----\n"
	if string(got) != want {
		t.Errorf("rewrite:\n%s", cmp.Diff(want, string(got)))
	}
	again, err := Parse("x.txt", got)
	if err != nil || again.Steps[2].Expected != "with\n\nblank\n" || again.Steps[0].Expected != "a\nb\n" {
		t.Errorf("the rewritten file reads back as %+v, %v", again, err)
	}
}

// bulk-create's names sort in creation order at any count (issue 15: at
// 10,000 and more, obj-%04d did not).
func TestBulkNamesSort(t *testing.T) {
	for _, n := range []int{1, 9999, 10000, 100000} {
		prev := ""
		for _, i := range []int{1, 2, 9, 10, 999, 1000, 9999, 10000, 99999, 100000} {
			if i > n {
				break
			}
			name := BulkName("b", i, n)
			if name <= prev {
				t.Errorf("n=%d: %s sorts before %s", n, name, prev)
			}
			prev = name
		}
	}
	if got := BulkName("b", 1, 20); got != "b/obj-0001" {
		t.Errorf("BulkName(b, 1, 20) = %s, want b/obj-0001 (the names of small bulks are as they were)", got)
	}
}

// A command's help line says the default of any argument it may leave
// out: bulk-create's namespace (issue 47, case 21), as etcd-cluster's
// says its 3 members. An argument's description saying "(default X)"
// must have X in the help line too, which is all --commands shows.
func TestHelpSaysDefaults(t *testing.T) {
	byName := map[string]CommandDoc{}
	for _, d := range CommandDocs() {
		byName[d.Name] = d
	}
	if help := byName["bulk-create"].Help; !strings.Contains(help, "namespace "+BulkNamespace) {
		t.Errorf("bulk-create's help %q does not say its default namespace, %s", help, BulkNamespace)
	}
	for name, c := range commands {
		for key, desc := range c.values {
			_, rest, ok := strings.Cut(desc, "(default ")
			if !ok {
				continue
			}
			def, _, _ := strings.Cut(rest, ")")
			if !strings.Contains(c.help, def) {
				t.Errorf("%s: %s= defaults to %s, which its help %q does not say", name, key, def, c.help)
			}
		}
	}
}

// Scenario time is cheap at any length where nothing waits on the way:
// with no informer running, after stop, in the etcd world (a watch's
// deadline passes in one move there), or a day at a time.
func TestLongAdvancesWhereCheap(t *testing.T) {
	for name, src := range map[string]string{
		"no informers":   "# s\n# Server: watchcache\n\ncreate ns0/a\n----\n\nadvance 100000h\n----\n",
		"after stop":     "# s\n# Server: watchcache\n\nstart\n----\n\nstop\n----\n\nadvance 100000h\n----\n",
		"the etcd world": "# s\n# Server: etcd\n\nstart\n----\n\nadvance 100000h\n----\n",
		"a day":          "# s\n# Server: watchcache\n\nstart\n----\n\nadvance 24h\n----\n\nadvance 24h\n----\n",
	} {
		if _, err := Parse("x.txt", []byte(src)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
