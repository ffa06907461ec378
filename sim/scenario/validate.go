package scenario

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// What a scenario file may say. A run takes seconds to minutes over a
// real etcd; a mistake found only while it runs costs that wait, ends the
// run halfway with an error that is not about informers, or worse, runs
// something other than what the file says and reports a divergence that
// is not there. So Parse refuses, with file:line, everything a run would
// refuse or misread:
//
//   - text that would act on the terminal instead of showing (checkText);
//   - each argument on its own: names, labels and selectors as
//     kube-apiserver checks them, with its own validators and words
//     (checkValue, checkPositional);
//   - arguments that only make sense together (checkTogether);
//   - steps that depend on earlier ones (dryrun.go): an object that does
//     not exist yet, a handler never added, a queue that was never started.

// Limits. Each keeps a run finite and its output readable; none is one a
// scenario written by hand comes near.
const (
	// maxCommandLine bounds a command line (continuations joined), so an
	// error that quotes it stays readable.
	maxCommandLine = 8 << 10
	// maxClock bounds scenario time, per duration and in all: the trace
	// prints the time since the start as a Go duration, which stops at
	// 292 years, and object timestamps cannot pass the year 9999.
	maxClock = 100 * 365 * 24 * time.Hour
	// MaxInformedAdvance bounds one advance behind the watch cache while
	// informers run (InformedAdvance).
	MaxInformedAdvance = 24 * time.Hour
	// maxObjects bounds the objects a file creates in all: each is its own
	// etcd write, and both informers hold every one.
	maxObjects = 100000
	// maxTimes bounds update's times=: each update is its own etcd write
	// and its own trace line on every layer.
	maxTimes = 1000
	// maxWorkers bounds start-controller's workers=: keys reconciled in
	// one round.
	maxWorkers = 64
	// maxPage bounds fail-next's page=: a page is 500 objects, so page
	// 100 is past any list maxObjects allows.
	maxPage = 100
	// maxRaw bounds put-raw's text, which the trace prints.
	maxRaw = 256
	// MaxAPIServers is how many kube-apiservers a scenario may run: the
	// first, and one add-apiserver starts.
	MaxAPIServers = 2
	// maxReplicas bounds a deployment's replicas=: no controller makes
	// its pods here, so the number is only data.
	maxReplicas = 1000
	// MaxFactories bounds a scenario's factories: each makes an informer
	// on each side, and the runner settles a fixed number of sides
	// (package sim, maxSides).
	MaxFactories = 3
	// MaxInformers bounds a scenario's informers: start's, and those its
	// factories make (each settles on every step).
	MaxInformers = 8
)

// stacks are the informer stacks start's stack= may name, the default
// first: the words package informer's ParseStack reads. They are spelled
// here again, not taken from there, because a scenario is data and does
// not depend on the informers' code; TestStacksAreInformers holds the
// two to the same words.
var stacks = []string{"default", "classic"}

