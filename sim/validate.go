package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cachelab/cachelab/informer"
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
//   - steps that depend on earlier ones (replay.go): an object that does
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
)

// checkText refuses what must never reach a terminal: bytes that are not
// UTF-8, control characters other than tab (line ends are gone already:
// text is split into lines), and the characters that reorder or break
// text as a terminal shows it. Any of them in a name or an expected line
// would be printed raw by the trace or a diff. It returns the 1-based
// line and what was wrong, or 0.
func checkText(lines []string) (int, string) {
	for n, line := range lines {
		col := 0
		for i := 0; i < len(line); {
			r, size := utf8.DecodeRuneInString(line[i:])
			col++
			if r == utf8.RuneError && size == 1 {
				return n + 1, fmt.Sprintf("byte 0x%02x at column %d is not UTF-8; a scenario file is UTF-8 text", line[i], col)
			}
			if why := hiddenRune(r); why != "" {
				return n + 1, fmt.Sprintf("character %s at column %d: %s", runeName(r), col, why)
			}
			i += size
		}
	}
	return 0, ""
}

// hiddenRune says why r may not appear in a scenario file, or "".
func hiddenRune(r rune) string {
	switch {
	case r == '\t':
		return ""
	case r == '\r':
		return "a carriage return that does not end a line (line ends are \\n or \\r\\n); it moves a terminal's cursor back over the line"
	case unicode.IsControl(r):
		return "a scenario file may hold no control characters but tab and line ends, so that nothing in it can act on the terminal that shows it"
	case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return "bidirectional-text controls can make a terminal show text other than what the file holds"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator breaks the line on screen but not in the file, so file:line would point elsewhere"
	}
	return ""
}

// runeName is U+001B, with a short name for the control characters an
// editor or a paste most often leaves behind.
func runeName(r rune) string {
	names := map[rune]string{0: "NUL", 7: "BEL", 8: "BS", 0x0b: "VT", 0x0c: "FF", 0x0d: "CR", 0x1b: "ESC", 0x7f: "DEL"}
	if n, ok := names[r]; ok {
		return fmt.Sprintf("%U (%s)", r, n)
	}
	return fmt.Sprintf("%U", r)
}

// nameOf is a command's name: the first word of its usage.
func nameOf(c *command) string { name, _, _ := strings.Cut(c.usage, " "); return name }

// posNouns say what each command's positional arguments are, for
// "create takes 1 to 100 objects; this line has 150".
var posNouns = map[string]string{
	"create": "object (ns/name)", "delete": "object (ns/name)", "update": "object (ns/name)",
	"advance": "duration", "delete-raw": "object (ns/name)", "put-raw": "argument (ns/name and text)", "add-handler": "handler name", "remove-handler": "handler name", "release": "handler name",
	"factory": "factory name", "informer": "factory name", "factory-start": "factory name", "factory-wait": "factory name",
	"show": "of store, queue, handlers, requests, synced, metrics or workqueue", "reconcile-fail": "object (ns/name)", "reconcile-requeue": "object (ns/name)",
}

// countError says how many positional arguments c takes and how many
// the line gave; for a command that takes none, it quotes the extra words
// (often a value with spaces that was not put in parentheses).
func countError(c *command, pos []string) error {
	name := nameOf(c)
	if c.maxPos == 0 {
		words := make([]string, len(pos))
		for i, p := range pos {
			words[i] = strconv.Quote(p)
		}
		hint := ""
		if _, ok := c.values["labels"]; ok {
			hint = " (a selector with spaces goes in parentheses: labels=(app in (a,b)))"
		}
		return fmt.Errorf("%s takes no positional arguments; this line has %d: %s%s; %s",
			name, len(pos), strings.Join(words, " "), hint, c.want())
	}
	noun := posNouns[name]
	takes := fmt.Sprintf("%d %s", c.minPos, noun)
	if c.minPos != c.maxPos {
		first, rest, _ := strings.Cut(noun, " ")
		takes = fmt.Sprintf("%d to %d %ss %s", c.minPos, c.maxPos, first, rest)
	}
	more := ""
	if name == "create" && len(pos) > c.maxPos {
		more = " (bulk-create makes more at once)"
	}
	return fmt.Errorf("%s takes %s; this line has %d%s; %s", name, strings.TrimSpace(takes), len(pos), more, c.want())
}

// checkValue checks one key=value argument of the command called name.
// vs are its values as datadriven split them at top-level commas; the
// runner reads them joined with "," (args.value), and so does this.
func checkValue(name, k string, vs []string) error {
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
		if _, err := informer.ParseStack(v); err != nil {
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
		return checkWord("factory", v)
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
func checkPositional(name, p string) error {
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
	case "create", "update", "delete", "delete-raw", "reconcile-fail", "reconcile-requeue":
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
func checkTogether(name string, a args) error {
	_, hasLabels := a.values["labels"]
	_, hasImage := a.values["image"]
	_, hasList := a.values["list"]
	_, hasWatch := a.values["watch"]
	switch {
	case name == "bulk-create" && a.values["n"] == nil:
		return fmt.Errorf("bulk-create needs n=<count>, how many objects to create; %s", commands[name].want())
	case name == "update" && !hasLabels && !hasImage && a.values["times"] == nil:
		// kube-apiserver writes nothing for an update that changes
		// nothing; a line that asks for no change is a slip.
		return fmt.Errorf("update %s needs labels=, image= or times=, the change to make; %s", a.pos[0], commands[name].want())
	case name == "reconcile-requeue" && a.values["after"] == nil:
		return fmt.Errorf("reconcile-requeue needs after=<duration>, the delay the reconcile asks for; %s", commands[name].want())
	case name == "fail-next" && a.values["page"] != nil && !hasList:
		return fmt.Errorf("fail-next page= says which page of a LIST fails, and needs list=<status>; %s", commands[name].want())
	case name == "put-raw":
		if err := checkKey(a.pos[0]); err != nil {
			return err
		}
		return checkRaw(a.pos[1])
	case name == "server" && a.values["watch-list"] == nil:
		return fmt.Errorf("server needs watch-list=on or watch-list=off; %s", commands[name].want())
	case name == "fail-next" && !hasList && !hasWatch:
		return fmt.Errorf("fail-next needs list=<status>, watch=<status> or both; %s", commands[name].want())
	}
	return nil
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
	if v == "" {
		return nil, nil
	}
	var out []labelPair
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("labels=(%s): %q is not key=value; want labels as (k=v,k2=v2), or () for none", v, kv)
		}
		if slices.ContainsFunc(out, func(p labelPair) bool { return p.key == k }) {
			return nil, fmt.Errorf("labels=(%s): label %q is given twice", v, k)
		}
		if errs := metav1validation.ValidateLabels(map[string]string{k: val}, field.NewPath("metadata", "labels")); len(errs) > 0 {
			return nil, fmt.Errorf("labels=(%s): %v", v, errs.ToAggregate())
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

// checkRaw checks put-raw's text: one word of printable ASCII (the trace
// prints it quoted), and not an object the ListerWatcher could decode,
// which would make the key a live object the replay does not know of.
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
