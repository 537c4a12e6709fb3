package agent

// viewRecorder is a store that notes which files are read, so that files no
// one uses can expire (memvault expire). *vault.Vault is one.
type viewRecorder interface {
	RecordView(p string) error
}

// recordView notes a view of file p when the store keeps views. A failure to
// note it is not the model's concern: at worst the file looks older.
func (h *Handler) recordView(p string) { recordView(h.store, p) }

// recordView notes a read of file p in store, when store keeps views. Both
// faces that hand a file's content to a model call it: the memory tool's view
// and an MCP resource read.
func recordView(store Store, p string) {
	if r, ok := store.(viewRecorder); ok {
		_ = r.RecordView(p)
	}
}
