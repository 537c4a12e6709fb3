package vault

// The modes git records for tree entries (gitlog.Entry.Mode), which admission
// and the reports of bad entries tell apart.
const (
	modeDir        = 0o040000
	modeRegular    = 0o100644
	modeExecutable = 0o100755
	modeSymlink    = 0o120000
	modeSubmodule  = 0o160000
)