// checkValue checks one key=value argument of the command called name.
// vs are its values as datadriven split them at top-level commas; the
// runner reads them joined with "," (Args.Value), and so does this.
func checkValue(name, k string, vs []string, a Args) error {
	v := strings.Join(vs, ",")
	bad := func(want string) error { return fmt.Errorf("%s=%s: want %s", k, v, want) }
	switch k {
	case "members":
		return checkMembers(v)
	case "resync":
		// 0 means no resync; client-go raises a handler's period below
		// 1s to 1s, and cachelab does the same, so small ones are fine.
		if d, err := time.ParseDuration(v); err != nil || d < 0 || d > maxClock {
			return bad(fmt.Sprintf("a duration from 0 (none) to %v, such as 30s", maxClock))
		}
	case "stack":
		if !slices.Contains(stacks, v) {
			return bad("default or classic")
		}
	case "n":
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxObjects {
			return bad(fmt.Sprintf("a count from 1 to %d", maxObjects))
		}
	case "after-events":
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxObjects {
			return bad(fmt.Sprintf("a count of watch events from 1 to %d", maxObjects))
		}
	case "after-pages":
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxPage {
			return bad(fmt.Sprintf("a page number from 1 to %d (1 is the request without a continue token)", maxPage))
		}
	case "times":
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxTimes {
			return bad(fmt.Sprintf("a count from 1 to %d", maxTimes))
		}
	case "workers":
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxWorkers {
			return bad(fmt.Sprintf("a count from 1 to %d", maxWorkers))
		}
	case "after", "requeue-after":
		if d, err := time.ParseDuration(v); err != nil || d <= 0 || d > maxClock {
			return bad(fmt.Sprintf("a positive duration up to %v, such as 30s", maxClock))
		}
	case "page":
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxPage {
			return bad(fmt.Sprintf("a page number from 1 to %d (1 is the request without a continue token)", maxPage))
		}
	case "list", "watch":
		// The trace names the status, so it must have a name.
		if n, err := strconv.Atoi(v); err != nil || n < 400 || n > 599 || http.StatusText(n) == "" {
			return bad("an HTTP error status from 400 to 599 that has a name, such as 410, 429 or 500")
		}
	case "transform":
		if v != "strip-managed-fields" {
			return bad("strip-managed-fields")
		}
	case "watch-list":
		if v != "on" && v != "off" {
			return bad("on or off")
		}
	case "image":
		return checkImage(vs)
	case "ns":
		return checkMeta(metav1.ObjectMeta{Namespace: v, Name: "obj-0001"}, "ns="+v)
	case "namespace":
		return checkMeta(metav1.ObjectMeta{Namespace: v, Name: "obj-0001"}, "namespace="+v)
	case "name":
		return checkWord("controller", v)
	case "informer":
		if name == "start" || name == "start-queue" {
			if !a.isResource(v) {
				return bad("a resource: " + a.resources())
			}
			return nil
		}
		return checkInformerRef(v, a)
	case "data":
		_, err := parseData(v)
		return err
	case "finalizers":
		_, err := parseFinalizers(v)
		return err
	case "owner":
		_, _, _, err := parseOwner(v, a)
		return err
	case "spec":
		_, err := parseSpec(v)
		return err
	case "replicas":
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > maxReplicas {
			return bad(fmt.Sprintf("a count from 0 to %d", maxReplicas))
		}
	case "labels":
		if name == "start" || name == "start-queue" || name == "factory" {
			return checkLabelSelector(v)
		}
		_, err := parseLabels(v)
		return err
	case "fields":
		return checkFieldSelector(v)
	}
	return nil
}

// checkPositional checks one positional argument of the command called
// name.
func checkPositional(name, p string, a Args) error {
	switch name {
	case "advance":
		if d, err := time.ParseDuration(p); err != nil || d <= 0 || d > maxClock {
			return fmt.Errorf("advance %s: want a positive duration up to %v, such as 30s", p, maxClock)
		}
	case "show":
		switch p {
		case "store", "queue", "handlers", "synced", "requests", "metrics", "workqueue":
		default:
			return fmt.Errorf("show %q: want store, queue, handlers, requests, synced, metrics or workqueue", p)
		}
	case "create", "update", "delete":
		if c, ok := a.Custom(); ok && !c.Namespaced {
			return checkClusterKey(a.Resource, p)
		}
		return checkKey(p)
	case "delete-raw", "reconcile-fail", "reconcile-requeue", "watch-list-lose":
		return checkKey(p)
	case "add-handler", "remove-handler", "release":
		return checkHandlerName(p)
	case "factory", "informer", "factory-start", "factory-wait":
		return checkWord("factory", p)
	case "etcd-snapshot", "etcd-restore":
		return checkSnapshotName(name, p)
	case "etcd-stop-member", "etcd-start-member", "etcd-move-leader":
		return checkMemberName(name, p)
	}
	return nil
}

// checkTogether checks what one argument alone cannot say.
func checkTogether(name string, a Args) error {
	_, hasLabels := a.Values["labels"]
	_, hasImage := a.Values["image"]
	_, hasList := a.Values["list"]
	_, hasWatch := a.Values["watch"]
	switch {
	case name == "bulk-create" && a.Values["n"] == nil:
		return fmt.Errorf("bulk-create needs n=<count>, how many objects to create; %s", commands[name].want())
	case a.Resource != "":
		if err := checkResourceValues(name, a); err != nil {
			return err
		}
		if err := checkOwner(name, a); err != nil {
			return err
		}
		if name == "update" && !hasLabels && !hasImage && a.Values["times"] == nil && a.Values["data"] == nil && a.Values["replicas"] == nil && a.Values["finalizers"] == nil && a.Values["spec"] == nil {
			// kube-apiserver writes nothing for an update that changes
			// nothing; a line that asks for no change is a slip.
			return fmt.Errorf("update %s needs %s or times=, the change to make; %s", ObjectRef(a.Resource, a.Pos[0]), changesOf(a.Resource, a.fields()), commands[name].want())
		}
	case name == "reconcile-requeue" && a.Values["after"] == nil:
		return fmt.Errorf("reconcile-requeue needs after=<duration>, the delay the reconcile asks for; %s", commands[name].want())
	case name == "disconnect" && a.Values["after-events"] != nil && a.Values["after-pages"] != nil:
		return fmt.Errorf("disconnect takes after-events= or after-pages=, not both: one cut per step; %s", commands[name].want())
	case name == "fail-next" && a.Values["page"] != nil && !hasList:
		return fmt.Errorf("fail-next page= says which page of a LIST fails, and needs list=<status>; %s", commands[name].want())
	case name == "put-raw":
		if err := checkKey(a.Pos[0]); err != nil {
			return err
		}
		return checkRaw(a.Pos[1])
	case name == "server" && a.Values["watch-list"] == nil:
		return fmt.Errorf("server needs watch-list=on or watch-list=off; %s", commands[name].want())
	case name == "fail-next" && !hasList && !hasWatch:
		return fmt.Errorf("fail-next needs list=<status>, watch=<status> or both; %s", commands[name].want())
	}
	return nil
}

