package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the interface answers to. The help bar and the full help
// are generated from it, and a binding that does not apply where the focus is
// is disabled, so it neither matches nor shows.
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Open     key.Binding // fold or unfold a directory; show a commit's diff
	Fold     key.Binding
	Unfold   key.Binding
	NextPane key.Binding
	PrevPane key.Binding

	Filter     key.Binding
	Find       key.Binding // find a text in the content pane
	NextMatch  key.Binding
	PrevMatch  key.Binding
	Scope      key.Binding // whole-vault history or the selected file's
	Mark       key.Binding // mark a commit for a two-commit diff
	AsOf       key.Binding // the file as it was at the selected commit
	Restore    key.Binding
	Revert     key.Binding
	Rollback   key.Binding
	Checkpoint key.Binding
	Blame      key.Binding // who wrote each line of the selected file
	Search     key.Binding // search the content of every file
	Pickaxe    key.Binding // the history's commits that add or remove a text
	Jump       key.Binding // go to a commit by hash or checkpoint
	Edit       key.Binding // edit the selected file in place
	Undo       key.Binding // take back the last action made here
	Redo       key.Binding // bring back what Undo took back
	Sync       key.Binding // sync with the default remote
	Conflicts  key.Binding // list the files a merge left in conflict
	TakeOurs   key.Binding // in the conflicts: settle a file as this vault had it
	TakeTheirs key.Binding // in the conflicts: settle a file as the remote had it
	Wrap       key.Binding // wrap long lines in the content, or cut them
	Words      key.Binding // diffs by words, or by lines
	New        key.Binding // a new file, in the editor
	Move       key.Binding // move (rename) the selected file or directory
	Delete     key.Binding // delete the selected file or directory
	Review     key.Binding // open the changes that wait for a person
	Approve    key.Binding // in the review: put the chosen change on main
	ApproveAll key.Binding // in the review: every change
	Reject     key.Binding // in the review: take the chosen change out of the agent's view
	RejectAll  key.Binding // in the review: every change

	Save         key.Binding // in the editor: write the file as one commit
	NextConflict key.Binding // in the editor: the next conflict marker
	PrevConflict key.Binding // in the editor: the previous conflict marker

	Confirm key.Binding // in a dialog
	Submit  key.Binding // accept a filter or a checkpoint name
	Cancel  key.Binding // close a dialog, clear the filter or the marks
	Help    key.Binding
	Quit    key.Binding
}

// DefaultKeyMap returns the keys a user of git TUIs would guess.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Up:         b([]string{"k", "up"}, "↑/k", "up"),
		Down:       b([]string{"j", "down"}, "↓/j", "down"),
		PageUp:     b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:   b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top:        b([]string{"g", "home"}, "g", "top"),
		Bottom:     b([]string{"G", "end"}, "G", "bottom"),
		Open:       b([]string{"enter"}, "enter", "open"),
		Fold:       b([]string{"h", "left"}, "←/h", "fold"),
		Unfold:     b([]string{"l", "right"}, "→/l", "unfold"),
		NextPane:   b([]string{"tab"}, "tab", "next pane"),
		PrevPane:   b([]string{"shift+tab"}, "shift+tab", "previous pane"),
		Filter:     b([]string{"/"}, "/", "filter"),
		Find:       b([]string{"/"}, "/", "find in text"),
		NextMatch:  b([]string{"n"}, "n/N", "next/prev match"),
		PrevMatch:  b([]string{"N"}, "N", "previous match"),
		Scope:      b([]string{"f"}, "f", "file/all history"),
		Mark:       b([]string{"space", "m"}, "space", "mark"),
		AsOf:       b([]string{"v"}, "v", "as it was/diff"),
		Restore:    b([]string{"r"}, "r", "restore file"),
		Revert:     b([]string{"t"}, "t", "revert commit"),
		Rollback:   b([]string{"R"}, "R", "roll back vault"),
		Checkpoint: b([]string{"c"}, "c", "checkpoint"),
		Blame:      b([]string{"b"}, "b", "blame file"),
		Search:     b([]string{"s"}, "s", "search content"),
		Pickaxe:    b([]string{"S"}, "S", "history by text"),
		Jump:       b([]string{":"}, ":", "go to commit"),
		Edit:       b([]string{"e"}, "e", "edit file"),
		Undo:       b([]string{"z"}, "z", "undo action"),
		Redo:       b([]string{"ctrl+z"}, "ctrl+z", "redo action"),
		Sync:       b([]string{"p"}, "p", "sync remote"),
		Conflicts:  b([]string{"C"}, "C", "conflicts"),
		TakeOurs:   b([]string{"o"}, "o", "take ours"),
		TakeTheirs: b([]string{"t"}, "t", "take theirs"),
		Wrap:       b([]string{"w"}, "w", "wrap/cut lines"),
		Words:      b([]string{"W"}, "W", "diff by words"),
		New:        b([]string{"n"}, "n", "new file"),
		Move:       b([]string{"M"}, "M", "move/rename"),
		Delete:     b([]string{"d"}, "d", "delete"),
		Review:     b([]string{"P"}, "P", "review pending"),
		Approve:    b([]string{"space"}, "space/a", "approve one/all"),
		ApproveAll: b([]string{"a"}, "a", "approve all"),
		Reject:     b([]string{"d"}, "d/D", "reject one/all"),
		RejectAll:  b([]string{"D"}, "D", "reject all"),

		Save:         b([]string{"ctrl+s"}, "ctrl+s", "save edit"),
		NextConflict: b([]string{"alt+n"}, "alt+n", "next conflict"),
		PrevConflict: b([]string{"alt+p"}, "alt+p", "prev conflict"),
		Confirm:      b([]string{"enter", "y"}, "enter/y", "confirm"),
		Submit:       b([]string{"enter"}, "enter", "accept"),
		Cancel:       b([]string{"esc"}, "esc", "back"),
		Help:         b([]string{"?"}, "?", "help"),
		Quit:         b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// ShortHelp implements help.KeyMap: the help bar, for where the focus is; the
