// Package buildinfo owns what a hosteval binary knows about its own build:
// the module version, the VCS revision and whether the tree was modified, the
// commit time, and the Go toolchain and platform it was built with.
//
// The Go toolchain stamps most of this into every binary (read back with
// runtime/debug.ReadBuildInfo): `go install .../cmd/hosteval@v1.2.3` records
// the version, and `go build` in a git clone records a pseudo-version, the
// revision and the modified flag. Where it cannot (a build from a source
// tree without .git, as in the container build, or in a git worktree, which
// the go command does not recognise: golang/go#58218), the release recipe
// and the Makefile pass the same facts at link time:
//
//	-ldflags "-X github.com/hosteval/hosteval/internal/buildinfo.version=v1.2.3
//	          -X github.com/hosteval/hosteval/internal/buildinfo.revision=$(git rev-parse HEAD)
//	          -X github.com/hosteval/hosteval/internal/buildinfo.modified=false"
//
// A value given at link time wins over the stamped one: it is what the person
// building asked for.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time with -X (see the package comment); empty when not given.
// They are written by the linker only, never at run time.
var (
	version  string
	revision string
	modified string
)

// Devel is the version of a binary whose version nobody recorded (go run, go
// test, a go build outside a repository).
const Devel = "devel"

// Info is what one binary knows about its build. The JSON names are stable:
// `hosteval version -json` prints them.
type Info struct {
	// Version is a module version (v1.2.3), a pseudo-version
	// (v0.0.0-20261130101128-75b8e07f9f16+dirty), a `git describe` name, or
	// Devel.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from; empty when
	// unknown (a go install from the module proxy records none).
	Revision string `json:"revision,omitempty"`
	// Time is the commit time of Revision (RFC 3339), when the toolchain
	// recorded it.
	Time string `json:"time,omitempty"`
	// Modified says the working tree had uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary (go1.26.8).
	GoVersion string `json:"go"`
	// Platform is GOOS/GOARCH of the binary.
	Platform string `json:"platform"`
}

// Read returns this binary's build facts.
func Read() Info {
	bi, _ := debug.ReadBuildInfo() // false only in a binary built without module support
	return fromBuildInfo(bi, version, revision, modified)
}

// fromBuildInfo merges the toolchain's stamp with the link-time values.
func fromBuildInfo(bi *debug.BuildInfo, ldVersion, ldRevision, ldModified string) Info {
	info := Info{Version: Devel, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		info.Version = ldVersion
	}
	if ldRevision != "" {
		if ldRevision != info.Revision {
			info.Time = "" // the stamped time belongs to another commit
		}
		info.Revision = ldRevision
	}
	if ldModified != "" {
		info.Modified = ldModified == "true"
	}
	return info
}

// String is the one-line form: "v1.2.3 (3731ec6a5b1c, modified) go1.26.8 linux/amd64".
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	var notes []string
	if i.Revision != "" {
		notes = append(notes, shortRevision(i.Revision))
	}
	if i.Modified {
		notes = append(notes, "modified")
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
	}
	fmt.Fprintf(&b, " %s %s", i.GoVersion, i.Platform)
	return b.String()
}

// shortRevision is a commit's first 12 hex digits, as in a pseudo-version.
func shortRevision(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
