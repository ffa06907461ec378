package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cachelab/cachelab/sim/objects"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// runs is what each command does: the run function the runner calls with
// a step's arguments, checked against the command table (package
// scenario, commands.go) when the file was read. TestEveryCommandRuns
// keeps the two tables to the same names.
var runs = map[string]pull{
	// The world.
	"create": onRunner(func(r *runner, a scenario.Args) error {
		for _, k := range a.Pos {
			ownerRes, ownerKey := a.Owner()
			if err := r.create(a.Resource, k, objects.ChangeOf(a), ownerRes, ownerKey, a.Flags["managed"]); err != nil {
				return err
			}
		}
		return nil
	}),
	"update": onRunner(func(r *runner, a scenario.Args) error {
		ch := objects.ChangeOf(a)
		if v, ok := a.Value("times"); ok {
			n, _ := strconv.Atoi(v)
			return r.updateTimes(a.Resource, a.Pos[0], ch, n)
		}
		return r.update(a.Resource, a.Pos[0], ch)
	}),
	"put-raw":    onStorage(cmdPutRaw),
	"delete-raw": onStorage(cmdDeleteRaw),
	"delete": onRunner(func(r *runner, a scenario.Args) error {
		for _, k := range a.Pos {
			if err := r.delete(a.Resource, k); err != nil {
				return err
			}
		}
		return nil
	}),
	"bulk-create": onRunner(func(r *runner, a scenario.Args) error {
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
	}),
	"gc":              onStorage(cmdGC),
	"crd":             onRunner(cmdCRD),
	"compact":         onStorage(compact),
	"progress":        onRunner(cmdProgress),
	"close-watch":     onRunner(closeWatch),
	"disconnect":      onRunner(disconnect),
	"reconnect":       onRunner(reconnect),
	"fail-next":       onRunner(failNext),
	"expire-continue": onRunner(expireContinue),
	"server":          onRunner(serverFeature),
	"watch-list-lose": onRunner(cmdWatchListLose),
	"restart-etcd":    onStorage(restartEtcd),
	"etcd-snapshot":   onStorage(etcdSnapshot),
	"etcd-restore":    onStorage(etcdRestore),
	"etcd-wipe":       onStorage(etcdWipe),
	// An etcd cluster (clusterlevers.go).
	"etcd-cluster":      onStorage(etcdCluster),
	"etcd-stop-member":  onStorage(etcdStopMember),
	"etcd-start-member": onStorage(etcdStartMember),
	"etcd-move-leader":  onStorage(etcdMoveLeader),
	// The watch cache (cachelevers.go).
	"hold-cache":        onCaches(holdCache),
	"release-cache":     onCaches(releaseCache),
	"restart-apiserver": onCaches(restartAPIServer),
	"add-apiserver":     onCaches(addAPIServer),
	"use-apiserver":     onCaches(useAPIServer),
	"advance": onRunner(func(r *runner, a scenario.Args) error {
		d, _ := time.ParseDuration(a.Pos[0])
		return r.advance(d)
	}),
	"resync": onRunner(func(r *runner, a scenario.Args) error {
		if r.cfg == nil || r.cfg.resync <= 0 {
			return fmt.Errorf("resync needs an informer started with resync=<period>")
		}
		return r.advance(r.cfg.resync)
	}),
	// The informers.
	"start":       onRunner(func(r *runner, a scenario.Args) error { return cmdStart(r, a, false) }),
	"start-queue": onRunner(func(r *runner, a scenario.Args) error { return cmdStart(r, a, true) }),
	"pause":       onRunner(func(r *runner, a scenario.Args) error { return r.setPaused(true) }),
	"resume":      onRunner(func(r *runner, a scenario.Args) error { return r.setPaused(false) }),
	"stop":        onRunner(cmdStop),
	"add-handler": onRunner(cmdAddHandler),
	"remove-handler": onRunner(func(r *runner, a scenario.Args) error {
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
	}),
	"release": onRunner(func(r *runner, a scenario.Args) error {
		sides := r.handlerSides(a.Pos[0])
		if sides == nil {
			return fmt.Errorf("no handler %q", a.Pos[0])
		}
		for _, s := range sides {
			s.handlerNamed(a.Pos[0]).release()
		}
		return nil
	}),
	// Shared informer factories (factories.go).
	"factory":       onRunner(cmdFactory),
	"informer":      onRunner(cmdInformer),
	"factory-start": onRunner(cmdFactoryStart),
	"factory-wait":  onRunner(cmdFactoryWait),
	// The controllers.
	"start-controller":  onRunner(cmdStartController),
	"reconcile-fail":    onRunner(func(r *runner, a scenario.Args) error { return cmdScript(r, a, true) }),
	"reconcile-requeue": onRunner(func(r *runner, a scenario.Args) error { return cmdScript(r, a, false) }),
	// Looking. show's argument is checked when the file is read; its
	// lines are added once the step has settled (runner.show).
	"show":   onRunner(func(r *runner, a scenario.Args) error { return nil }),
	"settle": onRunner(func(r *runner, a scenario.Args) error { return nil }),
}
