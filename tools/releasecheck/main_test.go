package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The test binary itself is a real executable of this machine's format.
func TestInspectRealBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := inspect(self)
	if err != nil {
		t.Fatalf("inspect(%s): %v", self, err)
	}
	if b.goos != runtime.GOOS || b.arch != runtime.GOARCH {
		t.Errorf("inspect says %s/%s (%s), want %s/%s", b.goos, b.arch, b.format, runtime.GOOS, runtime.GOARCH)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	if other == "" {
		t.Skipf("no other release architecture for %s", runtime.GOARCH)
	}
	errs := b.check(runtime.GOOS, other)
	if !containsErr(errs, "want "+other) {
		t.Errorf("check(%s/%s) of a %s binary = %v, want a wrong-architecture error", runtime.GOOS, other, runtime.GOARCH, errs)
	}
	wrongOS := map[string]string{"linux": "windows", "darwin": "linux", "windows": "darwin"}[runtime.GOOS]
	if errs := b.check(wrongOS, runtime.GOARCH); !containsErr(errs, "executable for "+wrongOS) {
		t.Errorf("check(%s/%s) of a %s binary = %v, want a wrong-format error", wrongOS, runtime.GOARCH, runtime.GOOS, errs)
	}
}

func TestInspectNotAnExecutable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosteval")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := inspect(path); err == nil || !strings.Contains(err.Error(), "not an executable") {
		t.Errorf("inspect(a shell script) = %v, want \"not an executable\"", err)
	}
}

func TestCheckPolicy(t *testing.T) {
	tests := []struct {
		name    string
		b       executable
		target  string
		wantErr []string // substrings, one per error, in order
	}{
		{"static linux", executable{format: "ELF", goos: "linux", arch: "arm64"}, "linux/arm64", nil},
		{"dynamic linux", executable{format: "ELF", goos: "linux", arch: "amd64", interp: "/lib64/ld-linux-x86-64.so.2", libs: []string{"libc.so.6"}},
			"linux/amd64", []string{"dynamically linked (loader /lib64/ld-linux-x86-64.so.2)", "needs the library libc.so.6"}},
		{"darwin with libSystem and Security", executable{format: "Mach-O", goos: "darwin", arch: "arm64",
			libs: []string{"/usr/lib/libSystem.B.dylib", "/System/Library/Frameworks/Security.framework/Versions/A/Security"}}, "darwin/arm64", nil},
		{"darwin with a Homebrew library", executable{format: "Mach-O", goos: "darwin", arch: "amd64",
			libs: []string{"/opt/homebrew/lib/libsqlite3.dylib"}}, "darwin/amd64", []string{"needs the library /opt/homebrew/lib/libsqlite3.dylib"}},
		{"windows with kernel32", executable{format: "PE", goos: "windows", arch: "amd64", libs: []string{"kernel32.dll"}}, "windows/amd64", nil},
		{"windows with the C runtime", executable{format: "PE", goos: "windows", arch: "amd64", libs: []string{"msvcrt.dll"}},
			"windows/amd64", []string{"needs the library msvcrt.dll"}},
		{"a 386 binary", executable{format: "PE", goos: "windows", arch: "machine 0x14c"}, "windows/amd64", []string{"PE for machine 0x14c, want amd64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goos, goarch, _ := strings.Cut(tt.target, "/")
			errs := tt.b.check(goos, goarch)
			if len(errs) != len(tt.wantErr) {
				t.Fatalf("check = %v, want %d errors %q", errs, len(tt.wantErr), tt.wantErr)
			}
			for i, want := range tt.wantErr {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], want)
				}
			}
		})
	}
}

func TestCheckChecksums(t *testing.T) {
	dir := t.TempDir()
	names := []string{"hosteval_1.2.3_linux_amd64", "hosteval_1.2.3_windows_arm64.exe"}
	sums := map[string]string{}
	for _, n := range names {
		data := []byte("binary " + n)
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o755); err != nil {
			t.Fatal(err)
		}
		sums[n] = fmt.Sprintf("%x", sha256.Sum256(data))
	}
	bad := strings.Repeat("0", 64)
	tests := []struct {
		name    string
		file    string
		wantErr []string
	}{
		{"all right", sums[names[0]] + "  " + names[0] + "\n" + sums[names[1]] + " *" + names[1] + "\n", nil},
		{"a wrong sum", sums[names[0]] + "  " + names[0] + "\n" + bad + "  " + names[1] + "\n",
			[]string{"line 2: hosteval_1.2.3_windows_arm64.exe has SHA-256 " + sums[names[1]] + ", the file says " + bad}},
		{"one missing", sums[names[0]] + "  " + names[0] + "\n", []string{"hosteval_1.2.3_windows_arm64.exe is not listed"}},
		{"a stranger and a bad line", sums[names[0]] + "  " + names[0] + "\n" + sums[names[1]] + "  " + names[1] + "\n" +
			bad + "  evil.sh\nnonsense\n", []string{"line 3: evil.sh is not a release binary", `line 4: "nonsense" is not`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "checksums.txt")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			errs := checkChecksums(path, dir, names)
			if len(errs) != len(tt.wantErr) {
				t.Fatalf("checkChecksums = %v, want %d errors %q", errs, len(tt.wantErr), tt.wantErr)
			}
			for i, want := range tt.wantErr {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], want)
				}
			}
		})
	}
}

func containsErr(errs []error, s string) bool {
	for _, err := range errs {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

func TestCheckStamped(t *testing.T) {
	r := release{version: "v1.2.3", revision: "75b8e07f9f16b6cf8e8a423d1c4316ba403c0aa9"}
	if errs := r.checkStamped([]byte("..v1.2.3..75b8e07f9f16b6cf8e8a423d1c4316ba403c0aa9..")); len(errs) != 0 {
		t.Errorf("checkStamped of a stamped binary = %v, want none", errs)
	}
	errs := r.checkStamped([]byte("..v1.2.4..75b8e07f9f16b6cf8e8a423d1c4316ba403c0aa9.."))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"v1.2.3" is not in the binary`) {
		t.Errorf("checkStamped of a binary without the version = %v, want one error naming it", errs)
	}
}
