package githubtest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/set-engine/set/engine/git"
)

// PR is what the server holds of a pull request, as a test sees it.
type PR struct {
	Number int
	// NodeID is its GraphQL id.
	NodeID string
	// Head and Base are the branches; HeadSHA the head's tip.
	Head, Base, HeadSHA string
	Title, Body         string
	// State is "open" or "closed"; Merged says a closed one was merged,
	// by MergeCommit on the base branch.
	State       string
	Merged      bool
	MergeCommit string
	// Queued: it is in its base branch's merge queue, its merge group
	// commit QueueCommit. AutoMerge: auto-merge is armed.
	Queued      bool
	QueueCommit string
	AutoMerge   bool
}

// Status is a commit status posted to the server.
type Status struct {
	Context, State, Description, TargetURL string
}

// ReviewComment is a review's comment on a line of a file.
type ReviewComment struct {
	Path string
	Line int
	Body string
}

type pull struct {
	number                  int
	nodeID                  string
	title, body, head, base string
	headSHA                 string
	state                   string // "open", "closed"
	merged                  bool
	mergeCommit             string
	mergedBy, closedBy      string
	created, updated        time.Time
	closed                  time.Time
	queue                   *queueEntry
	autoMerge               *autoMerge
	reviews                 []*review
	comments                []*comment
	removals                []removal
}

type queueEntry struct {
	id       string
	commit   string // the merge group commit, "" when it did not apply
	baseSHA  string
	enqueued time.Time
}

type autoMerge struct {
	method  string // MERGE, SQUASH, REBASE
	enabled time.Time
	// headline and body are the commit message the merge is to make
	// (commitHeadline, commitBody); "" for GitHub's default.
	headline, body string
}

type review struct {
	id       int64
	user     string
	body     string
	state    string
	commit   string
	at       time.Time
	comments []*lineComment
}

type lineComment struct {
	id int64
	ReviewComment
	commit string
	at     time.Time
}

type comment struct {
	id   int64
	user string
	body string
	at   time.Time
}

// removal is a RemovedFromMergeQueueEvent.
type removal struct {
	id     string
	at     time.Time
	reason string
	commit string // beforeCommit: the merge group commit tested
	actor  string
}

type status struct {
	id int64
	Status
	at time.Time
}

type checkRun struct {
	id         int64
	name       string
	sha        string
	conclusion string
	output     string
	at         time.Time
}

func (p *pull) view() PR {
	pr := PR{Number: p.number, NodeID: p.nodeID, Head: p.head, Base: p.base, HeadSHA: p.headSHA,
		Title: p.title, Body: p.body, State: p.state, Merged: p.merged, MergeCommit: p.mergeCommit,
		Queued: p.queue != nil, AutoMerge: p.autoMerge != nil}
	if p.queue != nil {
		pr.QueueCommit = p.queue.commit
	}
	return pr
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

// PR is pull request number, as the server holds it now.
func (s *Server) PR(number int) (PR, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil {
		return PR{}, false
	}
	s.refresh(p)
	return p.view(), true
}

// PRs is every pull request, by number.
func (s *Server) PRs() []PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PR
	for _, p := range s.prs {
		s.refresh(p)
		out = append(out, p.view())
	}
	return out
}

// Statuses is every status posted on sha, oldest first.
func (s *Server) Statuses(sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, st := range s.statuses[sha] {
		out = append(out, st.Status)
	}
	return out
}

func (s *Server) pull(number int) *pull {
	if number < 1 || number > len(s.prs) {
		return nil
	}
	return s.prs[number-1]
}

func (s *Server) pullByNode(id string) *pull {
	for _, p := range s.prs {
		if p.nodeID == id {
			return p
		}
	}
	return nil
}

