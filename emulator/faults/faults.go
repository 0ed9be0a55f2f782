// Package faults is tableemu's two ways of making a request fail as the
// service sometimes does, so that an application's retry policy runs on
// the developer's machine: fault injection (--faults, this file) and the
// throttling simulation (--throttle, throttle.go). Each is off unless its
// flag is given. The server (package emulator) calls them through
// interfaces of its own, after authorization and before the operation
// runs; neither knows the server.
package faults

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
)

// Fault injection (--faults): answer some requests with the transient
// failures the service produces. The specification is comma-separated
// key=value pairs:
//
//	rate=0.1                 fail this share of matching requests at random, or
//	every=3                  fail every third matching request (deterministic)
//	ops=InsertEntity|GetEntity   operations to fail (default: all but Preflight)
//	kinds=timeout|busy|drop  500 OperationTimedOut, 503 ServerBusy, or the
//	                         connection closed without a response; one is
//	                         picked per fault (default: timeout|busy)
//	seed=1                   the random seed (default 1, so runs repeat)
//
// A fault is injected after authentication and before the operation runs,
// so a failed request has changed nothing and is always safe to retry.
type Faults struct {
	mu    sync.Mutex
	rate  float64
	every int
	ops   map[auth.Op]bool // nil: every operation
	kinds []string
	rnd   *rand.Rand
	n     int
}

// Parse reads a --faults specification.
func Parse(spec string) (*Faults, error) {
	f := &Faults{kinds: []string{"timeout", "busy"}}
	seed := uint64(1)
	for _, item := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want key=value", item)
		}
		var err error
		switch k {
		case "rate":
			f.rate, err = strconv.ParseFloat(v, 64)
			if err == nil && (f.rate <= 0 || f.rate > 1) {
				err = fmt.Errorf("want a share in (0, 1]")
			}
		case "every":
			f.every, err = strconv.Atoi(v)
			if err == nil && f.every < 1 {
				err = fmt.Errorf("want a count from 1")
			}
		case "seed":
			seed, err = strconv.ParseUint(v, 10, 64)
		case "ops":
			f.ops = map[auth.Op]bool{}
			for _, name := range strings.Split(v, "|") {
				op, ok := opByName(name)
				if !ok {
					return nil, fmt.Errorf("ops: no operation %q", name)
				}
				f.ops[op] = true
			}
		case "kinds":
			f.kinds = nil
			for _, kind := range strings.Split(v, "|") {
				switch kind {
				case "timeout", "busy", "drop":
					f.kinds = append(f.kinds, kind)
				default:
					return nil, fmt.Errorf("kinds: %q is not timeout, busy or drop", kind)
				}
			}
		default:
			return nil, fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %v", k, v, err)
		}
	}
	if (f.rate == 0) == (f.every == 0) {
		return nil, fmt.Errorf("give one of rate= or every=")
	}
	f.rnd = rand.New(rand.NewPCG(seed, seed))
	return f, nil
}

func opByName(name string) (auth.Op, bool) {
	for _, op := range auth.Ops() {
		if op.String() == name {
			return op, true
		}
	}
	return 0, false
}

// pick decides whether this request fails, and how ("" for no fault).
func (f *Faults) pick(op auth.Op) string {
	if op == auth.Preflight || (f.ops != nil && !f.ops[op]) {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	hit := f.every > 0 && f.n%f.every == 0 || f.rate > 0 && f.rnd.Float64() < f.rate
	if !hit {
		return ""
	}
	return f.kinds[f.rnd.IntN(len(f.kinds))]
}

// Inject decides whether the request for op fails, and how: nil (no
// fault), the service's error to answer with (500 OperationTimedOut or
// 503 ServerBusy), or http.ErrAbortHandler when the connection is to be
// closed without a response, which the server does (it owns the
// connection).
func (f *Faults) Inject(op auth.Op) error {
	switch f.pick(op) {
	case "timeout":
		return tableemu.New(tableemu.OperationTimedOut).WithDetail("injected by --faults")
	case "busy":
		return tableemu.New(tableemu.ServerBusy).WithDetail("injected by --faults")
	case "drop":
		return http.ErrAbortHandler
	}
	return nil
}
