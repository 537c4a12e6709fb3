package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// faceFlags are the flags of a face an agent reaches the vault through:
// --read-only and --review.
type faceFlags struct {
	readOnly, review bool
}

// add puts the flags on c.
func (f *faceFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&f.readOnly, "read-only", false, "answer view alone: every other memory command is an error and changes nothing")
	c.Flags().BoolVar(&f.review, "review", false,
		"put the agent's writes on the review line for a person to approve ('memvault review'), as the vault's memvault.review setting does")
}

// store is the vault as the face's agent reaches it.
func (f faceFlags) store(v *vault.Vault) *vault.AgentStore {
	return v.Agent(vault.AgentOptions{Review: f.review})
}

// say tells a long-lived face's stderr what mode it serves in, when it is
// not the ordinary one: the vault's own setting may have chosen review.
func (f faceFlags) say(s *vault.AgentStore, errOut io.Writer) {
	switch {
	case f.readOnly:
		fmt.Fprintln(errOut, "memvault: read-only: view works, every other memory command answers an error")
	case s.Review():
		fmt.Fprintln(errOut, "memvault: review mode: the agent's writes wait for a person ('memvault review')")
	}
}

// reviewHelp says what review mode is, for the faces' help.
const reviewHelp = `With --review (or the vault's setting memvault.review = true) the agent's writes wait
on the vault's review line: the agent reads them back as if they were made, while main,
sync and other clones see only what a person approved with 'memvault review'. With
--read-only, view works and every other command answers an error.`

func newReviewCommand(g *globalOptions) *cobra.Command {
	var rejected, asJSON bool
	c := &cobra.Command{
		Use:   "review",
		Short: "List the agent's changes that wait for a person, with their diffs",
		Long: `Review lists the changes that wait on the vault's review line, oldest first: each with
its ID, the memory command, the agent, session and tool-use id that made it, its
decrypted diff, and marks where it deserves a close look:

  secret         added text looks like a secret, by the vault's secret policy's rules
  instructions   added text reads as an order to the model (set aside your
                 instructions, always send ... to an address, commands to run)
  mass deletion  it deletes or empties more files than an agent may unasked

Marks never block a change. Changes wait there when an agent face runs with --review
(or the vault sets memvault.review = true), and when an agent's command or session
deletes or empties more than memvault.massDeleteFiles files (default 5) or
memvault.massDeleteShare percent of the memory (default 25, from three files up).

'memvault review approve ID...' puts changes on main, each as a commit of its own
signed by your writer key; 'memvault review reject ID...' takes them out of what the
agent sees. A rejected change stays in the line's history: --rejected lists them, and
approve takes one later. The review line is this clone's alone: sync never pushes it.`,
		Example: `  memvault review
  memvault review approve 1a2b3c4d
  memvault review approve --all
  memvault review reject 1a2b3c4d 5e6f7a8b
  memvault review --rejected`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runReview(c.Context(), g, rejected, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&rejected, "rejected", false, "list the rejected changes, newest first, instead")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a change: the change, its files with diffs, held, deletes and marks")
	c.AddCommand(newSettleCommand(g, "approve"), newSettleCommand(g, "reject"))
	return c
}

// reviewed is a pending change as review prints it in JSON.
type reviewed struct {
	vault.PendingChange
	Marks []agent.Mark `json:"marks"`
}

func runReview(ctx context.Context, g *globalOptions, rejected, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	ps, err := v.Review(ctx, vault.ReviewOptions{Rejected: rejected})
	if err != nil {
		return err
	}
	if asJSON {
		for _, p := range ps {
			r := reviewed{PendingChange: p, Marks: agent.Marks(p, v.Limits())}
			if r.Files == nil {
				r.Files = []vault.FileChange{}
			}
			if r.Marks == nil {
				r.Marks = []agent.Mark{}
			}
			if err := writeRecordJSON(out, "review", r); err != nil {
				return err
			}
		}
		return nil
	}
	st := stylesFor(out)
	var b strings.Builder
	switch {
	case len(ps) == 0 && rejected:
		b.WriteString("No change was rejected.\n")
	case len(ps) == 0:
		b.WriteString("Nothing waits for review.\n")
	case rejected:
		fmt.Fprintf(&b, "%s rejected (newest first); 'memvault review approve ID' still takes one to main:\n\n", count(len(ps), "change was", "changes were"))
	default:
		fmt.Fprintf(&b, "%s for review (oldest first):\n\n", count(len(ps), "change waits", "changes wait"))
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("review: write: %w", err)
	}
	for _, p := range ps {
		if err := writePending(out, p, agent.Marks(p, v.Limits()), st); err != nil {
			return err
		}
	}
	if len(ps) > 0 && !rejected {
		_, err = fmt.Fprintln(out, "Approve with 'memvault review approve ID...' (or --all), reject with 'memvault review reject ID...'.")
	}
	return err
}

// count is "1 change waits" or "3 changes wait".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writePending prints one change of the review line: its ID and subject, who
// made it, its marks and its diff.
func writePending(out io.Writer, p vault.PendingChange, marks []agent.Mark, st styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", st.yellow("change "+changeID(p.Commit)), st.bold(escape.Name(p.Subject)))
	fmt.Fprintf(&b, "    When:        %s\n", p.Time.Local().Format("2006-01-02 15:04:05 -0700"))
	for _, t := range [][2]string{{"Agent", p.Agent}, {"Session", p.Session}, {"Tool-Use-Id", p.ToolUseID}} {
		if t[1] != "" {
			fmt.Fprintf(&b, "    %-12s %s\n", t[0]+":", escape.Name(t[1]))
		}
	}
	for _, m := range marks {
		fmt.Fprintf(&b, "    %s        %s\n", st.red("Mark:"), escape.Name(m.Kind+": "+m.Why))
	}
	b.WriteString("\n")
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("review: write: %w", err)
	}
	if err := writeDiffs(out, p.Files, st); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out)
	return err
}