// refresh reads an open pull request's head from the remote. A head
// that moved takes the pull request out of the merge queue, as on
// GitHub.
func (s *Server) refresh(p *pull) {
	if p.state != "open" {
		return
	}
	tip, err := git.BranchHead(ctx(), s.opts.Remote, p.head)
	if err != nil || tip == p.headSHA {
		return
	}
	p.headSHA = tip
	p.updated = s.opts.Now()
	if p.queue != nil {
		s.dequeue(p, "the pull request's head changed", "")
	}
}

// baseTip is the base branch's tip in the remote, or "".
func (s *Server) baseTip(p *pull) string {
	tip, _ := git.BranchHead(ctx(), s.opts.Remote, p.base)
	return tip
}

// dequeue takes p out of the merge queue, with a removal event.
func (s *Server) dequeue(p *pull, reason, actor string) {
	now := s.opts.Now()
	p.removals = append(p.removals, removal{id: "RFMQE_" + strconv.FormatInt(s.id(), 10), at: now, reason: reason, commit: p.queue.commit, actor: actor})
	p.queue = nil
	p.updated = now
}

// position is p's place in its base's merge queue (1 is next).
func (s *Server) position(p *pull) int {
	n := 0
	for _, q := range s.queued(p.base) {
		n++
		if q == p {
			return n
		}
	}
	return 0
}

// queued is the pull requests in base's merge queue, in queue order.
func (s *Server) queued(base string) []*pull {
	var out []*pull
	for _, p := range s.prs {
		if p.queue != nil && p.base == base {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b *pull) int { return a.queue.enqueued.Compare(b.queue.enqueued) })
	return out
}

// ErrNotOpen is an action on a pull request that is closed or merged.
var ErrNotOpen = errors.New("the pull request is not open")

// Merge merges pull request number as GitHub does: a squash commit of its
// head onto its base branch's tip in the remote (parent: that tip), the
// base branch moved to it from that tip. A head that does not apply is
// a *git.ConflictError, and a queued pull request leaves the queue for
// it. It returns the merge commit.
func (s *Server) Merge(number int) (string, error) {
	return s.MergeWith(number, "")
}

// MergeWith merges pull request number as a person who wrote message
// for its commit on the base branch ("" for GitHub's default, see
// merge); it returns that commit.
func (s *Server) MergeWith(number int, message string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil {
		return "", fmt.Errorf("no pull request #%d", number)
	}
	headline, body, _ := strings.Cut(message, "\n")
	return s.merge(p, headline, strings.TrimLeft(body, "\n"))
}

// merge squashes p onto its base branch, with the commit message
// headline and body, or when headline is "" GitHub's default for a
// squash (defaultMessage).
func (s *Server) merge(p *pull, headline, body string) (string, error) {
	s.refresh(p)
	if p.state != "open" {
		return "", fmt.Errorf("#%d: %w", p.number, ErrNotOpen)
	}
	base := s.baseTip(p)
	if base == "" {
		return "", fmt.Errorf("#%d: the base branch %s is not in the remote", p.number, p.base)
	}
	message := headline
	if body != "" {
		message += "\n\n" + body
	}
	if headline == "" {
		message = s.defaultMessage(p, base)
	}
	commit, err := git.SquashCommit(ctx(), s.opts.Remote, base, p.headSHA, message, "GitHub", "noreply@github.com")
	if err == nil {
		err = git.MoveBranch(ctx(), s.opts.Remote, p.base, commit, base)
	}
	if err != nil {
		if p.queue != nil {
			s.dequeue(p, "it does not merge onto "+p.base+": "+err.Error(), "")
		}
		return "", err
	}
	now := s.opts.Now()
	p.state, p.merged, p.mergeCommit, p.mergedBy = "closed", true, commit, s.opts.User
	p.closed, p.updated = now, now
	p.queue, p.autoMerge = nil, nil
	return commit, nil
}

