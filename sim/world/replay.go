package world

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/recording"
)

// In a replay (package recording), both sides' connections reach one
// scripted server that answers from a recorded session, on the
// scenario's clock:
//
//	informer ──▶ Conn ──▶ recording.Server (a session's history)
//
// The levers on the connection stay the Conn's; a replay's own steps
// use fail-next only, for the LISTs and WATCHes that failed when the
// session was recorded.

// ReplayServer is a Server that answers from a recording.
type ReplayServer struct{ *recording.Server }

var _ Server = ReplayServer{}

var errReplay = errors.New("a replay's server is a recording: it has no etcd and no watch cache")

func (ReplayServer) ExpiredContinue(metav1.ListOptions) error { return errReplay }
func (ReplayServer) RequestProgress(context.Context) error    { return errReplay }
func (ReplayServer) SetWatchListFeature(bool)                 {}
