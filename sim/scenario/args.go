package scenario

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/cachelab/cachelab/internal/suggest"
)

// Args are a step's arguments, checked against its command (ParseArgs):
// its positional arguments in order, its key=value ones (each value as
// datadriven split it at top-level commas) and its flags.
type Args struct {
	Pos    []string
	Values map[string][]string
	Flags  map[string]bool
	// Resource is the resource a write or informer step acts on
	// (DefaultResource where it names none), taken out of Pos; "" for
	// the other commands.
	Resource string
	// custom are the custom resources the crd steps before it define;
	// defines is the one a crd step defines.
	custom  []CustomResource
	defines *CustomResource
}

// Defines is the custom resource a crd step defines.
func (a Args) Defines() (CustomResource, bool) {
	if a.defines == nil {
		return CustomResource{}, false
	}
	return *a.defines, true
}

// isResource reports whether name is a resource the step may name: a
// built-in one, or one a crd step before it defines.
func (a Args) isResource(name string) bool {
	_, ok := a.customByName(name)
	return IsResource(name) || ok
}

// resources are the resources the step may name, for errors.
func (a Args) resources() string {
	out := slices.Clone(Resources)
	for _, c := range a.custom {
		out = append(out, c.Plural)
	}
	return strings.Join(out, ", ")
}

// customByName is the custom resource name names, by its plural or as
// its CustomResourceDefinition is named (foos.example.com).
func (a Args) customByName(name string) (CustomResource, bool) {
	for _, c := range a.custom {
		if name == c.Plural || name == c.Name() {
			return c, true
		}
	}
	return CustomResource{}, false
}

// fields are the values beyond labels= a write of the step's resource
// may give (resourceValues; spec= for a custom resource).
func (a Args) fields() []string {
	if _, ok := a.Custom(); ok {
		return []string{"spec"}
	}
	return resourceValues[a.Resource]
}

// Custom is the custom resource the step acts on, if it acts on one.
func (a Args) Custom() (CustomResource, bool) { return customNamed(a.custom, a.Resource) }

// Spec is create's and update's spec=, typed by the custom resource's
// schema (CustomResource.SpecValues), or nil where the step gives none.
func (a Args) Spec() map[string]any {
	v, ok := a.Value("spec")
	c, custom := a.Custom()
	if !ok || !custom {
		return nil
	}
	pairs, _ := parseSpec(v)
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p.key] = p.value
	}
	return c.SpecValues(m)
}

// Value is the key= argument, its values joined with ","; ok is false if
// the step does not give it.
func (a Args) Value(k string) (v string, ok bool) {
	vs, ok := a.Values[k]
	if !ok {
		return "", false
	}
	return strings.Join(vs, ","), true
}

// Data is create's and update's data= as key-value pairs in the order
// written, nil for none; the command's check has refused any that
// parseLabels refuses.
func (a Args) Data() map[string]string {
	v, ok := a.Value("data")
	if !ok {
		return nil
	}
	pairs, _ := parseData(v)
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.key] = p.value
	}
	return out
}

// Finalizers is create's and update's finalizers= (empty, not nil, for
// ()), or nil where the step does not give it.
func (a Args) Finalizers() []string {
	v, ok := a.Value("finalizers")
	if !ok {
		return nil
	}
	f, _ := parseFinalizers(v)
	return f
}

// Owner is create's owner=: the owner's resource and key, or "" for
// none.
func (a Args) Owner() (resource, key string) {
	v, ok := a.Value("owner")
	if !ok {
		return "", ""
	}
	res, ns, name, _ := parseOwner(v, a)
	return res, ns + "/" + name
}

// BulkNS is bulk-create's namespace: its ns=, or BulkNamespace when the
// step does not say one.
func (a Args) BulkNS() string {
	if ns, ok := a.Value("ns"); ok {
		return ns
	}
	return BulkNamespace
}

// APIServer is a watch-cache lever's kube-apiserver number, 1 to
// MaxAPIServers, and whether the step names one (without one, the lever
// acts on the one the informers talk to).
func (a Args) APIServer() (int, bool, error) {
	if len(a.Pos) == 0 {
		return 0, false, nil
	}
	n, err := strconv.Atoi(a.Pos[0])
	if err != nil || n < 1 || n > MaxAPIServers {
		return 0, true, fmt.Errorf("%q: want a kube-apiserver's number, 1 or %d", a.Pos[0], MaxAPIServers)
	}
	return n, true, nil
}

