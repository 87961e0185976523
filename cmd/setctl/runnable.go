package main

import (
	"cmp"
	"errors"
	"slices"

	"github.com/set-engine/set/engine/config"
)

// runnable refuses what set.cue asks for that this build cannot run: an
// LLM-graded review gate in a stack that does not skip it. vet, plan,
// apply and doctor all ask it, right after loading, so that what vet
// accepts apply runs. It looks at every stack, not only those the
// current plan's changes use, and whatever a gate's `when` says: its
// verdict holds for any plan the spec makes. Each problem is positioned
// at its stack entry; print them with load.Details.
func runnable(cfg *config.Project) error {
	var errs []error
	check := func(stack config.Stack, path ...string) {
		for _, name := range sortedNames(stack) {
			gate, ok := cfg.Gates[name]
			if !ok || gate.Kind != config.KindReview || cmp.Or(stack[name].Mode, gate.Mode, config.ModeRun) == config.ModeSkip {
				continue
			}
			errs = append(errs, cfg.FieldError(slices.Concat(path, []string{name}),
				"gate %s is an LLM-graded review, which this build cannot run; set its mode to \"skip\" here or remove it from the stack", name))
		}
	}
	for _, t := range sortedNames(cfg.Stacks) {
		check(cfg.Stacks[t], "stacks", t)
	}
	check(cfg.Integration, "integration")
	return errors.Join(errs...)
}