// resourceValues are the values a write may give each resource's
// objects beyond labels=: what its objects have.
var resourceValues = map[string][]string{
	"pods":        {"image"},
	"configmaps":  {"data"},
	"secrets":     {"data"},
	"deployments": {"image", "replicas"},
}

// checkResourceValues refuses a value the step's resource has no field
// for: a pod has no data, a configmap no image.
func checkResourceValues(name string, a Args) error {
	has := a.fields()
	for _, k := range []string{"image", "data", "replicas", "spec"} {
		if _, ok := a.Values[k]; ok && !slices.Contains(has, k) {
			return fmt.Errorf("%s %s: %s= is not a field of %s; %s has %s", name, a.Resource, k, a.Resource, a.Resource, changesOf(a.Resource, has))
		}
	}
	return nil
}

// parseFinalizers reads finalizers=: names separated by commas, each a
// qualified name as kube-apiserver checks one (ValidateFinalizerName),
// none twice; "" for none.
func parseFinalizers(v string) ([]string, error) {
	if v == "" {
		return []string{}, nil
	}
	var out []string
	for _, f := range strings.Split(v, ",") {
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("finalizers=(%s): %q is given twice", v, f)
		}
		if errs := apivalidation.ValidateFinalizerName(f, field.NewPath("metadata", "finalizers")); len(errs) > 0 {
			return nil, fmt.Errorf("finalizers=(%s): %v", v, errs.ToAggregate())
		}
		out = append(out, f)
	}
	return out, nil
}

// parseOwner reads owner=<resource>/<ns>/<name>.
func parseOwner(v string, a Args) (resource, ns, name string, err error) {
	parts := strings.Split(v, "/")
	if len(parts) != 3 {
		return "", "", "", fmt.Errorf("owner=%s: want <resource>/<namespace>/<name>, such as deployments/ns0/web", v)
	}
	if !a.isResource(parts[0]) {
		return "", "", "", fmt.Errorf("owner=%s: %q is not a resource; the resources are %s", v, parts[0], a.resources())
	}
	if c, ok := a.customByName(parts[0]); ok {
		parts[0] = c.Plural // foos.example.com is foos
	}
	if err := checkKey(parts[1] + "/" + parts[2]); err != nil {
		return "", "", "", fmt.Errorf("owner=%s: %v", v, err)
	}
	return parts[0], parts[1], parts[2], nil
}

// checkOwner wants a create's owner in the namespace of each object it
// makes, and not one of them: a namespaced object's owner is in its own
// namespace (the garbage collector takes any other for one that is
// absent, and deletes the object).
func checkOwner(name string, a Args) error {
	v, ok := a.Value("owner")
	if !ok {
		return nil
	}
	res, ns, owner, _ := parseOwner(v, a)
	for _, r := range []string{a.Resource, res} {
		if c, ok := a.customByName(r); ok && !c.Namespaced {
			return fmt.Errorf("%s %s owner=%s: %s is cluster-scoped, and owners of or by a cluster-scoped object are not modelled, so far", name, strings.Join(a.Pos, " "), v, r)
		}
	}
	for _, k := range a.Pos {
		kns, kname, _ := strings.Cut(k, "/")
		switch {
		case kns != ns:
			return fmt.Errorf("%s %s owner=%s: an owner is in its dependent's namespace, and %s is in %s", name, k, v, k, kns)
		case res == a.Resource && kname == owner:
			return fmt.Errorf("%s %s owner=%s: an object does not own itself", name, k, v)
		}
	}
	return nil
}

// changesOf says what an update of resource's objects may change.
func changesOf(resource string, has []string) string {
	out := "labels="
	for _, k := range has {
		out += ", " + k + "="
	}
	return out
}

