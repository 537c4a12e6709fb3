package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault/escape"
)

func newStatusCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status",
		Short: "Say where the vault stands: branch, remotes, conflicts, identity",
		Long: `Status says where the vault's branch is (its last commit), how far main is ahead
of each remote (commits a push sends) and behind it (commits a pull brings in), as
git status counts them, as of the last sync, pull or push with that remote (status
itself does not go to the network), which memory files hold conflict markers a
merge left or were moved aside by one, which entries of the tree are no memory
file memvault reads (each fails alone; the rest reads as usual), how many of the
agent's changes wait for review, and the identity
in use: its keys, the other keys it reads with (those a rekey retired, and any
further --identity), whether it reads the current files and whether it reads all
of the history.

Settle a conflict with 'memvault edit PATH'. With --json, one object: branch, head
(the fields of 'memvault log --json'), remotes (name, url, known, ahead: commits
main has and the remote lacks, behind: the other way),
conflicts (path, kind: markers or moved-aside), conflicts_unknown when the files
could not be read to tell, bad_entries (path, reason: entries of the tree that are
no memory file memvault reads, such as one added by hand with git), and identity
(path, keys, others, reads_current, reads_history, unreadable_recipient_sets,
trouble), and pending: the agent's changes that wait for review ('memvault review').`,
		Example: `  memvault status
  memvault status --json | jq '.remotes[] | select(.ahead > 0)'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runStatus(c.Context(), g, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the status as one JSON object")
	return c
}

func runStatus(ctx context.Context, g *globalOptions, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	st, err := v.Status(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if st.Head.Parents == nil {
			st.Head.Parents = []string{}
		}
		return writeRecordJSON(out, "status", st)
	}
	var b strings.Builder
	h := st.Head
	what := h.Command
	if h.Path != "" {
		what += " " + h.Path
	}
	fmt.Fprintf(&b, "branch     %s at %s (%s, %s)\n", st.Branch, short(h.Commit), h.Time.Local().Format("2006-01-02 15:04:05"), escape.Name(what))
	if len(st.Remotes) == 0 {
		b.WriteString("remotes    none ('memvault remote add NAME URL' adds one)\n")
	}
	for _, r := range st.Remotes {
		var where string
		switch {
		case !r.Known:
			where = "not synced yet"
		case r.Ahead == 0 && r.Behind == 0:
			where = "up to date"
		case r.Behind == 0:
			where = fmt.Sprintf("main is %d ahead: 'memvault push %s' sends %s", r.Ahead, escape.Name(r.Name), them(r.Ahead))
		case r.Ahead == 0:
			where = fmt.Sprintf("main is %d behind: 'memvault pull %s' brings %s in", r.Behind, escape.Name(r.Name), them(r.Behind))
		default:
			where = fmt.Sprintf("main is %d ahead, %d behind: 'memvault sync %s' merges", r.Ahead, r.Behind, escape.Name(r.Name))
		}
		fmt.Fprintf(&b, "remote     %s  %s  %s\n", escape.Name(r.Name), escape.Name(r.URL), where)
	}
	id := st.Identity
	keys := make([]string, len(id.Keys))
	for i, k := range id.Keys {
		keys[i] = abbrevKey(k)
	}
	fmt.Fprintf(&b, "identity   %s (%s)\n", escape.Name(id.Path), strings.Join(keys, ", "))
	for _, o := range id.Others {
		fmt.Fprintf(&b, "reads with %s\n", escape.Name(o))
	}
	switch {
	case id.Trouble != "":
		fmt.Fprintf(&b, "reads      nothing: %s\n", userMessage(fmt.Errorf("%s", id.Trouble)))
	case id.ReadsCurrent && id.ReadsHistory:
		b.WriteString("reads      everything: the current files and all of the history\n")
	case id.ReadsCurrent:
		fmt.Fprintf(&b, "reads      the current files, not all of the history (%d recipient sets hold none of its keys)\n", id.Unreadable)
	default:
		b.WriteString("reads      not the current files: its keys are not among the vault's recipients\n")
	}
	if st.ConflictsUnknown != "" {
		fmt.Fprintf(&b, "conflicts  unknown: %s\n", st.ConflictsUnknown)
	} else if len(st.Conflicts) == 0 {
		b.WriteString("conflicts  none\n")
	}
	for _, c := range st.Conflicts {
		how := "holds conflict markers"
		if c.Kind == "moved-aside" {
			how = "moved aside by a merge"
		}
		fmt.Fprintf(&b, "conflict   %s  %s\n", escape.Name(c.Path), how)
	}
	if len(st.Conflicts) > 0 {
		b.WriteString("Settle each with: memvault edit PATH\n")
	}
	for _, e := range st.BadEntries {
		fmt.Fprintf(&b, "bad entry  %s  %s\n", escape.Name(e.Path), escape.Name(e.Reason))
	}
	if len(st.BadEntries) > 0 {
		b.WriteString("memvault reads the rest; 'memvault fsck' says where each came from, 'memvault fsck --repair' leaves them out\n")
	}
	if st.Pending > 0 {
		fmt.Fprintf(&b, "review     %s for a person: memvault review\n", count(st.Pending, "change waits", "changes wait"))
	}
	_, err = io.WriteString(out, b.String())
	return err
}

// them is "it" for one commit, "them" for more.
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// short is a commit hash as log prints it.
func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// abbrevKey shortens a public key for a line of status.
func abbrevKey(k string) string {
	if len(k) > 20 {
		return k[:12] + "…" + k[len(k)-6:]
	}
	return k
}
