// Command releasecheck checks what `make release` wrote into dist/ before
// anyone publishes it: one hosteval binary per platform, each in its
// platform's executable format (ELF, Mach-O, PE) for the right architecture,
// statically linked where the platform allows it (Linux; on macOS and Windows
// only the system's own libraries), built with CGO_ENABLED=0 and -trimpath,
// stamped with the release's version and revision, and listed with its right
// SHA-256 in the checksums file. The binary for this machine is run and must
// print the same version and revision. It publishes nothing.
//
// usage: go run ./tools/releasecheck -dist dist -version v1.2.3 -revision $(git rev-parse HEAD)
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

const (
	mainPackage  = "github.com/hosteval/hosteval/cmd/hosteval"
	buildinfoPkg = "github.com/hosteval/hosteval/internal/buildinfo"
)

// platforms are the release's GOOS/GOARCH pairs; the Makefile and
// .goreleaser.yaml build the same list.
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("releasecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dist := fs.String("dist", "dist", "the folder make release wrote")
	version := fs.String("version", "", "the release's version, as passed to make release (v1.2.3)")
	revision := fs.String("revision", "", "the commit the release was built from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *version == "" || *revision == "" {
		fmt.Fprintln(stderr, "releasecheck: -version and -revision are required")
		return 2
	}
	r := release{dist: *dist, version: *version, revision: *revision}
	var problems []string
	var names []string
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		name := r.binaryName(goos, goarch)
		names = append(names, name)
		desc, errs := r.checkBinary(filepath.Join(r.dist, name), goos, goarch)
		for _, err := range errs {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
		}
		if len(errs) == 0 {
			fmt.Fprintf(stdout, "ok  %-40s %s\n", name, desc)
		}
	}
	sums := r.checksumsName()
	if errs := checkChecksums(filepath.Join(r.dist, sums), r.dist, names); len(errs) > 0 {
		for _, err := range errs {
			problems = append(problems, fmt.Sprintf("%s: %v", sums, err))
		}
	} else {
		fmt.Fprintf(stdout, "ok  %-40s SHA-256 of all %d binaries\n", sums, len(names))
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, "releasecheck:", p)
		}
		fmt.Fprintf(stderr, "releasecheck: %d problems in %s\n", len(problems), r.dist)
		return 1
	}
	fmt.Fprintf(stdout, "release %s (%s): %d binaries checked; nothing was published\n", r.version, r.revision, len(names))
	return 0
}

// release names the files of one release, as GoReleaser does: the version
// without its leading v.
type release struct {
	dist, version, revision string
}

func (r release) binaryName(goos, goarch string) string {
	name := fmt.Sprintf("hosteval_%s_%s_%s", strings.TrimPrefix(r.version, "v"), goos, goarch)
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

func (r release) checksumsName() string {
	return fmt.Sprintf("hosteval_%s_checksums.txt", strings.TrimPrefix(r.version, "v"))
}

// checkBinary returns a one-line description of a good binary, or every
// problem found in it.
func (r release) checkBinary(path, goos, goarch string) (string, []error) {
	b, err := inspect(path)
	if err != nil {
		return "", []error{err}
	}
	errs := b.check(goos, goarch)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", append(errs, err)
	}
	errs = append(errs, r.checkStamped(data)...)
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		errs = append(errs, fmt.Errorf("no Go build info: %w", err))
	} else {
		errs = append(errs, r.checkBuildInfo(bi, goos, goarch)...)
	}
	if len(errs) == 0 && goos == runtime.GOOS && goarch == runtime.GOARCH {
		errs = append(errs, r.checkRuns(path, goos, goarch)...)
	}
	desc := fmt.Sprintf("%s %s, %s, %.1f MB", b.format, b.arch, b.linking(), float64(len(data))/1e6)
	return desc, errs
}

// executable is what a binary's headers say.
type executable struct {
	format string // ELF, Mach-O or PE
	goos   string // the GOOS the format implies
	arch   string // the GOARCH of its machine field, or the raw field when not a Go one
	interp string // ELF: the dynamic loader asked for (a dynamically linked binary)
	libs   []string
}

