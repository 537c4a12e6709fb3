package main

import (
	"bytes"
	"context"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		// A build that recorded no commit (a source archive, -buildvcs=false)
		// still names the release it is on the way to.
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, version},
		{debug.BuildInfo{}, version},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}}, version + "+0123456789ab"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}, version + "+0123456789ab.dirty"},
		// Go 1.24 and later stamp a pseudo-version on a build in a checkout
		// that is not at a tag: it names a commit, not a release, and once
		// was printed as the version itself.
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127154236-91ef971f39ee"}}, version + "+91ef971f39ee"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127154236-91ef971f39ee+dirty"}}, version + "+91ef971f39ee.dirty"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261127154236-91ef971f39ee"}}, version + "+91ef971f39ee"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.2.0-rc.1.0.20261127154236-91ef971f39ee"}}, version + "+91ef971f39ee"},
		// With the build's VCS data too, its full revision is the one named.
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127154236-0123456789ab+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}, version + "+0123456789ab.dirty"},
		// A tag is a release, whatever else the build recorded.
		{debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}}, "v0.1.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.2.0-rc.1"}}, "v0.2.0-rc.1"},
	} {
		if got := versionOf(&c.bi); got != c.want {
			t.Errorf("versionOf(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

// --version prints what the MCP server reports as its serverInfo version.
func TestVersionFlag(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, nil, &out, &errw); code != 0 {
		t.Fatalf("--version exited %d: %s", code, errw.String())
	}
	if want := "memvault version " + buildVersion() + "\n"; out.String() != want {
		t.Errorf("--version printed %q, want %q", out.String(), want)
	}
}

// TestVersionInSource: the version in the source is a release version (vMAJOR.MINOR.PATCH,
// maybe -dev), so a build with no VCS information still says something a bug report can quote.
func TestVersionInSource(t *testing.T) {
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-dev)?$`).MatchString(version) {
		t.Errorf("version = %q, want vMAJOR.MINOR.PATCH with an optional -dev", version)
	}
}
