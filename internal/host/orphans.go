package host

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Orphans: a server's process group is not all it can leave behind. A
// helper it starts in a session of its own (setsid, a daemon's double
// fork) is in no group the host signals, survives the server, and, when it
// holds the server's stderr, keeps the host waiting for that stream's end
// for as long as it lives.
//
// So on Linux hosteval is a child subreaper (BecomeSubreaper, called by
// the command): a process whose parent dies is handed to hosteval instead
// of to init, so it stays visible. Each server is started with a tag of its
// own in its environment (tagVar), which its descendants inherit. When the
// server stops, the host ends (SIGKILL) and reaps every process of its
// tree: those it saw under the server before stopping it (the children of
// each process's main thread, /proc/PID/task/PID/children, and of every
// thread when hosteval is not a subreaper: see treeBeforeStop for why
// not always), those handed to hosteval that carry the server's tag, and
// their own. The kernel hands an orphan to the subreaper's first live thread,
// its main thread (which a Go program never ends), so every stop reads
// that thread's children, one small file (7 µs, BenchmarkHandedOver), and
// looks closer only at a child there that is not one of the run's
// servers: a helper orphaned at once by a double fork is found even when
// it holds none of the server's streams. When the server's stderr does
// not end once its group is killed, or the server died first, the
// children of every thread of hosteval are read as well (about a
// millisecond on a busy machine), again until they are gone. What it
// found is logged (host.orphans) and counted on the server's record
// (orphans).
//
// A process group would not do: a helper that calls setsid leaves it, and
// a server cannot be kept from doing so. Process groups still stop what
// stays in them (npx's node), and the tree covers a helper whose parent is
// alive without the subreaper (it is then found before its parent dies);
// only a helper already orphaned when hosteval is not a subreaper (other
// systems, or the prctl refused) escapes, as before.

// tagVar is the environment variable that carries a server's tag.
const tagVar = "HOSTEVAL_SERVER_TAG"

// newTag returns a tag no other server of this machine has.
func newTag() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// treeProc is a process of a server's tree, named by pid and start time
// (a pid may be taken again by the time it is signalled).
type treeProc struct {
	pid   int
	start uint64
}

// orphan is a process of a server's tree the host ended when the server
// stopped: one outside the server's process group, or left by it.
type orphan struct {
	pid     int
	command string
}

// orphansText says what the host found, in a log line's words.
func orphansText(found []orphan) string {
	var each []string
	for _, o := range found {
		each = append(each, strconv.Itoa(o.pid)+" "+o.command)
	}
	n := len(found)
	what := "process"
	if n > 1 {
		what = "processes"
	}
	return fmt.Sprintf("the server left %d %s running outside its process group (%s): the host ended %s",
		n, what, strings.Join(each, ", "), map[bool]string{true: "it", false: "them"}[n == 1])
}
