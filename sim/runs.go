package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// runs is what each command does: the run function the runner calls with
// a step's arguments, checked against the command table (package
// scenario, commands.go) when the file was read. TestEveryCommandRuns
// keeps the two tables to the same names.
var runs = map[string]func(r *runner, a scenario.Args) error{
	// The world.
	"create": func(r *runner, a scenario.Args) error {
		for _, k := range a.Pos {
			ownerRes, ownerKey := a.Owner()
			if err := r.create(a.Resource, k, changeOf(a), ownerRes, ownerKey, a.Flags["managed"]); err != nil {
				return err
			}
		}
		return nil
	},
	"update": func(r *runner, a scenario.Args) error {
		ch := changeOf(a)
		if v, ok := a.Value("times"); ok {
			n, _ := strconv.Atoi(v)
			return r.updateTimes(a.Resource, a.Pos[0], ch, n)
		}
		return r.update(a.Resource, a.Pos[0], ch)
	},
	"put-raw":    cmdPutRaw,
	"delete-raw": cmdDeleteRaw,
	"delete": func(r *runner, a scenario.Args) error {
		for _, k := range a.Pos {
			if err := r.delete(a.Resource, k); err != nil {
				return err
			}
		}
		return nil
	},
	"bulk-create": func(r *runner, a scenario.Args) error {
		ns := a.BulkNS()
		nStr, _ := a.Value("n")
		n, _ := strconv.Atoi(nStr)
		w, err := r.writerOf(scenario.DefaultResource)
		if err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			u, err := r.newPod(scenario.BulkName(ns, i, n))
			if err != nil {
				return err
			}
			u.SetLabels(a.Labels())
			out, err := w.Create(r.ctx, u)
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
		r.note(trace.LayerEtcd, "", fmt.Sprintf("created %d %s %s..%s (etcd at rv %d)", n, plural(n, "object", "objects"), scenario.BulkName(ns, 1, n), scenario.BulkName(ns, n, n), rev))
		return nil
	},
	"gc":              cmdGC,
	"crd":             cmdCRD,
	"compact":         func(r *runner, a scenario.Args) error { return r.compact() },
	"progress":        cmdProgress,
	"close-watch":     closeWatch,
	"disconnect":      disconnect,
	"reconnect":       reconnect,
	"fail-next":       failNext,
	"expire-continue": expireContinue,
	"server":          serverFeature,
	"watch-list-lose": cmdWatchListLose,
	"restart-etcd": func(r *runner, a scenario.Args) error {
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
	},
	"etcd-snapshot": etcdSnapshot,
	"etcd-restore":  etcdRestore,
	"etcd-wipe":     etcdWipe,
	// An etcd cluster (clusterlevers.go).
	"etcd-cluster":      etcdCluster,
	"etcd-stop-member":  etcdStopMember,
	"etcd-start-member": etcdStartMember,
	"etcd-move-leader":  etcdMoveLeader,
	// The watch cache (cachelevers.go).
	"hold-cache":        holdCache,
	"release-cache":     releaseCache,
	"restart-apiserver": restartAPIServer,
	"add-apiserver":     addAPIServer,
	"use-apiserver":     useAPIServer,
	"advance": func(r *runner, a scenario.Args) error {
		d, _ := time.ParseDuration(a.Pos[0])
		return r.advance(d)
	},
	"resync": func(r *runner, a scenario.Args) error {
		if r.cfg == nil || r.cfg.resync <= 0 {
			return fmt.Errorf("resync needs an informer started with resync=<period>")
		}
		return r.advance(r.cfg.resync)
	},
	// The informers.
	"start":       func(r *runner, a scenario.Args) error { return cmdStart(r, a, false) },
	"start-queue": func(r *runner, a scenario.Args) error { return cmdStart(r, a, true) },
	"pause":       func(r *runner, a scenario.Args) error { return r.setPaused(true) },
	"resume":      func(r *runner, a scenario.Args) error { return r.setPaused(false) },
	"stop":        cmdStop,
	"add-handler": cmdAddHandler,
	"remove-handler": func(r *runner, a scenario.Args) error {
		sides := r.handlerSides(a.Pos[0])
		if sides == nil {
			return fmt.Errorf("no handler %q", a.Pos[0])
		}
		for _, s := range sides {
			h := s.handlerNamed(a.Pos[0])
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
		r.note(trace.LayerSim, "", fmt.Sprintf("handler %s removed: it gets no further calls (RemoveEventHandler returns at once; a call in progress finishes)", a.Pos[0]))
		return nil
	},
	"release": func(r *runner, a scenario.Args) error {
		sides := r.handlerSides(a.Pos[0])
		if sides == nil {
			return fmt.Errorf("no handler %q", a.Pos[0])
		}
		for _, s := range sides {
			s.handlerNamed(a.Pos[0]).release()
		}
		return nil
	},
	// Shared informer factories (factories.go).
	"factory":       cmdFactory,
	"informer":      cmdInformer,
	"factory-start": cmdFactoryStart,
	"factory-wait":  cmdFactoryWait,
	// The controllers.
	"start-controller":  cmdStartController,
	"reconcile-fail":    func(r *runner, a scenario.Args) error { return cmdScript(r, a, true) },
	"reconcile-requeue": func(r *runner, a scenario.Args) error { return cmdScript(r, a, false) },
	// Looking. show's argument is checked when the file is read; its
	// lines are added once the step has settled (runner.show).
	"show":   func(r *runner, a scenario.Args) error { return nil },
	"settle": func(r *runner, a scenario.Args) error { return nil },
}