// inspect reads an executable's headers with the standard library's
// debug/elf, debug/macho and debug/pe.
func inspect(path string) (executable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return executable{}, err
	}
	r := bytes.NewReader(data)
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		f, err := elf.NewFile(r)
		if err != nil {
			return executable{}, fmt.Errorf("bad ELF file: %w", err)
		}
		b := executable{format: "ELF", goos: "linux", arch: f.Machine.String()}
		switch f.Machine {
		case elf.EM_X86_64:
			b.arch = "amd64"
		case elf.EM_AARCH64:
			b.arch = "arm64"
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				s, _ := io.ReadAll(p.Open())
				b.interp = strings.TrimRight(string(s), "\x00")
			}
		}
		if b.libs, err = f.ImportedLibraries(); err != nil {
			return executable{}, fmt.Errorf("bad ELF dynamic section: %w", err)
		}
		return b, nil
	case len(data) >= 4 && slices.Contains([]uint32{macho.Magic32, macho.Magic64}, binary.LittleEndian.Uint32(data)):
		f, err := macho.NewFile(r)
		if err != nil {
			return executable{}, fmt.Errorf("bad Mach-O file: %w", err)
		}
		b := executable{format: "Mach-O", goos: "darwin", arch: f.Cpu.String()}
		switch f.Cpu {
		case macho.CpuAmd64:
			b.arch = "amd64"
		case macho.CpuArm64:
			b.arch = "arm64"
		}
		if b.libs, err = f.ImportedLibraries(); err != nil {
			return executable{}, fmt.Errorf("bad Mach-O load commands: %w", err)
		}
		return b, nil
	case bytes.HasPrefix(data, []byte("MZ")):
		f, err := pe.NewFile(r)
		if err != nil {
			return executable{}, fmt.Errorf("bad PE file: %w", err)
		}
		b := executable{format: "PE", goos: "windows", arch: fmt.Sprintf("machine %#x", f.Machine)}
		switch f.Machine {
		case pe.IMAGE_FILE_MACHINE_AMD64:
			b.arch = "amd64"
		case pe.IMAGE_FILE_MACHINE_ARM64:
			b.arch = "arm64"
		}
		// debug/pe lists no libraries, but names each imported symbol's
		// DLL ("CreateFileW:kernel32.dll").
		syms, err := f.ImportedSymbols()
		if err != nil {
			return executable{}, fmt.Errorf("bad PE import table: %w", err)
		}
		for _, sym := range syms {
			if _, dll, ok := strings.Cut(sym, ":"); ok && !slices.Contains(b.libs, strings.ToLower(dll)) {
				b.libs = append(b.libs, strings.ToLower(dll))
			}
		}
		return b, nil
	}
	return executable{}, errors.New("not an executable: neither ELF, Mach-O nor PE")
}

// check says what is wrong with the binary for goos/goarch.
func (b executable) check(goos, goarch string) []error {
	var errs []error
	if b.goos != goos {
		errs = append(errs, fmt.Errorf("%s file, want a %s executable for %s", b.format, formatOf(goos), goos))
	}
	if b.arch != goarch {
		errs = append(errs, fmt.Errorf("%s for %s, want %s", b.format, b.arch, goarch))
	}
	if b.interp != "" {
		errs = append(errs, fmt.Errorf("dynamically linked (loader %s), want static", b.interp))
	}
	for _, lib := range b.libs {
		if !systemLibrary(b.goos, lib) {
			errs = append(errs, fmt.Errorf("needs the library %s, which not every %s machine has", lib, goos))
		}
	}
	return errs
}

func (b executable) linking() string {
	if b.interp == "" && len(b.libs) == 0 {
		return "static"
	}
	return fmt.Sprintf("system libraries only (%d)", len(b.libs))
}

func formatOf(goos string) string {
	switch goos {
	case "linux":
		return "ELF"
	case "darwin":
		return "Mach-O"
	case "windows":
		return "PE"
	}
	return "?"
}

