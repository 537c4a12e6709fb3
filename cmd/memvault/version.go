package main

import "runtime/debug"

// version is memvault's release version, set here at each release ("v0.1.0")
// and moved on right after it to the next one with "-dev" ("v0.2.0-dev"), so a
// build from source says which release it is on the way to even when the
// build recorded nothing else (a source archive, or -buildvcs=false).
const version = "v0.1.0-dev"

// buildVersion is memvault's version as --version prints it and the MCP server
// reports it: the module's version when built as a module (go install
// ...@v1.2.3), else version with the commit it was built from appended when
// the build recorded one ("v0.1.0-dev+0123456789ab", ".dirty" after it when
// the checkout had changes).
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = ".dirty"
		}
	}
	if rev == "" {
		return version
	}
	return version + "+" + rev[:min(12, len(rev))] + dirty
}