// parseSpec reads spec=: k=v pairs, each key a field name as JSON and
// the schema write them (letters, digits and _, not first a digit).
func parseSpec(v string) ([]labelPair, error) {
	return parsePairs("spec", v, "field", func(k, _ string) error {
		if !fieldName.MatchString(k) {
			return fmt.Errorf("spec=(%s): %q is not a field name (letters, digits and _, starting with a letter)", v, k)
		}
		return nil
	})
}

var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseData reads data=: k=v pairs separated by commas, each key one a
// ConfigMap or Secret may have (kube-apiserver's IsConfigMapKey), in the
// order written so the first bad one is named; "" for none.
func parseData(v string) ([]labelPair, error) {
	return parsePairs("data", v, "key", func(k, _ string) error {
		if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
			return fmt.Errorf("data=(%s): key %q: %s", v, k, strings.Join(errs, "; "))
		}
		return nil
	})
}

// checkKey checks ns/name as kube-apiserver checks a pod's metadata: the
// name a DNS-1123 subdomain, the namespace a DNS-1123 label. An update or
// delete of a key that fails is refused too: no such object can exist.
func checkKey(key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || strings.Contains(name, "/") {
		return fmt.Errorf("object %q: want namespace/name", key)
	}
	return checkMeta(metav1.ObjectMeta{Namespace: ns, Name: name}, "object "+strconv.Quote(key))
}

// checkClusterKey checks the name of a cluster-scoped object of
// resource: a DNS-1123 subdomain, and no namespace.
func checkClusterKey(resource, key string) error {
	if strings.Contains(key, "/") {
		return fmt.Errorf("object %q: %s is cluster-scoped; name its objects without a namespace", key, resource)
	}
	m := metav1.ObjectMeta{Name: key}
	if errs := apivalidation.ValidateObjectMeta(&m, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")); len(errs) > 0 {
		return fmt.Errorf("object %q: %v", key, errs.ToAggregate())
	}
	return nil
}

// checkMeta runs apimachinery's ValidateObjectMeta, the check
// kube-apiserver makes of every pod it creates, and returns its errors as
// kube-apiserver prints them (field.ErrorList's aggregate).
func checkMeta(m metav1.ObjectMeta, what string) error {
	errs := apivalidation.ValidateObjectMeta(&m, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if len(errs) > 0 {
		return fmt.Errorf("%s: %v", what, errs.ToAggregate())
	}
	return nil
}

// labelPair is one label as written.
type labelPair struct{ key, value string }

// parseLabels reads the labels of create, update and bulk-create: "" for
// none, else k=v pairs separated by commas (which neither a label key nor
// a value can hold), each checked as kube-apiserver checks
// metadata.labels, in the order written so the first bad one is named.
func parseLabels(v string) ([]labelPair, error) {
	return parsePairs("labels", v, "label", func(k, val string) error {
		if errs := metav1validation.ValidateLabels(map[string]string{k: val}, field.NewPath("metadata", "labels")); len(errs) > 0 {
			return fmt.Errorf("labels=(%s): %v", v, errs.ToAggregate())
		}
		return nil
	})
}

// parsePairs reads arg=(k=v,k2=v2): "" for none, else pairs separated by
// commas, none twice (a key is a noun's), each checked by check, in the
// order written so the first bad one is named.
func parsePairs(arg, v, noun string, check func(k, val string) error) ([]labelPair, error) {
	if v == "" {
		return nil, nil
	}
	var out []labelPair
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%s=(%s): %q is not key=value; want %s as (k=v,k2=v2), or () for none", arg, v, kv, arg)
		}
		if slices.ContainsFunc(out, func(p labelPair) bool { return p.key == k }) {
			return nil, fmt.Errorf("%s=(%s): %s %q is given twice", arg, v, noun, k)
		}
		if err := check(k, val); err != nil {
			return nil, err
		}
		out = append(out, labelPair{k, val})
	}
	return out, nil
}

// checkLabelSelector parses a label selector with labels.Parse, the
// parser kube-apiserver and the ListerWatcher use, so set-based ones
// ("app in (a,b)", "!app", "env notin (x)") work as they do there.
func checkLabelSelector(s string) error {
	if _, err := labels.Parse(s); err != nil {
		return fmt.Errorf("labels=(%s): invalid label selector: %v", s, err)
	}
	return nil
}

// supportedFields are the field labels the ListerWatcher (and
// kube-apiserver, for every resource) can select on; see
// listwatch/filter.go.
var supportedFields = map[string]bool{"metadata.name": true, "metadata.namespace": true}