// bar always ends with Help and Quit.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{
		k.Save, k.NextConflict, k.Confirm, k.Submit, k.Approve, k.Reject, k.Conflicts, k.TakeOurs, k.TakeTheirs, k.Open, k.NextPane, k.Restore, k.Revert, k.Rollback, k.Mark,
		k.AsOf, k.Scope, k.Filter, k.Find, k.NextMatch, k.Checkpoint, k.Cancel,
	}
}

// FullHelp implements help.KeyMap: every key, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Jump},
		{k.Open, k.Fold, k.Unfold, relabel(k.NextPane, "tab/⇧tab", "next/prev pane"), k.Filter, k.Find, k.NextMatch, k.Wrap, k.Words},
		{k.Scope, k.Mark, k.AsOf, k.Checkpoint, k.Blame, k.Search, k.Pickaxe, k.Review},
		{k.Restore, k.Revert, k.Rollback, k.Undo, k.Redo, k.Edit, k.New, k.Move, k.Delete, k.Sync},
		{k.Conflicts, k.TakeOurs, k.TakeTheirs, k.Save, k.NextConflict, k.PrevConflict, k.Cancel, k.Help, k.Quit},
	}
}

// relabel is b as the full help shows it, under another key and description:
// one row for two keys that go together.
func relabel(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// mode is what the keys currently act on.
type mode int

const (
	modeBrowse    mode = iota
	modeFilter         // typing a filter
	modeDialog         // a confirmation
	modePrompt         // typing a checkpoint name
	modeHelp           // the full help is open
	modeSearch         // typing a search of the files' content
	modePickaxe        // typing the text the history's commits must add or remove
	modeJump           // typing a commit hash or checkpoint name to go to
	modeEdit           // editing a file in place
	modeConflicts      // the list of files in conflict is open
	modeFind           // typing a text to find in the content
	modeNew            // typing the path of a new file
	modeMove           // typing where a file or directory goes
	modeReview         // the review pane is open
)

// typing tells whether the mode edits the one-line input.
func (m mode) typing() bool {
	return m == modeFilter || m == modePrompt || m == modeSearch || m == modePickaxe || m == modeJump || m == modeFind || m == modeNew || m == modeMove
}

// enable turns on the bindings that apply in mode m with the focus on pane p,
// given whether a commit is selected (in the history, or in the content that
// follows it), whether a file is, and whether a find in the content is on.
func (k *KeyMap) enable(m mode, p pane, commit, file, found bool) {
	browse := m == modeBrowse
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom, &k.NextPane, &k.PrevPane, &k.Scope, &k.Checkpoint} {
		b.SetEnabled(browse)
	}
	k.Filter.SetEnabled(browse && p != paneContent)
	k.Find.SetEnabled(browse && p == paneContent)
	k.NextMatch.SetEnabled(browse && p == paneContent && found)
	k.PrevMatch.SetEnabled(browse && p == paneContent && found)
	k.Open.SetEnabled(browse && p != paneContent || m == modeConflicts)
	k.Fold.SetEnabled(browse && p == paneTree)
	k.Unfold.SetEnabled(browse && p == paneTree)
	k.Mark.SetEnabled(browse && p == paneHistory && commit)
	k.AsOf.SetEnabled(browse && commit)
	k.Restore.SetEnabled(browse && commit && file)
	k.Revert.SetEnabled(browse && commit)
	k.Rollback.SetEnabled(browse && commit)
	k.Confirm.SetEnabled(m == modeDialog || m == modeReview)
	k.Submit.SetEnabled(m.typing())
	k.Blame.SetEnabled(browse)
	k.Search.SetEnabled(browse)
	k.Pickaxe.SetEnabled(browse)
	k.Jump.SetEnabled(browse)
	k.Edit.SetEnabled(browse)
	k.Undo.SetEnabled(browse)
	k.Redo.SetEnabled(browse)
	k.Sync.SetEnabled(browse)
	k.Conflicts.SetEnabled(browse || m == modeConflicts)
	k.TakeOurs.SetEnabled(m == modeConflicts)
	k.TakeTheirs.SetEnabled(m == modeConflicts)
	k.Wrap.SetEnabled(browse)
	k.Words.SetEnabled(browse)
	k.New.SetEnabled(browse && p == paneTree)
	k.Move.SetEnabled(browse && p == paneTree)
	k.Delete.SetEnabled(browse && p == paneTree)
	k.Review.SetEnabled(browse || m == modeReview)
	for _, b := range []*key.Binding{&k.Approve, &k.ApproveAll, &k.Reject, &k.RejectAll} {
		b.SetEnabled(m == modeReview)
	}
	k.Save.SetEnabled(m == modeEdit)
	k.NextConflict.SetEnabled(m == modeEdit)
	k.PrevConflict.SetEnabled(m == modeEdit)
	k.Cancel.SetEnabled(true)
	k.Help.SetEnabled(browse || m == modeHelp)
	k.Quit.SetEnabled(browse || m == modeHelp || m == modeConflicts || m == modeReview)
}