func newSettleCommand(g *globalOptions, verb string) *cobra.Command {
	var all bool
	short := "Put pending changes on main, each as a commit signed by your writer key"
	long := `Approve replays each change the IDs name (a pending one, or a rejected one) on main, oldest
first, as one commit of its own with the change's command, path, agent, session and
tool-use id, signed by this vault's writer key: only a writer approves. A change that
does not apply (main changed the same lines since, or it builds on a pending change
not approved) stops the approval there; the ones before it stay approved. The agent's
view then stands on main again.`
	if verb == "reject" {
		short = "Take pending changes out of what the agent sees; they stay in the line's history"
		long = `Reject takes each pending change the IDs name out of what the agent sees, newest
first. The change stays in the review line's history: 'memvault review --rejected'
lists it, and 'memvault review approve ID' still puts it on main later. A change that
later pending changes build on (they touch the same lines) is rejected with them, or
after them.`
	}
	c := &cobra.Command{
		Use:   verb + " ID... | --all",
		Short: short,
		Long: long + `

An ID is 4 or more hex digits of a change's ID, as 'memvault review' shows it.`,
		Example: fmt.Sprintf("  memvault review %s 1a2b3c4d\n  memvault review %s --all", verb, verb),
		RunE: func(c *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return &usageError{cmd: c.CommandPath(), err: errors.New("name the changes by ID, or give --all")}
			}
			if all {
				args = []string{vault.ReviewAll}
			}
			err := runSettle(c.Context(), g, verb, args, c.OutOrStdout())
			if errors.Is(err, vault.ErrConflict) {
				return &hintedError{err: err, hint: "'memvault review' shows each change with its diff."}
			}
			return err
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every pending change")
	return c
}

func runSettle(ctx context.Context, g *globalOptions, verb string, ids []string, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	subjects := map[string]string{}
	ps, err := v.Review(ctx, vault.ReviewOptions{})
	if err != nil {
		return err
	}
	for _, p := range ps {
		subjects[p.Commit] = p.Subject
	}
	if verb == "approve" {
		if rs, err := v.Review(ctx, vault.ReviewOptions{Rejected: true}); err == nil {
			for _, p := range rs {
				subjects[p.Commit] = p.Subject
			}
		}
	}
	var res vault.ReviewResult
	var serr error
	if verb == "approve" {
		res, serr = v.Approve(ctx, ids)
	} else {
		res, serr = v.Reject(ctx, ids)
	}
	st := stylesFor(out)
	var b strings.Builder
	for i, id := range res.Settled {
		fmt.Fprintf(&b, "%s %s (%s)", strings.TrimSuffix(verb, "e")+"ed", st.yellow(changeID(id)), escape.Name(subjects[id]))
		switch {
		case verb != "approve":
		case res.Commits[i] != "":
			fmt.Fprintf(&b, " as %s", st.yellow(shortHash(res.Commits[i])))
		default:
			b.WriteString(": main held it already") // an approval that changed nothing made no commit
		}
		b.WriteString("\n")
	}
	if verb == "reject" && len(res.Settled) > 0 {
		b.WriteString("A rejected change stays in the review line's history: 'memvault review --rejected' lists it.\n")
	}
	for _, p := range res.Conflicts {
		fmt.Fprintf(&b, "conflict: the agent's view of %s holds main's lines and the pending ones between markers\n", escape.Name(p))
	}
	if len(res.Settled) == 0 && serr == nil {
		b.WriteString("Nothing waits for review.\n")
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("review: write: %w", err)
	}
	return serr
}

// changeID is the first 12 hex digits of a change's ID, as the memory tool's
// answer of a held change names it.
func changeID(id string) string { return id[:min(12, len(id))] }