// defaultMessage is GitHub's default message of a squash of p onto base
// (a repository's defaults: "commit or pull request title" and "commit
// messages"): a pull request of one commit takes that commit's message,
// "(#N)" after its subject; one of several, its title with "(#N)" and
// the list of its commits' messages.
func (s *Server) defaultMessage(p *pull, base string) string {
	commits, err := git.Log(ctx(), s.opts.Remote, base+".."+p.headSHA, "^")
	if err != nil || len(commits) == 0 {
		return fmt.Sprintf("%s (#%d)", p.title, p.number)
	}
	if len(commits) == 1 {
		subject, rest, _ := strings.Cut(strings.TrimSpace(commits[0].Message), "\n")
		return fmt.Sprintf("%s (#%d)\n%s", subject, p.number, rest)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (#%d)\n", p.title, p.number)
	for i := len(commits) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "\n* %s\n", strings.TrimSpace(commits[i].Message))
	}
	return b.String()
}

// ClosePR closes pull request number without merging it, as by; words,
// when not empty, are a comment by the same person first. (Close stops
// the server.)
func (s *Server) ClosePR(number int, by, words string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil || p.state != "open" {
		return fmt.Errorf("#%d: %w", number, ErrNotOpen)
	}
	now := s.opts.Now()
	if words != "" {
		p.comments = append(p.comments, &comment{id: s.id(), user: by, body: words, at: now})
	}
	if p.queue != nil {
		s.dequeue(p, "the pull request was closed", by)
	}
	p.state, p.closedBy, p.closed, p.updated, p.autoMerge = "closed", by, now, now, nil
	return nil
}

// Dequeue takes pull request number out of the merge queue, as by (a
// person; "" for the queue itself) for reason, the way GitHub records it
// (a RemovedFromMergeQueueEvent). It is an error when it is not queued.
func (s *Server) Dequeue(number int, by, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil || p.queue == nil {
		return fmt.Errorf("#%d is not in a merge queue", number)
	}
	s.dequeue(p, reason, by)
	return nil
}

// Comment adds a comment by author to pull request number's conversation.
func (s *Server) Comment(number int, author, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil {
		return fmt.Errorf("no pull request #%d", number)
	}
	now := s.opts.Now()
	p.comments = append(p.comments, &comment{id: s.id(), user: author, body: body, at: now})
	p.updated = now
	return nil
}

// RequestChanges submits a review by author requesting changes on pull
// request number's head, with body and comments on lines. It returns the
// review's id.
func (s *Server) RequestChanges(number int, author, body string, comments ...ReviewComment) (int64, error) {
	return s.review(number, author, body, "CHANGES_REQUESTED", comments)
}

// Dismiss dismisses review id of pull request number, as GitHub does:
// the review's state becomes DISMISSED.
func (s *Server) Dismiss(number int, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil {
		return fmt.Errorf("no pull request #%d", number)
	}
	for _, r := range p.reviews {
		if r.id == id {
			r.state = "DISMISSED"
			p.updated = s.opts.Now()
			return nil
		}
	}
	return fmt.Errorf("#%d has no review %d", number, id)
}

// Approve submits a review by author approving pull request number.
func (s *Server) Approve(number int, author, body string) (int64, error) {
	return s.review(number, author, body, "APPROVED", nil)
}

func (s *Server) review(number int, author, body, state string, comments []ReviewComment) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil || p.state != "open" {
		return 0, fmt.Errorf("#%d: %w", number, ErrNotOpen)
	}
	s.refresh(p)
	now := s.opts.Now()
	r := &review{id: s.id(), user: author, body: body, state: state, commit: p.headSHA, at: now}
	for _, c := range comments {
		r.comments = append(r.comments, &lineComment{id: s.id(), ReviewComment: c, commit: p.headSHA, at: now})
	}
	p.reviews = append(p.reviews, r)
	p.updated = now
	return r.id, nil
}

