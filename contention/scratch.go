package contention

import (
	"context"

	"github.com/commcal/commcal/cluster"
)

// A Scratch keeps one pattern's set-up for a learned model between predictions, so that a fit,
// which predicts the same calibration patterns under thousands of parameter values, builds
// each pattern's classes, routes, resource lists and buffers once: rebuilding them was half
// of a fit's time and nearly all of its allocation. A Scratch serves one pattern on one
// cluster and one goroutine at a time; it is rebuilt when the flows (their array), the
// cluster, the model or the parameters' fillShape change. It also keeps ackpath-alpha's prices
// step by step, where the next run's sharings start (stepPrices): that prediction agrees with
// a fresh one to 10⁻⁹, the others bit for bit. The zero value is ready to use.
// The flows must not be modified between predictions that share a Scratch.
type Scratch struct {
	e   *engine
	f   *wfill
	key scratchKey
}

type scratchKey struct {
	flows   *Flow
	n       int
	cluster *cluster.Cluster
	v       LearnedVariant
	shape   fillShape
}

// prepare returns the engine and fill for flows on net under lp, ready for a first run: the
// Scratch's when they fit, new ones otherwise (kept in s unless s is nil). A new engine's
// set-up stops when ctx is done (newEngine).
func (s *Scratch) prepare(ctx context.Context, net *Network, flows []Flow, v LearnedVariant, lp *LearnedParams, unweighted bool) (*engine, *wfill, error) {
	key := scratchKey{n: len(flows), cluster: net.Cluster, v: v, shape: fillShapeOf(v, lp, unweighted)}
	if len(flows) > 0 {
		key.flows = &flows[0]
	}
	if s != nil && s.f != nil && s.key == key {
		s.e.net = net
		s.f.setParams(v, lp)
		s.f.reset()
		return s.e, s.f, nil
	}
	e, err := newEngine(ctx, net, flows, !unweighted)
	if err != nil {
		return nil, nil, err
	}
	f := newWFill(e, v, lp, unweighted)
	if s != nil {
		s.e, s.f, s.key = e, f, key
		f.keep = true
	}
	return e, f, nil
}