// systemLibrary says whether every machine of goos has lib. A Go binary
// without cgo needs no library on Linux; on macOS it calls libSystem (and
// the Security framework for certificates), on Windows kernel32.dll (and
// loads the rest itself at run time).
func systemLibrary(goos, lib string) bool {
	switch goos {
	case "darwin":
		return strings.HasPrefix(lib, "/usr/lib/") || strings.HasPrefix(lib, "/System/Library/")
	case "windows":
		return slices.Contains([]string{"kernel32.dll", "ntdll.dll", "advapi32.dll", "ws2_32.dll", "winmm.dll"}, lib)
	}
	return false
}

// checkBuildInfo checks what the Go toolchain recorded of the build.
func (r release) checkBuildInfo(bi *buildinfo.BuildInfo, goos, goarch string) []error {
	var errs []error
	if bi.Path != mainPackage {
		errs = append(errs, fmt.Errorf("main package %s, want %s", bi.Path, mainPackage))
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	want := map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": goos, "GOARCH": goarch}
	for _, k := range []string{"CGO_ENABLED", "-trimpath", "GOOS", "GOARCH"} {
		if settings[k] != want[k] {
			errs = append(errs, fmt.Errorf("built with %s=%q, want %q", k, settings[k], want[k]))
		}
	}
	return errs
}

// checkStamped looks for the version and the revision that -ldflags -X
// wrote into the binary's data: the build info does not record -ldflags
// under -trimpath, and a binary for another platform cannot be run.
func (r release) checkStamped(data []byte) []error {
	var errs []error
	for _, v := range []string{r.version, r.revision} {
		if !bytes.Contains(data, []byte(v)) {
			errs = append(errs, fmt.Errorf("%q is not in the binary: not built with -X %s=...", v, buildinfoPkg))
		}
	}
	return errs
}

// checkRuns runs the binary built for this machine: what it says of itself
// is what a user will see.
func (r release) checkRuns(path, goos, goarch string) []error {
	out, err := exec.Command(path, "version", "-json").Output()
	if err != nil {
		return []error{fmt.Errorf("hosteval version -json: %w", err)}
	}
	var got struct{ Version, Revision, Platform string }
	if err := json.Unmarshal(out, &got); err != nil {
		return []error{fmt.Errorf("hosteval version -json printed %q: %w", out, err)}
	}
	var errs []error
	if got.Version != r.version || got.Revision != r.revision || got.Platform != goos+"/"+goarch {
		errs = append(errs, fmt.Errorf("hosteval version -json says version %q revision %q platform %q, want %q %q %q",
			got.Version, got.Revision, got.Platform, r.version, r.revision, goos+"/"+goarch))
	}
	return errs
}

// checkChecksums checks a sha256sum-style file: every name listed once with
// its file's SHA-256, and nothing else.
func checkChecksums(sumsPath, dir string, names []string) []error {
	f, err := os.Open(sumsPath)
	if err != nil {
		return []error{err}
	}
	defer f.Close()
	var errs []error
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		// "SUM  NAME", or "SUM *NAME" in sha256sum's binary mode.
		sum, name, ok := strings.Cut(sc.Text(), " ")
		if ok && (strings.HasPrefix(name, " ") || strings.HasPrefix(name, "*")) {
			name = name[1:]
		} else {
			ok = false
		}
		if !ok || len(sum) != sha256.Size*2 {
			errs = append(errs, fmt.Errorf("line %d: %q is not \"SHA256  NAME\"", line, sc.Text()))
			continue
		}
		if !slices.Contains(names, name) {
			errs = append(errs, fmt.Errorf("line %d: %s is not a release binary", line, name))
			continue
		}
		if listed[name] {
			errs = append(errs, fmt.Errorf("line %d: %s listed twice", line, name))
		}
		listed[name] = true
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
			continue
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			errs = append(errs, fmt.Errorf("line %d: %s has SHA-256 %x, the file says %s", line, name, got, sum))
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if !listed[n] {
			errs = append(errs, fmt.Errorf("%s is not listed", n))
		}
	}
	return errs
}
