package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	const rev = "75b8e07f9f16b6cf8e8a423d1c4316ba403c0aa9"
	platform := runtime.GOOS + "/" + runtime.GOARCH
	stamped := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hosteval/hosteval", Version: version}, Settings: settings}
	}
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: rev},
		{Key: "vcs.time", Value: "2026-11-30T10:11:28Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name                string
		bi                  *debug.BuildInfo
		ldVer, ldRev, ldMod string
		want                Info
		wantString          string
	}{
		{
			name:       "go install from the module proxy: a version, no VCS",
			bi:         stamped("v1.2.3"),
			want:       Info{Version: "v1.2.3", GoVersion: "go1.26.8", Platform: platform},
			wantString: "v1.2.3 go1.26.8 " + platform,
		},
		{
			name: "go build in a clone with changes: pseudo-version and VCS stamp",
			bi:   stamped("v0.0.0-20261130101128-75b8e07f9f16+dirty", vcs...),
			want: Info{Version: "v0.0.0-20261130101128-75b8e07f9f16+dirty", Revision: rev, Time: "2026-11-30T10:11:28Z",
				Modified: true, GoVersion: "go1.26.8", Platform: platform},
			wantString: "v0.0.0-20261130101128-75b8e07f9f16+dirty (75b8e07f9f16, modified) go1.26.8 " + platform,
		},
		{
			name:       "go run or go test: devel",
			bi:         stamped("(devel)"),
			want:       Info{Version: Devel, GoVersion: "go1.26.8", Platform: platform},
			wantString: "devel go1.26.8 " + platform,
		},
		{
			name:       "no build info at all",
			bi:         nil,
			want:       Info{Version: Devel, GoVersion: runtime.Version(), Platform: platform},
			wantString: "devel " + runtime.Version() + " " + platform,
		},
		{
			name:  "release recipe in a worktree: link-time values only",
			bi:    stamped("(devel)"),
			ldVer: "v1.3.0", ldRev: rev, ldMod: "false",
			want:       Info{Version: "v1.3.0", Revision: rev, GoVersion: "go1.26.8", Platform: platform},
			wantString: "v1.3.0 (75b8e07f9f16) go1.26.8 " + platform,
		},
		{
			name:  "link-time values win over the stamp; another commit's time is dropped",
			bi:    stamped("v0.0.0-20261130101128-75b8e07f9f16+dirty", vcs...),
			ldVer: "v1.3.0", ldRev: "0123456789abcdef0123456789abcdef01234567", ldMod: "false",
			want: Info{Version: "v1.3.0", Revision: "0123456789abcdef0123456789abcdef01234567",
				GoVersion: "go1.26.8", Platform: platform},
			wantString: "v1.3.0 (0123456789ab) go1.26.8 " + platform,
		},
		{
			name:  "a link-time revision equal to the stamp keeps its time",
			bi:    stamped("(devel)", vcs...),
			ldRev: rev,
			want: Info{Version: Devel, Revision: rev, Time: "2026-11-30T10:11:28Z", Modified: true,
				GoVersion: "go1.26.8", Platform: platform},
			wantString: "devel (75b8e07f9f16, modified) go1.26.8 " + platform,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi, tt.ldVer, tt.ldRev, tt.ldMod)
			if got != tt.want {
				t.Errorf("fromBuildInfo:\n got %+v\nwant %+v", got, tt.want)
			}
			if s := got.String(); s != tt.wantString {
				t.Errorf("String() = %q, want %q", s, tt.wantString)
			}
		})
	}
}

// A test binary carries no version: Read must say so rather than invent one.
func TestReadInTestBinary(t *testing.T) {
	got := Read()
	if got.Version != Devel {
		t.Errorf("Read().Version = %q in a test binary, want %q", got.Version, Devel)
	}
	if got.GoVersion != runtime.Version() {
		t.Errorf("Read().GoVersion = %q, want %q", got.GoVersion, runtime.Version())
	}
}
