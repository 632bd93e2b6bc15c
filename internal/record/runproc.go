package record

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RunProcess identifies the process that writes a run, so that a reader
// can tell a run still being written from one whose process died (killed,
// out of memory) without saying so: run.json without a finished time is
// either. A pid alone is reused; with its start time (in clock ticks
// since boot, /proc/PID/stat) and the boot's id it names one process.
type RunProcess struct {
	PID int `json:"pid"`
	// Start is the process's start time in clock ticks since boot, on
	// Linux; zero elsewhere.
	Start uint64 `json:"start,omitempty"`
	// Boot is the kernel's boot id, on Linux: a reboot ends every run.
	Boot string `json:"boot,omitempty"`
	// Host is the machine's name: a run written on another machine (a
	// results folder copied or shared) cannot be checked here.
	Host string `json:"host,omitempty"`
}

// ThisProcess describes the calling process.
func ThisProcess() *RunProcess {
	p := &RunProcess{PID: os.Getpid()}
	p.Host, _ = os.Hostname()
	p.Start, _ = startTime(p.PID)
	p.Boot = bootID()
	return p
}

// Alive reports whether the process is still running, and whether that
// can be told here at all (known is false for a run of another machine,
// or where the platform cannot say).
func (p *RunProcess) Alive() (alive, known bool) {
	if p == nil || p.PID <= 0 {
		return false, false
	}
	if host, _ := os.Hostname(); p.Host != "" && host != p.Host {
		return false, false
	}
	if p.Boot != "" {
		boot := bootID()
		if boot == "" {
			return false, false
		}
		if boot != p.Boot {
			return false, true // the machine restarted since
		}
	}
	if p.Start != 0 {
		start, ok := startTime(p.PID)
		if !ok {
			return false, procReadable()
		}
		return start == p.Start, true
	}
	return pidAlive(p.PID)
}

// startTime reads a process's start time, in clock ticks since boot, from
// /proc/PID/stat (Linux): its 22nd field, counted after the command's
// name, which is in parentheses and may hold spaces and parentheses.
func startTime(pid int) (uint64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStartTime(string(data))
}

func parseStartTime(stat string) (uint64, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	// After the name: state (field 3) ... starttime (field 22).
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(fields[19], 10, 64)
	return n, err == nil
}

// bootID is the kernel's boot id, or "" where there is none to read.
func bootID() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// procReadable reports whether /proc answers here: a process missing from
// it is then known to be gone.
func procReadable() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// Incomplete says why a run holds fewer cases than it set out to, as
// every report, gate, comparison, merge and view puts it ("116 of 200
// cases recorded; the run did not finish"), or "" for a run that
// finished with every case recorded. records is how many cases it holds.
// A run with no run.json cannot be told from a whole one.
func Incomplete(info *RunInfo, records int) string {
	if info == nil {
		return ""
	}
	var why string
	switch {
	case info.Interrupted:
		why = "the run was interrupted"
	case info.Finished.IsZero():
		if alive, _ := info.Process.Alive(); alive {
			why = "the run has not finished: it is still running"
		} else {
			why = "the run did not finish"
		}
	case len(info.NotRecorded) > 0:
		why = fmt.Sprintf("the run stopped: %d %s could not be written", len(info.NotRecorded), plural(len(info.NotRecorded), "record", "records"))
	case info.Cases > 0 && records < info.Cases:
		why = "records are missing"
	default:
		return ""
	}
	if info.Cases > 0 {
		return fmt.Sprintf("%d of %d %s recorded; %s", records, info.Cases, plural(info.Cases, "case", "cases"), why)
	}
	return fmt.Sprintf("%d %s recorded; %s", records, plural(records, "case", "cases"), why)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
