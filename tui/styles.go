package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles is every style the interface draws with, in one place. Colours come in
// light and dark pairs; without colour (NO_COLOR) the selection and the focus
// are still told apart by reverse video, bold and the cursor mark.
type Styles struct {
	Border        lipgloss.Style // a pane's frame
	BorderFocused lipgloss.Style // the frame of the pane with the focus
	Title         lipgloss.Style // a pane's title, in its top border
	TitleFocused  lipgloss.Style

	Cursor       lipgloss.Style // the selected row of the focused pane
	CursorBlur   lipgloss.Style // the selected row of another pane
	Marked       lipgloss.Style // a commit marked for a two-commit diff
	Dir          lipgloss.Style
	File         lipgloss.Style
	Size         lipgloss.Style
	Match        lipgloss.Style // the part of a name the filter matched
	Found        lipgloss.Style // text a find in the content matched
	FoundCurrent lipgloss.Style // the match n and N went to
	Hash         lipgloss.Style
	Graph        lipgloss.Style // the history's merge graph
	Time         lipgloss.Style
	Command      lipgloss.Style
	Path         lipgloss.Style
	Agent        lipgloss.Style
	ToolUse      lipgloss.Style
	Checkpoint   lipgloss.Style
	LineNumber   lipgloss.Style
	DiffAdd      lipgloss.Style
	DiffDel      lipgloss.Style
	DiffHunk     lipgloss.Style
	DiffHeader   lipgloss.Style
	Faint        lipgloss.Style // hints and placeholders
	ErrorTitle   lipgloss.Style
	ErrorText    lipgloss.Style
	Status       lipgloss.Style // the status bar
	StatusError  lipgloss.Style
	StatusInfo   lipgloss.Style
	DialogTitle  lipgloss.Style // the first line of a confirmation
	Help         help.Styles
}

// NewStyles returns the styles for a terminal with a dark (or light) background,
// or, with noColor, styles that use no colour at all.
func NewStyles(dark, noColor bool) Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) lipgloss.Style {
		if noColor {
			return lipgloss.NewStyle()
		}
		return lipgloss.NewStyle().Foreground(ld(lipgloss.Color(light), lipgloss.Color(darkc)))
	}
	s := Styles{
		Border:        c("#b8b8c8", "#4a4a5a"),
		BorderFocused: c("#6b4fd8", "#9d87ff").Bold(true),
		Title:         c("#6c6c80", "#9090a8"),
		TitleFocused:  c("#5a3fc8", "#b8a8ff").Bold(true),
		Cursor:        lipgloss.NewStyle().Reverse(true).Bold(true),
		CursorBlur:    lipgloss.NewStyle().Underline(true),
		Marked:        c("#b05a00", "#ffb86c").Bold(true),
		Dir:           c("#2f5fd0", "#79a8ff").Bold(true),
		File:          lipgloss.NewStyle(),
		Size:          c("#8a8a9a", "#70708a"),
		Match:         c("#b05a00", "#ffb86c").Underline(true),
		Found:         c("#b05a00", "#ffb86c").Underline(true).Bold(true),
		FoundCurrent:  lipgloss.NewStyle().Reverse(true).Bold(true),
		Hash:          c("#a0620c", "#e0af68"),
		Graph:         c("#1f7a8a", "#7dcfff"),
		Time:          c("#3a7a3a", "#9ece6a"),
		Command:       c("#8a3fb8", "#bb9af7"),
		Path:          lipgloss.NewStyle(),
		Agent:         c("#1f7a8a", "#7dcfff"),
		ToolUse:       c("#8a8a9a", "#70708a"),
		Checkpoint:    c("#b05a00", "#ffb86c").Bold(true),
		LineNumber:    c("#a0a0b0", "#5a5a70"),
		DiffAdd:       c("#1e7a1e", "#9ece6a"),
		DiffDel:       c("#b02a2a", "#f7768e"),
		DiffHunk:      c("#1f7a8a", "#7dcfff"),
		DiffHeader:    lipgloss.NewStyle().Bold(true),
		Faint:         c("#8a8a9a", "#70708a"),
		ErrorTitle:    c("#b02a2a", "#f7768e").Bold(true),
		ErrorText:     lipgloss.NewStyle(),
		Status:        c("#4a4a5a", "#b8b8c8"),
		StatusError:   c("#b02a2a", "#f7768e").Bold(true),
		StatusInfo:    c("#1e7a1e", "#9ece6a"),
		DialogTitle:   lipgloss.NewStyle().Bold(true),
		Help:          help.DefaultStyles(dark),
	}
	if noColor {
		s.Help = help.Styles{
			Ellipsis: lipgloss.NewStyle(), ShortKey: lipgloss.NewStyle().Bold(true),
			ShortDesc: lipgloss.NewStyle(), ShortSeparator: lipgloss.NewStyle(),
			FullKey: lipgloss.NewStyle().Bold(true), FullDesc: lipgloss.NewStyle(),
			FullSeparator: lipgloss.NewStyle(),
		}
		s.Marked = s.Marked.Bold(true)
		s.DiffHeader = s.DiffHeader.Bold(true)
	}
	return s
}
