package listwatch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/listwatch"
)

// writeScript is a sequence of writes that meets each of a Writer's
// answers: created, already exists, updated, unchanged, conflict, not
// found, deleted, a raw value and its removal. It returns what each write
// returned, as text, error included.
func writeScript(ctx context.Context, w *listwatch.Writer) []string {
	var out []string
	note := func(what string, obj *unstructured.Unstructured, err error) {
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: error %T %v", what, err, err))
		case obj == nil:
			out = append(out, what+": nil")
		default:
			out = append(out, fmt.Sprintf("%s: %v", what, obj.Object))
		}
	}
	a, err := w.Create(ctx, pod("ns/a", "v", "1"))
	note("create a", a, err)
	dup, err := w.Create(ctx, pod("ns/a"))
	note("create a again", dup, err)
	upd := a.DeepCopy()
	upd.SetLabels(map[string]string{"v": "2"})
	u, err := w.Update(ctx, upd)
	note("update a", u, err)
	same, err := w.Update(ctx, u)
	note("update a, unchanged", same, err)
	stale, err := w.Update(ctx, upd) // still at a's first resourceVersion
	note("update a from its past", stale, err)
	missing, err := w.Update(ctx, pod("ns/b"))
	note("update b, missing", missing, err)
	rev, err := w.PutRaw(ctx, "ns", "raw", []byte("not json"))
	out = append(out, fmt.Sprintf("put-raw: %d %v", rev, err))
	rev, err = w.DeleteRaw(ctx, "ns", "raw")
	out = append(out, fmt.Sprintf("delete-raw: %d %v", rev, err))
	gone, err := w.Delete(ctx, "ns", "a", listwatch.Preconditions{})
	note("delete a", gone, err)
	again, err := w.Delete(ctx, "ns", "a", listwatch.Preconditions{})
	note("delete a again", again, err)
	got, err := w.Get(ctx, "ns", "a")
	note("get a", got, err)
	return out
}

// TestLocalKVAnswersAsTheConnection plays the same writes through an
// embedded etcd's connection and through its LocalKV, each on an etcd of
// its own, and compares every answer and error.
func TestLocalKVAnswersAsTheConnection(t *testing.T) {
	ctx := context.Background()
	play := func(local bool) []string {
		e := startEtcd(t)
		kv := listwatch.KV(e.Client())
		if local {
			kv = e.LocalKV()
		}
		n := 0
		w := listwatch.NewWriter(kv, listwatch.Pods, listwatch.WriterOptions{
			NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
			Now:    func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
		})
		return writeScript(ctx, w)
	}
	conn, local := play(false), play(true)
	if diff := cmp.Diff(conn, local); diff != "" {
		t.Fatalf("LocalKV answered otherwise than the connection (-connection +local):\n%s", diff)
	}
}

// TestLocalKVFollowsRestarts: a LocalKV write is seen by a watch on the
// connection, the KV keeps working after Restart and Wipe, and fails
// with ErrLocalStopped once the server is stopped for good.
func TestLocalKVFollowsRestarts(t *testing.T) {
	ctx := context.Background()
	e := startEtcd(t)
	kv := e.LocalKV()
	if kv == nil {
		t.Fatal("LocalKV of one member is nil")
	}
	watch := e.Client().Watch(ctx, "/k")
	if _, err := kv.Put(ctx, "/k", "1"); err != nil {
		t.Fatal(err)
	}
	if ev := <-watch; len(ev.Events) != 1 || string(ev.Events[0].Kv.Value) != "1" {
		t.Fatalf("the watch got %+v, want the local put", ev)
	}
	if err := e.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if resp, err := kv.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("after Restart: %v, %v", resp, err)
	}
	if err := e.Wipe(ctx); err != nil {
		t.Fatal(err)
	}
	if resp, err := kv.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("after Wipe: %v, %v, want no key", resp, err)
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "/k", "2"); !errors.Is(err, listwatch.ErrLocalStopped) {
		t.Fatalf("Put on a stopped server: %v, want ErrLocalStopped", err)
	}
	if _, err := kv.Txn(ctx).Commit(); !errors.Is(err, listwatch.ErrLocalStopped) {
		t.Fatalf("Txn on a stopped server: %v, want ErrLocalStopped", err)
	}
}
