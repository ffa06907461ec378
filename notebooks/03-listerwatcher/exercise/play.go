package exercise

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/listwatch"
)

// scenario is what a check plays: the pods written before the list, and
// what happens while a pager lists them.
type scenario struct {
	name     string // how failure messages name it
	pageSize int64
	pods     []string // created in this order, as "namespace/name"
	deleted  []string // then deleted, so that the list's resourceVersion is newer than any item's
	// after[n] runs once LIST #n has been answered, before the pager
	// sees the answer.
	after map[int]func(context.Context, *world) error
	// fail[n] is the error LIST #n fails with, instead of reaching etcd.
	fail map[int]error
}

// world is one embedded etcd, a writer, and the ListerWatcher the pagers
// list pods with.
type world struct {
	etcd *listwatch.Embedded
	pods *listwatch.Writer
	lw   *listwatch.ListerWatcher
}

func (w *world) create(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	p := &unstructured.Unstructured{}
	p.SetAPIVersion("v1")
	p.SetKind("Pod")
	p.SetNamespace(ns)
	p.SetName(name)
	_, err := w.pods.Create(ctx, p)
	return err
}

func (w *world) delete(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	_, err := w.pods.Delete(ctx, ns, name, listwatch.Preconditions{})
	return err
}

// maxLists is where a pager that does not stop is stopped: no scenario
// needs more than a few LISTs.
const maxLists = 20

var errRunaway = fmt.Errorf("the lab stopped this pager: it sent more than %d LISTs", maxLists)

// list is one LIST a pager sent and the server's answer, in words, with
// the resourceVersion of the list it answered with (if it did).
type list struct{ request, answer, rv string }

// outcome is what a pager did in one play.
type outcome struct {
	lists   []list
	ranAway bool // it was stopped after maxLists LISTs
	keys    []string
	rv      string
	err     error
}

// result is what the pager returned, in words.
func (o outcome) result() string {
	if o.err != nil {
		return describeErr(o.err)
	}
	return fmt.Sprintf("%s at resourceVersion %q", keys(o.keys), o.rv)
}

// after says what the server had answered before LIST #i+1.
func (o outcome) after(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf(",\nonce LIST #%d was answered with %s", i, o.lists[i-1].answer)
}

// rvFrom says which LIST answered with the resourceVersion the pager
// returned.
func (o outcome) rvFrom() string {
	for i, l := range o.lists {
		if l.rv != "" && l.rv == o.rv {
			return fmt.Sprintf(", the one LIST #%d was answered with", i+1)
		}
	}
	return ""
}

func (o outcome) runaway() string {
	if !o.ranAway {
		return ""
	}
	return fmt.Sprintf(", and went on until the lab stopped it after %d", maxLists)
}

// play runs s on a fresh etcd under listAll.
func play(s scenario, listAll ListAllFunc) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		return outcome{}, err
	}
	defer e.Close()
	w := &world{
		etcd: e,
		pods: listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{}),
		lw:   listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{}),
	}
	for _, key := range s.pods {
		if err := w.create(ctx, key); err != nil {
			return outcome{}, err
		}
	}
	for _, key := range s.deleted {
		if err := w.delete(ctx, key); err != nil {
			return outcome{}, err
		}
	}
	r := &recorder{s: s, w: w, tokens: map[string]string{}}
	ks, rv, err := listAll(ctx, r.list, s.pageSize)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken != nil {
		return outcome{}, r.broken
	}
	return outcome{lists: r.lists, ranAway: r.ranAway, keys: ks, rv: rv, err: err}, nil
}

// recorder is the ListFunc a pager is given: it passes each LIST on to the
// ListerWatcher (or fails it, as the scenario says), records it and its
// answer, and runs the scenario's step after it.
type recorder struct {
	s       scenario
	w       *world
	mu      sync.Mutex
	lists   []list
	tokens  map[string]string // continue token → where it came from
	ranAway bool
	broken  error // a scenario step failed: the lab's fault, not the pager's
}