// FailCheck fails a check run named name, printing output, for pull
// request number, the way GitHub reports it: on the merge group commit
// when the pull request is in the merge queue, which then removes it
// from the queue (a RemovedFromMergeQueueEvent whose beforeCommit is
// that commit), else on its head. It returns the commit failed.
func (s *Server) FailCheck(number int, name, output string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(number)
	if p == nil || p.state != "open" {
		return "", fmt.Errorf("#%d: %w", number, ErrNotOpen)
	}
	s.refresh(p)
	sha := p.headSHA
	if p.queue != nil && p.queue.commit != "" {
		sha = p.queue.commit
	}
	s.failCheck(sha, name, output)
	if p.queue != nil {
		s.dequeue(p, "the required check "+name+" failed", "")
	}
	return sha, nil
}

// FailCheckOn fails a check run named name on the commit sha.
func (s *Server) FailCheckOn(sha, name, output string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCheck(sha, name, output)
}

func (s *Server) failCheck(sha, name, output string) {
	s.checks[sha] = append(s.checks[sha], &checkRun{id: s.id(), name: name, sha: sha, conclusion: "failure", output: output, at: s.opts.Now()})
	for _, p := range s.prs {
		if p.headSHA == sha {
			p.updated = s.opts.Now()
		}
	}
}

// green reports whether p's head may merge: no status or check run on it
// pending or failed, every Required context a success.
func (s *Server) green(p *pull) bool {
	latest := latestStatuses(s.statuses[p.headSHA])
	for _, st := range latest {
		if st.State != "success" {
			return false
		}
	}
	for _, c := range s.checks[p.headSHA] {
		if c.conclusion != "success" && c.conclusion != "neutral" && c.conclusion != "skipped" {
			return false
		}
	}
	for _, req := range s.opts.Required {
		if !slices.ContainsFunc(latest, func(st *status) bool { return st.Context == req && st.State == "success" }) {
			return false
		}
	}
	return true
}

// requiredMet reports whether every Required context is a success on
// p's head: branch protection lets it merge now.
func (s *Server) requiredMet(p *pull) bool {
	latest := latestStatuses(s.statuses[p.headSHA])
	for _, req := range s.opts.Required {
		if !slices.ContainsFunc(latest, func(st *status) bool { return st.Context == req && st.State == "success" }) {
			return false
		}
	}
	return true
}

// latestStatuses is the newest status of each context, in the order
// the contexts were first posted.
func latestStatuses(all []*status) []*status {
	var out []*status
	at := map[string]int{}
	for _, st := range all {
		if i, ok := at[st.Context]; ok {
			out[i] = st
			continue
		}
		at[st.Context] = len(out)
		out = append(out, st)
	}
	return out
}

// autoMergeAll queues every pull request armed on a branch with a merge
// queue whose required checks passed, and merges, when
// Options.AutoMerge, every pull request in a queue (in queue order) or
// with auto-merge armed whose head is green.
func (s *Server) autoMergeAll() {
	if s.opts.MergeQueue {
		// Armed on a branch with a queue: queued once the required
		// checks pass, whether or not the server merges by itself.
		for _, p := range s.prs {
			if p.state == "open" && p.autoMerge != nil && s.requiredMet(p) {
				s.addToQueue(p)
			}
		}
	}
	if !s.opts.AutoMerge {
		return
	}
	var ready []*pull
	for _, p := range s.prs {
		if p.state == "open" && p.autoMerge != nil {
			ready = append(ready, p)
		}
	}
	bases := map[string]bool{}
	for _, p := range s.prs {
		if p.queue != nil && !bases[p.base] {
			bases[p.base] = true
			ready = append(ready, s.queued(p.base)...)
		}
	}
	for _, p := range ready {
		s.refresh(p)
		if p.state == "open" && (p.queue != nil || p.autoMerge != nil) && s.green(p) {
			// The merge queue's commit says what GitHub's default says;
			// auto-merge's, what arming it asked for.
			var headline, body string
			if p.queue == nil {
				headline, body = p.autoMerge.headline, p.autoMerge.body
			}
			_, _ = s.merge(p, headline, body)
		}
	}
}
