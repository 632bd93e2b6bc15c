package host

import (
	"sync"
	"syscall"
)

// Reaper records the process groups of the stdio servers that are running,
// so that whoever runs many hosts can kill every one of them at once, their
// children and grandchildren included: a second Ctrl-C, which cannot wait
// for each host to close. Pass one in Options (and to NewPool through its
// Options); a nil Reaper records nothing. Safe for concurrent use.
type Reaper struct {
	mu     sync.Mutex
	groups map[int]bool
}

// NewReaper returns an empty Reaper.
func NewReaper() *Reaper {
	return &Reaper{groups: map[int]bool{}}
}

func (r *Reaper) add(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups[pgid] = true
}

func (r *Reaper) remove(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.groups, pgid)
}

// Running returns how many process groups are recorded.
func (r *Reaper) Running() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.groups)
}

// KillAll sends SIGKILL to every recorded process group and returns how many
// it signalled. The hosts still reap their own processes as they close; a
// group stays recorded until then.
func (r *Reaper) KillAll() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for pgid := range r.groups {
		if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