// ParseArgs checks st's arguments against its command, as Parse did, and
// returns them: what the runner reads when it carries the step out.
func ParseArgs(st Step) (Args, error) {
	c, ok := commands[st.Cmd]
	if !ok {
		return Args{}, unknownCommand(st.Cmd)
	}
	a, err := c.parse(st.Args, st.custom)
	a.defines = st.defines
	return a, err
}

// parse checks a step's arguments against the command, for a step after
// crd steps that define custom.
func (c *command) parse(raw []datadriven.CmdArg, custom []CustomResource) (Args, error) {
	a := Args{Values: map[string][]string{}, Flags: map[string]bool{}, custom: custom}
	for _, arg := range raw {
		switch {
		case len(arg.Vals) > 0 && c.flags[arg.Key] != "":
			return a, fmt.Errorf("%s is a flag and takes no value; %s", arg.Key, c.want())
		case len(arg.Vals) > 0:
			if _, ok := c.values[arg.Key]; !ok {
				return a, fmt.Errorf("unknown argument %q; %s", arg.Key, c.want())
			}
			if _, dup := a.Values[arg.Key]; dup {
				return a, fmt.Errorf("argument %q given twice", arg.Key)
			}
			a.Values[arg.Key] = arg.Vals
		case c.flags[arg.Key] != "":
			if a.Flags[arg.Key] {
				return a, fmt.Errorf("flag %q given twice", arg.Key)
			}
			a.Flags[arg.Key] = true
		default:
			a.Pos = append(a.Pos, arg.Key)
		}
	}
	if err := takeResource(nameOf(c), &a); err != nil {
		return a, err
	}
	if len(a.Pos) < c.minPos || len(a.Pos) > c.maxPos {
		return a, countError(c, a.Pos)
	}
	return a, c.check(a)
}

func (c *command) want() string { return "usage: " + c.usage }

// check validates argument values, so a file is rejected before it runs
// (validate.go says what is refused, and why).
func (c *command) check(a Args) error {
	name := nameOf(c)
	keys := make([]string, 0, len(a.Values))
	for k := range a.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same error every time when two are bad
	for _, k := range keys {
		if err := checkValue(name, k, a.Values[k], a); err != nil {
			return err
		}
	}
	for _, p := range a.Pos {
		if err := checkPositional(name, p, a); err != nil {
			return err
		}
	}
	return checkTogether(name, a)
}

// checkStep validates a parsed step: a known command with good arguments.
func checkStep(st Step) error {
	_, err := ParseArgs(st)
	return err
}

// CommandNames are the names of every command, sorted.
func CommandNames() []string {
	out := make([]string, 0, len(commands))
	for n := range commands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// unknownCommand is the error for a command the table does not have: the
// closest names, as cachelab suggests for a scenario name it does not
// have, or, with none close, every name.
func unknownCommand(name string) error {
	if near := suggest.Closest(name, CommandNames(), 3); len(near) > 0 {
		return fmt.Errorf("unknown command %q; did you mean %s? ('cachelab scenarios --commands' lists them all)", name, strings.Join(near, ", "))
	}
	return fmt.Errorf("unknown command %q; want one of: %s", name, strings.Join(CommandNames(), ", "))
}

// CommandDoc is one command as `cachelab scenarios --commands` lists it.
type CommandDoc struct {
	Name  string // "create"
	Usage string // what it takes: "create <ns/name>... [labels=(k=v,...)] [managed]"
	Help  string // what it does, in a line of any length
}

// CommandDocs lists every command's usage and help, sorted by name.
func CommandDocs() []CommandDoc {
	var out []CommandDoc
	for _, n := range CommandNames() {
		c := commands[n]
		out = append(out, CommandDoc{Name: n, Usage: c.usage, Help: c.help})
	}
	return out
}

// Labels is the labels= of create, update and bulk-create as a map, nil
// for none; the command's check has refused any that parseLabels
// refuses.
func (a Args) Labels() map[string]string {
	v, _ := a.Value("labels")
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

// Value is the step's key= argument as written (its values joined with
// ","), whether or not the step's command takes it; ok is false if the
// step does not say it.
func (st Step) Value(key string) (v string, ok bool) {
	for _, a := range st.Args {
		if a.Key == key {
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
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
