package record

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestParseStartTime(t *testing.T) {
	tests := []struct {
		stat string
		want uint64
		ok   bool
	}{
		{"4242 (hosteval) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 8 0 987654 100 200", 987654, true},
		// A name with spaces and parentheses: the fields count from the last ')'.
		{"77 (a b) (c)) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", 5, true},
		{"77 (a) R 1 2", 0, false},
		{"garbage", 0, false},
	}
	for _, tt := range tests {
		if got, ok := parseStartTime(tt.stat); got != tt.want || ok != tt.ok {
			t.Errorf("parseStartTime(%q) = %d, %v; want %d, %v", tt.stat, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRunProcessAlive: this process is alive; a child that exited is not,
// also when its pid is taken again (its start time differs); a run of
// another machine cannot be told.
func TestRunProcessAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the start time is read from /proc")
	}
	if alive, known := ThisProcess().Alive(); !alive || !known {
		t.Errorf("this process: alive %v, known %v; want both", alive, known)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := &RunProcess{PID: cmd.Process.Pid, Start: 1, Boot: bootID()}
	if alive, known := gone.Alive(); alive || !known {
		t.Errorf("an exited child: alive %v, known %v; want not alive, known", alive, known)
	}
	reused := ThisProcess()
	reused.Start++ // this pid, another process
	if alive, known := reused.Alive(); alive || !known {
		t.Errorf("a reused pid: alive %v, known %v; want not alive, known", alive, known)
	}
	rebooted := ThisProcess()
	rebooted.Boot = "another-boot"
	if alive, known := rebooted.Alive(); alive || !known {
		t.Errorf("another boot: alive %v, known %v; want not alive, known", alive, known)
	}
	elsewhere := ThisProcess()
	elsewhere.Host = "another-machine.example"
	if alive, known := elsewhere.Alive(); alive || known {
		t.Errorf("another machine: alive %v, known %v; want unknown", alive, known)
	}
}

func TestIncomplete(t *testing.T) {
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dead := &RunProcess{PID: 1 << 30, Start: 1, Boot: bootID()}
	tests := []struct {
		name    string
		info    *RunInfo
		records int
		want    string
	}{
		{"no run.json", nil, 116, ""},
		{"whole", &RunInfo{Started: started, Finished: started.Add(time.Minute), Cases: 200}, 200, ""},
		{"killed", &RunInfo{Started: started, Cases: 200, Process: dead}, 116, "116 of 200 cases recorded; the run did not finish"},
		{"still running", &RunInfo{Started: started, Cases: 200, Process: ThisProcess()}, 116, "116 of 200 cases recorded; the run has not finished: it is still running"},
		{"interrupted", &RunInfo{Started: started, Finished: started, Interrupted: true, Cases: 200}, 116, "116 of 200 cases recorded; the run was interrupted"},
		{"a full disk", &RunInfo{Started: started, Finished: started, Cases: 200, NotRecorded: []string{"a", "b"}}, 116, "116 of 200 cases recorded; the run stopped: 2 records could not be written"},
		{"records lost", &RunInfo{Started: started, Finished: started, Cases: 200}, 199, "199 of 200 cases recorded; records are missing"},
		{"an old run.json", &RunInfo{Started: started}, 1, "1 case recorded; the run did not finish"},
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		tests = tests[:3] // the rest tell alive from dead by /proc
	}
	for _, tt := range tests {
		if got := Incomplete(tt.info, tt.records); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