func (r *recorder) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.lists) + 1
	if n > maxLists {
		r.ranAway = true
		return nil, errRunaway
	}
	request := r.request(opts)
	var obj runtime.Object
	err := r.s.fail[n]
	if err == nil {
		obj, err = r.w.lw.ListWithContext(ctx, opts)
	}
	l := r.answer(n, obj, err)
	l.request = request
	r.lists = append(r.lists, l)
	if step := r.s.after[n]; step != nil && r.broken == nil {
		if err := step(ctx, r.w); err != nil {
			r.broken = fmt.Errorf("after LIST #%d: %w", n, err)
		}
	}
	return obj, err
}

// request renders the options of a LIST: "{limit=2 continue=<token from
// LIST #1>}", with continue tokens named for where they came from.
func (r *recorder) request(o metav1.ListOptions) string {
	var parts []string
	if o.ResourceVersion != "" {
		parts = append(parts, fmt.Sprintf("resourceVersion=%q", o.ResourceVersion))
	}
	if o.ResourceVersionMatch != "" {
		parts = append(parts, fmt.Sprintf("resourceVersionMatch=%s", o.ResourceVersionMatch))
	}
	if o.Limit != 0 {
		parts = append(parts, fmt.Sprintf("limit=%d", o.Limit))
	}
	if o.Continue != "" {
		parts = append(parts, "continue=<"+r.tokenName(o.Continue)+">")
	}
	rest := o
	rest.ResourceVersion, rest.ResourceVersionMatch, rest.Limit, rest.Continue = "", "", 0, ""
	if !reflect.DeepEqual(rest, metav1.ListOptions{}) {
		parts = append(parts, fmt.Sprintf("and %+v", rest))
	}
	if len(parts) == 0 {
		return "{} (no limit, no continue: everything at once)"
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func (r *recorder) tokenName(token string) string {
	if name, ok := r.tokens[token]; ok {
		return name
	}
	return fmt.Sprintf("%.16q..., a token the server never sent", token)
}

// answer renders the server's answer to LIST #n, and names the continue
// token it carries.
func (r *recorder) answer(n int, obj runtime.Object, err error) list {
	if err != nil {
		var s apierrors.APIStatus
		if errors.As(err, &s) && s.Status().ListMeta.Continue != "" {
			r.tokens[s.Status().ListMeta.Continue] = fmt.Sprintf("token from LIST #%d's %d", n, s.Status().Code)
			return list{answer: describeErr(err) + ", and a continue token to go on at the latest revision"}
		}
		return list{answer: describeErr(err)}
	}
	ks, err := listKeys(obj)
	m, merr := meta.ListAccessor(obj)
	if err != nil || merr != nil {
		return list{answer: fmt.Sprintf("something that is not a list: %T", obj)}
	}
	l := list{rv: m.GetResourceVersion()}
	l.answer = fmt.Sprintf("%s at resourceVersion %q", keys(ks), l.rv)
	if c := m.GetContinue(); c != "" {
		r.tokens[c] = fmt.Sprintf("token from LIST #%d", n)
		l.answer += ", continue=<" + r.tokens[c] + ">"
	} else {
		l.answer += " and no continue token"
	}
	return l
}

// describeErr renders an error, an API error as its code, reason and
// first sentence (some of kube-apiserver's messages go on for a
// paragraph).
func describeErr(err error) string {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return fmt.Sprintf("the error %q", err)
	}
	st := s.Status()
	msg, _, _ := strings.Cut(st.Message, ". ")
	return fmt.Sprintf("the error %d %s (%s)", st.Code, st.Reason, strings.TrimSuffix(msg, "."))
}

// listKeys is the key of each of a list's items, in order.
func listKeys(list runtime.Object) ([]string, error) {
	var ks []string
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		ks = append(ks, key)
		return err
	})
	return ks, err
}
