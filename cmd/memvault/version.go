package main

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// version is memvault's release version, set here at each release ("v0.1.0")
// and moved on right after it to the next one with "-dev" ("v0.2.0-dev"), so a
// build from source says which release it is on the way to even when the
// build recorded nothing else (a source archive, or -buildvcs=false).
const version = "v0.1.0-dev"

// buildVersion is memvault's version as --version prints it and the MCP server
// reports it (see versionOf).
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	return versionOf(bi)
}

// pseudoVersion matches a module pseudo-version, which names a commit and no
// release: v0.0.0-20261127154236-91ef971f39ee, v1.2.4-0.20261127154236-91ef971f39ee,
// v1.3.0-pre.0.20261127154236-91ef971f39ee, each maybe with "+dirty" (Go 1.24
// and later stamp one on every build in a checkout). The groups are the commit
// and the build suffix.
var pseudoVersion = regexp.MustCompile(`^v\d+\.(?:0\.0-|\d+\.\d+-(?:[^+]*\.)?0\.)\d{14}-([0-9a-f]{12,40})(\+[0-9A-Za-z.-]+)?$`)

// versionOf is the version a build with this information reports:
//
//   - a release: the module's version, as tagged (go install ...@v0.1.0, or a
//     build in a checkout at that tag);
//   - else the release the source is on the way to with the commit it was
//     built from, "v0.1.0-dev+0123456789ab" (".dirty" after it when the
//     checkout had changes), the commit taken from the build's VCS data or,
//     when it recorded none, from the module's pseudo-version (what go
//     install ...@latest of an untagged commit, and Go 1.24's own stamping,
//     give);
//   - else, when no commit is known at all, the bare version.
func versionOf(bi *debug.BuildInfo) string {
	mod := bi.Main.Version
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = true
		}
	}
	if m := pseudoVersion.FindStringSubmatch(mod); m != nil {
		if rev == "" {
			rev = m[1]
		}
		dirty = dirty || strings.Contains(m[2], "dirty")
	} else if mod != "" && mod != "(devel)" {
		return mod
	}
	if rev == "" {
		return version
	}
	v := version + "+" + rev[:min(12, len(rev))]
	if dirty {
		v += ".dirty"
	}
	return v
}
