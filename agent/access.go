package agent

import "github.com/memvault/memvault/agent/internal/contract"

// recordView notes a view of file p when the store keeps views. A failure to
// note it is not the model's concern: at worst the file looks older.
func (h *Handler) recordView(p string) { contract.RecordView(h.store, p) }
