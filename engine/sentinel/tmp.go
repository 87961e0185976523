// Package sentinel TEMPORARY (lead): replaced by helper's version on merge.
package sentinel

import (
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
)

type Action string

const (
	Warn       Action = "warn"
	Restart    Action = "restart"
	Redispatch Action = "redispatch"
	Fail       Action = "fail"
	Pause      Action = "pause"
)

type rule struct {
	name    string
	when    *cond.Condition
	ladder  []Action
	every   time.Duration
	graced  bool
	fails   string
	backoff time.Duration
}

type Rules struct{ rules []rule }

type Firing struct {
	Rule    string
	Step    int
	Steps   int
	Action  Action
	Fails   string
	Backoff time.Duration
	Facts   cond.SentinelEnv
}

func Compile(cfg config.Sentinel) (*Rules, error) {
	r := &Rules{}
	for name, x := range cfg.Rules {
		c, err := cond.CompileSentinel(x.When)
		if err != nil {
			return nil, err
		}
		lad := []Action{}
		for _, a := range x.Ladder {
			lad = append(lad, Action(a))
		}
		if x.Action != "" {
			lad = []Action{Action(x.Action)}
		}
		r.rules = append(r.rules, rule{name: name, when: c, ladder: lad, every: x.Every.D(), graced: x.Graced, fails: x.Fails, backoff: x.Backoff.D()})
	}
	slices.SortFunc(r.rules, func(a, b rule) int { return strings.Compare(a.name, b.name) })
	return r, nil
}

func (r *Rules) Names() []string {
	var out []string
	for _, x := range r.rules {
		out = append(out, x.name)
	}
	slices.Sort(out)
	return out
}

func (r *Rules) Held(f cond.SentinelEnv) string { return "" }

// When is the source of rule name's condition.
func (r *Rules) When(name string) string {
	for _, x := range r.rules {
		if x.name == name {
			return x.when.Source()
		}
	}
	return ""
}

type state struct {
	was  bool
	step int
	last time.Time
	rest int
}

type Watch struct {
	r  *Rules
	st map[string]*state
}

func (r *Rules) Watch() *Watch { return &Watch{r: r, st: map[string]*state{}} }

func (w *Watch) Evaluate(f cond.SentinelEnv, now time.Time) ([]Firing, error) {
	var out []Firing
	for _, x := range w.r.rules {
		s := w.st[x.name]
		if s == nil {
			s = &state{}
			w.st[x.name] = s
		}
		ok, err := x.when.Eval(f)
		if err != nil {
			return out, err
		}
		fire := false
		switch {
		case !ok:
		case !s.was:
			fire = true
			s.step = min(s.step+1, len(x.ladder))
		case s.step < len(x.ladder) && now.Sub(s.last) >= x.every:
			fire = true
			s.step++
		}
		s.was = ok
		if fire {
			s.last = now
			a := x.ladder[s.step-1]
			fg := Firing{Rule: x.name, Step: s.step, Steps: len(x.ladder), Action: a, Fails: x.fails, Facts: f}
			if a == Restart && x.backoff > 0 {
				s.rest++
				fg.Backoff = x.backoff << (s.rest - 1)
			}
			out = append(out, fg)
		}
	}
	return out, nil
}

func (w *Watch) Progress() {
	for _, s := range w.st {
		s.step, s.rest = 0, 0
	}
}
