package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sourcegraph/conc/pool"

	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/plan/prompt"
)

// threePhase asks for a brief (the domains and the decisions across
// them), then for each domain's changes, up to planner.parallel calls at
// once, then for the plan merged from them. With one domain its changes
// are the plan, and no merge call is made: there is nothing to merge.
func (r *run) threePhase(ctx context.Context) ([]plan.Change, error) {
	brief, err := ask(ctx, r, stepBrief, prompt.Brief, r.base, briefSchema(r.domains), r.checkBrief)
	if err != nil {
		return nil, err
	}
	drafts := make([]prompt.Draft, len(r.domains))
	found := make([][]plan.Change, len(r.domains))
	calls := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError().WithMaxGoroutines(max(r.pl.opts.Planner.Parallel, 1))
	for i, d := range r.domains {
		calls.Go(func(ctx context.Context) error {
			data := r.base
			data.Requirements, data.Domain, data.Brief = d.Requirements, d.Name, brief
			changes, err := askChanges(ctx, r, stepDomain+d.Name, prompt.Domain, data, d.Requirements)
			if err != nil {
				return err
			}
			found[i] = changes
			drafts[i] = prompt.Draft{Domain: d.Name}
			for _, c := range changes {
				drafts[i].Changes = append(drafts[i].Changes, promptChange(c))
			}
			return nil
		})
	}
	if err := calls.Wait(); err != nil {
		return nil, err
	}
	if len(r.domains) == 1 {
		return found[0], nil
	}
	data := r.base
	data.Brief, data.Drafts = brief, drafts
	return askChanges(ctx, r, stepMerge, prompt.Merge, data, r.cover)
}

// checkBrief parses a brief answer: the schema's fields and nothing
// else, and notes only on domains to plan, once each.
func (r *run) checkBrief(answer string) (prompt.BriefAnswer, []string) {
	var b prompt.BriefAnswer
	dec := json.NewDecoder(bytes.NewReader([]byte(answer)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, []string{fmt.Sprintf("the answer is not a brief (overview, decisions, domains): %v", err)}
	}
	var errs []string
	if b.Overview == "" {
		errs = append(errs, "overview is empty")
	}
	seen := map[string]bool{}
	for i, n := range b.Domains {
		switch {
		case !slices.ContainsFunc(r.domains, func(d prompt.DomainRequirements) bool { return d.Name == n.Domain }):
			errs = append(errs, fmt.Sprintf("domains.%d: %q is not a domain to plan (%s)", i, n.Domain, domainNames(r.domains)))
		case seen[n.Domain]:
			errs = append(errs, fmt.Sprintf("domains.%d: the notes on %q are given twice", i, n.Domain))
		}
		seen[n.Domain] = true
	}
	return b, errs
}

func domainNames(ds []prompt.DomainRequirements) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}
