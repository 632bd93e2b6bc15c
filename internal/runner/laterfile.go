package runner

import (
	"fmt"
	"os"
)

// laterFile is a file created in the background once its folder is made
// (the run folder, made while the servers start): a write before then
// waits for it, and a write after a failed create fails with its error,
// which the run reports (sharedServers.logErr) before any case starts.
type laterFile struct {
	created chan struct{}
	f       *os.File
	err     error
}

// createLater creates path once made (the folder's) returns nil.
func createLater(path string, made func() error) *laterFile {
	l := &laterFile{created: make(chan struct{})}
	go func() {
		defer close(l.created)
		if l.err = made(); l.err != nil {
			return
		}
		if l.f, l.err = os.Create(path); l.err != nil {
			l.err = fmt.Errorf("create shared server log: %w", l.err)
		}
	}()
	return l
}

// wait waits for the create and says what failed.
func (l *laterFile) wait() error {
	<-l.created
	return l.err
}

func (l *laterFile) Write(p []byte) (int, error) {
	if err := l.wait(); err != nil {
		return 0, err
	}
	return l.f.Write(p)
}

func (l *laterFile) Close() error {
	if l.wait() != nil {
		return nil
	}
	return l.f.Close()
}