// checkFieldSelector parses a field selector with fields.ParseSelector and
// refuses fields the ListerWatcher would refuse, in its words.
func checkFieldSelector(s string) error {
	fs, err := fields.ParseSelector(s)
	if err != nil {
		return fmt.Errorf("fields=(%s): invalid field selector: %v", s, err)
	}
	for _, r := range fs.Requirements() {
		if !supportedFields[r.Field] {
			return fmt.Errorf("fields=(%s): field label not supported: %s (want metadata.name or metadata.namespace)", s, r.Field)
		}
	}
	return nil
}

// checkImage wants one image reference. kube-apiserver refuses only
// surrounding whitespace, but a runtime could pull nothing with a space or
// a comma in it, and image=(a,b) would otherwise quietly become "a,b".
func checkImage(vs []string) error {
	v := strings.Join(vs, ",")
	ok := len(vs) == 1 && v != "" && !strings.ContainsFunc(v, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-/:@", r)))
	})
	if !ok {
		return fmt.Errorf("image=%s: want one image reference such as nginx:1.27 (ASCII letters, digits and . _ - / : @)", v)
	}
	return nil
}

// checkHandlerName keeps a handler's name one short word: it labels trace
// lines (handler/<name>) and keys the runner's per-handler counts, where
// "informer" and "pops" already stand for the informer and its queue.
func checkHandlerName(name string) error {
	if name == "informer" || name == "pops" {
		return fmt.Errorf("handler name %q is taken: the trace uses it for the informer's own HasSynced and pop count", name)
	}
	ok := len(name) <= 32 && !strings.ContainsFunc(name, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'))
	})
	if !ok {
		return fmt.Errorf("handler name %q: want 1 to 32 ASCII letters, digits, '-' or '_'", name)
	}
	return nil
}

// checkWord keeps a factory's or a controller's name one short word: it
// labels trace lines.
func checkWord(what, name string) error {
	ok := name != "" && len(name) <= 32 && !strings.ContainsFunc(name, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'))
	})
	if !ok {
		return fmt.Errorf("%s name %q: want 1 to 32 ASCII letters, digits, '-' or '_'", what, name)
	}
	return nil
}

// checkSnapshotName keeps a snapshot's name one short word: it names a
// directory of the run's etcd and labels world lines.
func checkSnapshotName(cmd, name string) error {
	ok := len(name) <= 32 && !strings.ContainsFunc(name, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'))
	})
	if !ok {
		return fmt.Errorf("%s %s: want a snapshot name of 1 to 32 ASCII letters, digits, '-' or '_'", cmd, name)
	}
	return nil
}

// checkRaw checks put-raw's text: one word of printable ASCII (the trace
// prints it quoted), and not an object the ListerWatcher could decode,
// which would make the key a live object the dry run does not know of.
func checkRaw(text string) error {
	if len(text) > maxRaw || strings.ContainsFunc(text, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return fmt.Errorf("put-raw %q: want 1 to %d printable ASCII characters without spaces", text, maxRaw)
	}
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(text), &obj) == nil && obj.Kind != "" && obj.Metadata.Name != "" {
		return fmt.Errorf("put-raw %s: that decodes as an object; put-raw is for bytes kube-apiserver cannot decode (create and update write objects)", text)
	}
	return nil
}

// InformedAdvance says why an advance of d (what, as written) cannot run
// in world server with informers running (informed), or nil. Behind the
// watch cache, scenario time passes second by second while informers
// run, as it does for a real kube-apiserver: the cache sends bookmarks
// on a timer of its own, and every watch ends at its deadline, 5 to 10
// minutes after it began, and is opened again by both informers, each a
// real request the run settles. A day is about 300 of them and some
// seconds of CPU (4 s in process, 7 s over HTTPS, on a laptop's core);
// a year would be hours. So one advance there moves at most a day while
// informers run; longer spans are several advances, each a step of its
// own. In the etcd world a watch's deadline passes in one move of the
// clock, and without informers nothing waits on the way: any length up
// to maxClock is cheap.
func InformedAdvance(what string, d time.Duration, informed bool, server string) error {
	if !informed || server == ServerEtcd || d <= MaxInformedAdvance {
		return nil
	}
	return fmt.Errorf("%s: behind the watch cache, with informers running, one advance moves at most a day (24h): each watch ends "+
		"every 5 to 10 minutes of scenario time and both informers open it again, so a day is about 300 re-watches the run "+
		"settles, and this would be about %d; advance a day at a time, or stop the informers first",
		what, int(d/(5*time.Minute)))
}
